#include "cli/calibrate_host.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/host_steps.hpp"
#include "cli/calibrate_common.hpp"
#include "cli/csv.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using calibration::HostRow;
using models::InputError;

namespace {

std::vector<HostRow> read_host_rows(const CsvTable& t) {
  const auto c_gpu = t.require_column("gpu"), c_layout = t.require_column("layout"), c_n = t.require_column("devices");
  const auto c_rank = t.require_column("rank"), c_tokens = t.require_column("tokens"), c_pass = t.require_column("pass");
  const auto c_ms = t.require_column("wall_ms");
  std::vector<HostRow> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    HostRow r;
    r.gpu = t.text(i, c_gpu);
    r.layout = t.text(i, c_layout);
    r.pass = t.text(i, c_pass);
    if (r.pass != "fwd" && r.pass != "bwd")
      throw InputError(t.file, t.lines[i], "pass", "expected fwd or bwd, got '" + r.pass + "'");
    r.devices = t.parsed(i, c_n, [](std::string_view v) { return models::parse_int_in(v, "devices", 1, 4096); });
    r.rank = t.parsed(i, c_rank, [&](std::string_view v) { return models::parse_int_in(v, "rank", 0, r.devices - 1); });
    r.tokens = t.positive_int(i, c_tokens);
    r.seconds = t.number(i, c_ms) / 1e3;
    if (!(r.seconds > 0)) throw InputError(t.file, t.lines[i], "wall_ms", "expected a positive time");
    r.line = t.lines[i];
    rows.push_back(r);
  }
  if (rows.empty()) throw InputError(t.file, 0, "rows", "no runs in the file");
  return rows;
}

std::string pct(double v) { return std::isnan(v) ? std::string("n/a") : fmt::format("{:.1f} %", 100 * v); }

}  // namespace

int calibrate_from_host_steps(const cxxopts::ParseResult& a, const models::Catalog& catalog) {
  const auto file = a["from-host-steps"].as<std::string>();
  const auto table = read_csv(file);
  auto rows = read_host_rows(table);
  const auto impl_name = a["impl"].as<std::string>().empty() ? std::string("ring-flash-attn") : a["impl"].as<std::string>();
  const auto impl = catalog.implementation(impl_name);
  if (impl.protocol.ring_steps.empty())
    throw InputError({}, 0, "impl", "implementation " + impl.name + " has no ring step plan (configs/ring_steps/) to count its steps and calls");
  calibration::HostFit fit;
  try {
    fit = calibration::fit_host_steps(rows, impl.protocol.ring_steps);
  } catch (const InputError& e) {
    throw e.located(file, e.line());
  }
  std::string out = fmt::format(
      "ringsim calibrate: host time per ring step and per call of {} from {} ({} runs of {}); held out: leave one run out, "
      "leave one layout out\n",
      impl.name, file, fit.rows.size(), fit.rows.front().gpu);
  std::string notes;
  for (const auto& p : fit.passes) {
    out += fmt::format("  {}: step {:.1f} +- {:.1f} us, call {:.1f} +- {:.1f} us   {} runs   in-sample {}   held-out {}\n", p.pass,
                       p.step_s * 1e6, p.step_se * 1e6, p.call_s * 1e6, p.call_se * 1e6, p.rows, pct(p.in_sample_mape),
                       pct(p.held_out_mape));
    std::string layouts;
    for (const auto& l : p.by_layout)
      layouts += fmt::format("{}{} {}", layouts.empty() ? "" : ", ", l.layout,
                             l.identified ? pct(l.held_out_mape) : std::string("not identified without it"));
    out += "    leave one layout out: " + layouts + "\n";
    notes += fmt::format("{}{}: {:.4g} s per step +- {:.2g}, {:.4g} s per call +- {:.2g} (leave-one-run-out MAPE {:.1f}%)",
                         notes.empty() ? "" : "; ", p.pass, p.step_s, p.step_se, p.call_s, p.call_se, 100 * p.held_out_mape);
  }
  if (const auto path = a["output"].as<std::string>(); !path.empty()) {
    const auto hw_name = a["hardware"].as<std::string>();
    if (hw_name.empty()) throw InputError({}, 0, "hardware", "-o needs --hardware: whose profile takes the host terms");
    const auto hw = catalog.hardware(hw_name);
    auto p = catalog.profile(a["profile"].as<std::string>(), hw, impl.name);
    for (const auto& f : fit.passes) {
      (f.pass == "fwd" ? p.host_step_s : p.host_bwd_step_s) = f.step_s;
      (f.pass == "fwd" ? p.host_call_s : p.host_bwd_call_s) = f.call_s;
    }
    const auto& machine = fit.rows.front().gpu;
    p.provenance.notes += fmt::format(" Host terms ({}) measured on {} ({}){}.", notes, machine, file,
                                      a["note"].as<std::string>().empty() ? "" : ": " + a["note"].as<std::string>());
    p.validate(file);
    write_output(path, p.to_json().dump(2) + "\n");
  }
  if (const auto path = a["report"].as<std::string>(); !path.empty()) {
    std::string report = csv_line({"gpu", "layout", "devices", "rank", "tokens", "pass", "steps", "calls", "measured_s",
                                   "fitted_s", "held_out_s"});
    for (std::size_t i = 0; i < fit.rows.size(); ++i) {
      const auto& r = fit.rows[i];
      report += csv_line({r.gpu, r.layout, std::to_string(r.devices), std::to_string(r.rank), std::to_string(r.tokens), r.pass,
                          fmt::format("{:g}", r.steps), fmt::format("{:g}", r.calls), fmt::format("{:.6g}", r.seconds),
                          fmt::format("{:.6g}", fit.fitted_s[i]), fmt::format("{:.6g}", fit.held_out_s[i])});
    }
    write_output(path, report);
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace ringsim::cli
