#include "cli/calibrate_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/kernel_curves.hpp"
#include "cli/calibrate_common.hpp"
#include "cli/csv.hpp"
#include "cli/progress.hpp"
#include "models/io/error.hpp"
#include "models/io/names.hpp"
#include "models/io/parse.hpp"
#include "models/implementations/kernel_spec.hpp"

namespace ringsim::cli {

using calibration::KernelPass;
using calibration::KernelRow;
using models::InputError;

namespace {

// Why a fitted parameter carries no standard error (the fit could not move it, or the rows do not
// tell it), said rather than printed as nan; empty when it has one.
std::string no_error_reason(const calibration::KernelParameterFit& p, bool brief) {
  if (p.at_bound) return "at its bound";
  if (!std::isfinite(p.std_error)) return brief ? "not identified" : "not identified by these rows";
  return {};
}

bool truth(const CsvTable& t, std::size_t i, std::size_t c) {
  const auto v = t.text(i, c);
  if (v == "1" || v == "true") return true;
  if (v == "0" || v == "false") return false;
  throw InputError(t.file, t.lines[i], t.header[c], "expected true/false or 1/0, got '" + v + "'");
}

// A benchmark chart (data/components/kernels/flash_*.csv): one (method, pass, shape) per row, its
// TFLOP/s as printed (or, where the source printed times, time_ms); self-attention, q_len = k_len
// = seqlen; an optional kv_heads column for grouped-query rows (else n_heads). Only `method`'s
// rows; the shape group is the sequence length, or where every row has one length (a benchmark at one
// length, as FlashAttention's issue #1310 on H20) the row's own shape (head dim and mask): a handful of
// rows, each held out in turn.
std::vector<KernelRow> chart_rows(const CsvTable& t, const std::string& method) {
  const auto c_gpu = t.require_column("gpu"), c_method = t.require_column("method"), c_pass = t.require_column("pass");
  const auto c_causal = t.require_column("causal"), c_d = t.require_column("head_dim"), c_h = t.require_column("n_heads");
  const auto c_s = t.require_column("seqlen"), c_b = t.require_column("batch");
  const auto c_tflops = t.column("tflops"), c_ms = t.column("time_ms"), c_kv = t.column("kv_heads");
  if (!c_tflops && !c_ms) throw InputError(t.file, 1, "tflops", "a chart needs a tflops or a time_ms column");
  std::vector<KernelRow> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (t.text(i, c_method) != method) continue;
    KernelRow r;
    r.gpu = t.text(i, c_gpu);
    const auto pass = t.text(i, c_pass);
    if (pass == "fwd") r.pass = KernelPass::Fwd;
    else if (pass == "bwd") r.pass = KernelPass::Bwd;
    else if (pass == "fwd_bwd") r.pass = KernelPass::FwdBwd;
    else throw InputError(t.file, t.lines[i], "pass", "expected fwd, bwd or fwd_bwd, got '" + pass + "'");
    r.causal = truth(t, i, c_causal);
    r.head_dim = t.positive_int(i, c_d);
    r.heads = r.kv_heads = t.positive_int(i, c_h);
    if (c_kv) r.kv_heads = t.positive_int(i, *c_kv);
    r.q_len = r.k_len = t.positive_int(i, c_s);
    r.batch = t.positive_int(i, c_b);
    r.line = t.lines[i];
    const bool timed = c_ms && !t.text_or(i, c_ms, "").empty();
    if (timed) {
      r.seconds = t.number(i, *c_ms) / 1e3;
    } else {
      // A zero rate would be an infinite time (and every percentage of the fit nan).
      const double tflops = t.number(i, *c_tflops);
      if (!(tflops > 0)) throw InputError(t.file, r.line, "tflops", fmt::format("expected a positive TFLOP/s, got {:g}", tflops));
      r.seconds = calibration::seconds_from_tflops(tflops, r.pass, r);
    }
    calibration::check_kernel_row(
        r, {"batch", "n_heads", c_kv ? "kv_heads" : "n_heads", "head_dim", "seqlen", "seqlen", timed ? "time_ms" : "tflops"},
        t.file);
    r.group = "seqlen " + std::to_string(r.q_len);
    rows.push_back(r);
  }
  const bool one_length =
      std::all_of(rows.begin(), rows.end(), [&](const KernelRow& r) { return r.q_len == rows.front().q_len; });
  if (one_length)
    for (auto& r : rows) r.group = "head dim " + std::to_string(r.head_dim) + (r.causal ? " causal" : " full");
  return rows;
}

// A single-GPU kernel profile (data/components/kernels/ultraattn_*.csv): forward and backward
// microseconds per (q_len, k_len, batch, heads, head dim, causal); the shape group is (q_len, k_len).
std::vector<KernelRow> profile_rows(const CsvTable& t) {
  const auto c_gpu = t.require_column("hardware"), c_sq = t.require_column("sq"), c_skv = t.require_column("skv");
  const auto c_b = t.require_column("batch"), c_h = t.require_column("heads_q"), c_kv = t.require_column("heads_kv");
  const auto c_d = t.require_column("head_dim"), c_causal = t.require_column("causal");
  const auto c_f = t.require_column("fwd_us"), c_bw = t.require_column("bwd_us");
  std::vector<KernelRow> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    KernelRow r;
    r.gpu = t.text(i, c_gpu);
    r.q_len = t.positive_int(i, c_sq);
    r.k_len = t.positive_int(i, c_skv);
    r.batch = t.positive_int(i, c_b);
    r.heads = t.positive_int(i, c_h);
    r.kv_heads = t.positive_int(i, c_kv);
    r.head_dim = t.positive_int(i, c_d);
    r.causal = truth(t, i, c_causal);
    r.group = std::to_string(r.q_len) + "x" + std::to_string(r.k_len);
    r.line = t.lines[i];
    for (const auto& [pass, col] : {std::pair{KernelPass::Fwd, c_f}, std::pair{KernelPass::Bwd, c_bw}}) {
      KernelRow x = r;
      x.pass = pass;
      x.seconds = t.number(i, col) / 1e6;
      calibration::check_kernel_row(x, {"batch", "heads_q", "heads_kv", "head_dim", "sq", "skv", t.header[col]}, t.file);
      rows.push_back(x);
    }
  }
  return rows;
}

std::string pct(double v) { return fmt::format("{:.1f} %", 100 * v); }

// A profile's predictions of the rows, scored per pass as a fit's held-out rows are (fitted_s and
// held_out_s both the prediction: nothing was fitted on them).
calibration::KernelCurveFit score_kernel_rows(const std::vector<KernelRow>& rows, const models::KernelSpec& kernel,
                                              const models::Hardware& hw, const models::Profile& profile) {
  calibration::KernelCurveFit fit;
  fit.profile = profile;
  for (const auto& r : rows) fit.fitted_s.push_back(calibration::predict_kernel_row(r, kernel, hw, profile));
  fit.held_out_s = fit.fitted_s;
  fit.scores = calibration::score_passes(rows, fit.fitted_s, fit.held_out_s);
  return fit;
}

}  // namespace

int calibrate_from_kernels(const cxxopts::ParseResult& a, const models::Catalog& catalog) {
  // FILE[,FILE...]: charts (rows of --method) and kernel profiles, fitted together per GPU.
  const auto file = a["from-kernels"].as<std::string>();
  const auto method = a["method"].as<std::string>();
  // A file given as the profiles' folder is refused before the fit runs.
  if (const auto dir = a["profiles-dir"].as<std::string>(); !dir.empty()) check_output_folder(dir, "profiles-dir");
  std::vector<KernelRow> rows;
  bool chart = false;
  for (const auto& path : models::split(file, ',')) {
    if (path.empty()) throw InputError({}, 0, "from-kernels", "empty file name in the list");
    const auto table = read_csv(path, calibration::kMaxKernelRows, "from-kernels",
                                "a kernel-curve fit times each row thousands of times; split the file by GPU or shape");
    const bool is_chart = table.column("method").has_value();
    chart |= is_chart;
    for (auto& r : is_chart ? chart_rows(table, method) : profile_rows(table)) rows.push_back(std::move(r));
  }
  // --min-seconds: calls timed alone from Python pay the host's dispatch between the timing event
  // and the kernel (about 40 us with PyTorch), which a ring's back-to-back calls do not; where that
  // is a large share of a row, the row times the harness rather than the kernel.
  const double min_s = a["min-seconds"].as<double>();
  if (!(min_s >= 0 && min_s < 10)) throw InputError({}, 0, "min-seconds", "expected seconds in [0, 10)");
  const auto n_all = rows.size();
  std::erase_if(rows, [&](const KernelRow& r) { return r.seconds < min_s; });
  if (rows.empty()) throw InputError(file, 0, "min-seconds", "every row is shorter than --min-seconds");
  const auto as = a["as"].as<std::string>();
  if (as.empty())
    throw InputError({}, 0, "as", "--from-kernels needs --as GPU=HARDWARE[,...] (e.g. H800=h800): which catalog GPU each measured one is");
  const auto impl_name = a["impl"].as<std::string>().empty() ? std::string("ring-flash-attn") : a["impl"].as<std::string>();
  const auto impl = catalog.implementation(impl_name);
  if (!impl.kernel_model)
    throw InputError({}, 0, "impl", "implementation " + impl.name + " has no kernel model (kernel family " + impl.kernel +
                                        "); the kernel curves time the flash family");
  // --kernel: a kernel the implementation does not call on these GPUs (a component fit of its own).
  std::optional<models::KernelSpec> named_kernel;
  if (const auto k = a["kernel"].as<std::string>(); !k.empty())
    named_kernel = models::KernelSpec::load_named((std::filesystem::path(catalog.root()) / "configs" / "kernels").string(), k,
                                                  {}, "kernel");
  // --free (given): the parameters to fit instead of the defaults (calibration/kernel_curves.hpp).
  std::vector<std::string> free;
  if (a.count("free"))
    for (const auto& n : models::split(a["free"].as<std::string>(), ','))
      if (!n.empty()) free.push_back(n);
  // --free none: nothing fitted; the profile (--profile, else the catalog's for the implementation
  // on each GPU) predicts every row: an out-of-sample check of a fit on other data.
  const bool score_only = free == std::vector<std::string>{"none"};
  if (score_only && !a["profiles-dir"].as<std::string>().empty())
    throw InputError({}, 0, "profiles-dir", "--free none fits nothing: there is no profile to write");
  std::string out = fmt::format("ringsim calibrate: kernel curves of {} from {}{}; {}\n", impl.name, file,
                                chart ? " (method " + method + ")" : std::string(),
                                score_only ? "the profiles as they are, nothing fitted (--free none)"
                                           : "fitted on relative time, held out: leave one shape group out");
  if (rows.size() < n_all)
    out += fmt::format("  {} of {} rows kept: those of at least {:g} us (--min-seconds)\n", rows.size(), n_all, min_s * 1e6);
  std::vector<PendingFile> files;
  std::vector<std::string> folders;
  std::string report = csv_line({"gpu", "hardware", "pass", "batch", "heads", "kv_heads", "head_dim", "q_len", "k_len",
                                 "causal", "group", "measured_s", "fitted_s", "held_out_s"});
  for (const auto& [gpu, hw_name] : as_pairs(as, "GPU")) {
    std::vector<KernelRow> mine;
    for (const auto& r : rows)
      if (r.gpu.starts_with(gpu)) mine.push_back(r);
    if (mine.empty()) throw InputError(file, 0, "as", "no rows of GPU '" + gpu + "'" + (chart ? " and method " + method : ""));
    if (static_cast<std::int64_t>(mine.size()) > calibration::kMaxKernelRows)
      throw InputError(file, 0, "from-kernels",
                       fmt::format("{} timed calls of GPU '{}', more than the {} one fit takes (each is timed thousands of "
                                   "times): fit fewer shapes, or raise --min-seconds",
                                   mine.size(), gpu, calibration::kMaxKernelRows));
    const auto hw = catalog.hardware(hw_name);
    // The kernel the implementation calls on this GPU (its backend choice by compute capability).
    const models::KernelSpec& kernel = named_kernel ? *named_kernel : *impl.kernel_for(hw.compute_capability);
    // Spec defaults, so that the fit depends on the kernel data only; --profile: the base of every
    // GPU instead (a kernel fit of the same SM on data that tell more, say).
    const auto profile = a["profile"].as<std::string>();
    const auto base = !profile.empty() ? catalog.profile(profile, hw, impl.name)
                      : score_only     ? catalog.profile("", hw, impl.name)
                                       : catalog.spec_profile(hw, impl.name);
    calibration::KernelCurveFit fit;
    if (score_only) {
      fit = score_kernel_rows(mine, kernel, hw, base);
      out += fmt::format("{} (measured as {}), kernel {}: {} rows; profile {}, nothing fitted (out of sample)\n", hw.name,
                         gpu, kernel.name, mine.size(), base.name);
      for (const auto& sc : fit.scores)
        out += fmt::format("  {:<8} {:>4} rows   out of sample {:>7}   mean signed {:>+7.1f} %\n", calibration::to_string(sc.pass),
                           sc.rows, pct(sc.held_out_mape), 100 * sc.held_out_signed);
    } else {
      // A fit of a hundred rows takes a minute or more (every least-squares start times each row
      // through the kernel model many times): progress on a terminal, in least-squares runs.
      ProgressBar bar("fits", "ringsim calibrate: " + hw.name);
      try {
        fit = calibration::fit_kernel_curves(mine, kernel, hw, base, free,
                                             [&](std::int64_t done, std::int64_t total) { bar.update(done, total); });
      } catch (const InputError& e) {
        throw e.located(file, e.line());
      }
    }
    if (!score_only)
      out += fmt::format("{} (measured as {}), kernel {}: {} rows in {} shape groups; base profile {}\n", hw.name, gpu,
                         kernel.name, mine.size(), fit.groups, base.name);
    for (const auto& p : fit.parameters) {
      const bool seconds = p.name.ends_with("_s");
      const double k = seconds ? 1e6 : 1.0;
      if (const auto why = no_error_reason(p, false); !why.empty())
        out += fmt::format("  {:<26} {:>9.4g}{}   ({})\n", p.name, p.value * k, seconds ? " us" : "", why);
      else
        out += fmt::format("  {:<26} {:>9.4g} +- {:<9.2g}{}\n", p.name, p.value * k, p.std_error * k, seconds ? " us" : "");
    }
    if (!score_only)
      for (const auto& s : fit.scores)
        out += fmt::format("  {:<8} {:>4} rows   in-sample {:>7}   held-out {:>7}\n", calibration::to_string(s.pass), s.rows,
                           pct(s.in_sample_mape), pct(s.held_out_mape));
    if (const auto dir = a["profiles-dir"].as<std::string>(); !dir.empty()) {
      auto p = fit.profile;
      p.name = impl.name + "/" + hw.name;
      p.hardware = hw.name;
      p.implementation = impl.name;
      p.version = base.version + 1;
      p.provenance.calibrated = true;
      p.provenance.method = "kernel curves: fit to single-kernel timings (bounded Levenberg-Marquardt on relative time, "
                            "flash kernel-time model of " + kernel.name + ")";
      p.provenance.fitted_from = file;
      p.provenance.date = date_option(a);
      std::string fitted, scores;
      for (const auto& q : fit.parameters) {
        const auto why = no_error_reason(q, true);
        fitted += why.empty() ? fmt::format("{}{} = {:.4g} +- {:.2g}", fitted.empty() ? "" : "; ", q.name, q.value, q.std_error)
                              : fmt::format("{}{} = {:.4g} ({})", fitted.empty() ? "" : "; ", q.name, q.value, why);
      }
      for (const auto& sc : fit.scores)
        scores += fmt::format("; {} leave-one-shape-group-out MAPE {:.1f}% ({} rows)", calibration::to_string(sc.pass),
                              100 * sc.held_out_mape, sc.rows);
      p.provenance.notes = fmt::format("Kernel curves of {} on {} ({} rows of {}{}, {} shape groups): {}{}. Base: {}.",
                                       kernel.name, gpu, mine.size(), file,
                                       min_s > 0 ? fmt::format(", calls of at least {:g} us", min_s * 1e6) : std::string(),
                                       fit.groups, fitted, scores, base.name);
      p.validate(file);
      folders.push_back(dir + "/" + impl.name);
      files.push_back({dir + "/" + impl.name + "/" + hw.name + ".json", p.to_json().dump(2) + "\n"});
    }
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const auto& r = mine[i];
      report += csv_line({r.gpu, hw.name, calibration::to_string(r.pass), std::to_string(r.batch), std::to_string(r.heads),
                          std::to_string(r.kv_heads), std::to_string(r.head_dim), std::to_string(r.q_len),
                          std::to_string(r.k_len), r.causal ? "true" : "false", r.group, fmt::format("{:.6g}", r.seconds),
                          fmt::format("{:.6g}", fit.fitted_s[i]), fmt::format("{:.6g}", fit.held_out_s[i])});
    }
  }
  if (const auto path = a["report"].as<std::string>(); !path.empty()) files.push_back({path, report});
  // The profiles and the report appear together or not at all.
  write_file_set(files, folders, "profiles-dir");
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace ringsim::cli
