#include "cli/predict_batch.hpp"

#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/csv.hpp"
#include "cli/predict_intervals.hpp"
#include "cli/predict_json_csv.hpp"
#include "cli/scenario_options.hpp"
#include "models/analytic/analytic.hpp"
#include "models/io/error.hpp"

namespace ringsim::cli {

using models::InputError;

std::string run_batch(const std::string& path, const std::string& format, const models::Catalog& catalog,
                      const cxxopts::ParseResult& args, Engine engine) {
  const CsvTable t = read_csv(path);
  const ScenarioColumns cols(t);
  const auto c_tq = t.column("tile_q");
  const auto c_tk = t.column("tile_k");
  const auto c_layout = t.column("layout");
  const auto c_mask = t.column("mask");
  const auto c_profile = t.column("profile");
  const auto c_batch = t.column("batch");
  if (c_tq.has_value() != c_tk.has_value())
    throw InputError(path, 1, c_tq ? "tile_k" : "tile_q", "tile_q and tile_k must be given together");
  // --cp and --docs override every row's: parsed once, before the rows.
  std::optional<models::Strategy> cp_flag;
  if (args.count("cp")) {
    if (args["cp"].as<std::string>().find(',') != std::string::npos)
      throw InputError({}, 0, "cp", "with --scenarios, --cp names one strategy (use a cp column to vary it)");
    cp_flag = models::Strategy::parse(args["cp"].as<std::string>());
  }
  std::optional<models::DocumentsSpec> docs_flag;
  if (args.count("docs") && !args["docs"].as<std::string>().empty())
    docs_flag = models::DocumentsSpec::parse(args["docs"].as<std::string>());
  const models::LayoutSpec contiguous = models::LayoutSpec::parse("contiguous");
  const models::LayoutSpec striped_layout = models::LayoutSpec::parse("striped");
  const models::LayoutSpec zigzag = models::LayoutSpec::parse("zigzag");

  const std::vector<std::string> extra = {"pred_tms",
                                          "pred_speedup",
                                          "pred_speedup_lo",
                                          "pred_speedup_hi",
                                          "pred_ring_step_s",
                                          "pred_ring_step_s_lo",
                                          "pred_ring_step_s_hi",
                                          "pred_striped_step_s",
                                          "pred_striped_step_s_lo",
                                          "pred_striped_step_s_hi",
                                          "pred_ring_tokens_per_s",
                                          "pred_striped_tokens_per_s",
                                          "pred_layout_step_s",
                                          "pred_tile",
                                          "pred_profile",
                                          "pred_profile_calibrated",
                                          "pred_engine",
                                          "pred_impl"};
  std::string out;
  nlohmann::json rows = nlohmann::json::array();
  if (format == "csv") {
    auto h = t.header;
    h.insert(h.end(), extra.begin(), extra.end());
    out += csv_line(h);
  }
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    std::vector<std::string> values;
    models::ScenarioSpec spec = cols.spec(t, i);
    if (c_batch) spec.batch = t.positive_int(i, *c_batch);
    if (c_tq) spec.tile = models::TileShape{t.positive_int(i, *c_tq), t.positive_int(i, *c_tk)};
    if (c_mask) spec.mask = typed_cell(t, i, *c_mask, &models::MaskSpec::parse);
    spec.profile = t.text_or(i, c_profile, "");
    if (!args["profile"].as<std::string>().empty()) spec.profile = args["profile"].as<std::string>();
    if (!args["impl"].as<std::string>().empty()) spec.impl = args["impl"].as<std::string>();
    if (cp_flag) spec.cp = *cp_flag;
    if (args.count("docs")) spec.docs = docs_flag;
    std::optional<models::LayoutSpec> layout;
    if (c_layout && !t.text_or(i, c_layout, "").empty()) layout = typed_cell(t, i, *c_layout, &models::LayoutSpec::parse);
    try {
      const auto hw = spec.hardware_file.empty() ? catalog.hardware(spec.hardware) : models::Hardware::load_file(spec.hardware_file);
      // Ring and striped run on one implementation, as the contract's speedup defines them; a
      // row of another strategy gets its own step (pred_layout_step_s) from its implementation
      // beside that ring baseline.
      auto ring_spec = spec;
      const bool ring_row = spec.cp.kind == models::StrategyKind::Ring;
      if (!ring_row) {
        ring_spec.cp = models::Strategy{};
        if (!spec.impl.empty() && !catalog.implementation(spec.impl).offers_strategy(ring_spec.cp)) ring_spec.impl.clear();
      }
      std::vector<models::LayoutSpec> compared = {contiguous, striped_layout};
      if (layout && ring_row) compared.push_back(*layout);
      ring_spec.impl = catalog.choose_implementation(ring_spec, hw, compared);
      std::vector<LayoutResult> pair;
      pair.push_back(run_one(ring_spec, contiguous, catalog, engine));
      pair.push_back(run_one(ring_spec, striped_layout, catalog, engine));
      with_speedups(pair);
      const auto& ring = pair[0];
      const auto& striped = pair[1];
      // pred_speedup is ring / striped: the interval of striped's speedup over the first layout.
      const auto& sp_i = striped.speedup;
      double layout_step = striped.prediction.step_s;
      if (layout || !ring_row) {
        auto row_spec = ring_row ? ring_spec : spec;
        const auto row_layout = layout ? *layout : zigzag;
        if (!ring_row) row_spec.impl = catalog.choose_implementation(row_spec, hw, {row_layout});
        const auto own = run_one(row_spec, row_layout, catalog, engine);
        layout_step = own.prediction.step_s;
      }
      const double tms = models::theoretical_max_speedup(ring.scenario);
      const double speedup = ring.prediction.step_s / striped.prediction.step_s;
      values = {fmt::format("{:.4f}", tms),
                fmt::format("{:.4f}", speedup),
                fmt_opt(sp_i.available, sp_i.lo, "{:.4f}"),
                fmt_opt(sp_i.available, sp_i.hi, "{:.4f}"),
                fmt::format("{:.6g}", ring.prediction.step_s),
                fmt_opt(ring.step.available, ring.step.lo),
                fmt_opt(ring.step.available, ring.step.hi),
                fmt::format("{:.6g}", striped.prediction.step_s),
                fmt_opt(striped.step.available, striped.step.lo),
                fmt_opt(striped.step.available, striped.step.hi),
                fmt::format("{:.6g}", ring.prediction.tokens_per_s),
                fmt::format("{:.6g}", striped.prediction.tokens_per_s),
                fmt::format("{:.6g}", layout_step),
                fmt::format("{}x{}", ring.scenario.tile.q, ring.scenario.tile.k),
                ring.scenario.profile.name,
                ring.scenario.profile.provenance.calibrated ? "true" : "false",
                engine_name(engine),
                ring.scenario.impl.name};
    } catch (const InputError& e) {
      throw InputError(path, t.lines[i], e.field(), e.message());
    }
    if (format == "csv") {
      auto r = row;
      r.insert(r.end(), values.begin(), values.end());
      out += csv_line(r);
    } else {
      nlohmann::json j;
      for (std::size_t c = 0; c < t.header.size(); ++c) j[t.header[c]] = row[c];
      for (std::size_t c = 0; c < extra.size(); ++c) j[extra[c]] = values[c];
      rows.push_back(j);
    }
  }
  if (format == "json") return rows.dump(2) + "\n";
  if (format == "table") {
    // A readable view of the same rows.
    std::string s;
    for (std::size_t c = 0; c < t.header.size(); ++c) s += fmt::format("{:>12} ", t.header[c]);
    s += fmt::format("{:>9} {:>13} {:>11}\n", "pred_tms", "pred_speedup", "pred_engine");
    for (const auto& r : rows) {
      for (std::size_t c = 0; c < t.header.size(); ++c) s += fmt::format("{:>12} ", r[t.header[c]].get<std::string>());
      s += fmt::format("{:>9} {:>13} {:>11}\n", r["pred_tms"].get<std::string>(), r["pred_speedup"].get<std::string>(),
                       r["pred_engine"].get<std::string>());
    }
    return s;
  }
  return out;
}

}  // namespace ringsim::cli
