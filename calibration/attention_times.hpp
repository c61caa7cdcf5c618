#pragma once
// Fitting flash-attention libraries to published attention times (data/cp_attention_times.csv:
// the ring-flash-attention README table and YunChang/USP's table T1). A row is one attention call
// of an implementation and context-parallel strategy on sp GPUs with a layout (contiguous, zigzag,
// striped), or one flash_attn call on one GPU ("single": the hardware's kernel measurement). The
// fit is joint over the hardware and the implementations that call the same kernel: efficiencies
// belong to each GPU, host costs to the libraries, and fixed per-tile and per-CTA costs are
// cycles shared by all GPUs. Residuals are in log time. Leave-one-group-out (by hardware, by table, by head configuration) refits without the
// group's ring rows and predicts them; single-GPU rows always stay in the fit and are never scored.
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "calibration/fit.hpp"
#include "calibration/tables.hpp"
#include "models/cost/cost.hpp"
#include "models/catalog/resolve.hpp"

#include "models/implementations/strategy.hpp"
#include "models/workload/layout_spec.hpp"

namespace ringsim::calibration {

struct TimeRow {
  std::string table;     // ringflash-readme, usp-t1, ...
  std::string hardware;
  std::string impl;
  models::Strategy cp;      // context-parallel strategy (ring, usp:UxR, ...)
  std::string layout;       // contiguous | zigzag | striped, or single (one GPU, one call)
  models::LayoutSpec ring_layout;  // `layout` parsed, when not single
  std::string pass;      // fwd | bwd (the backward call alone, fed the forward's outputs) | fwd+bwd
  std::string mask = "causal";  // causal | full (column mask, optional)
  std::int64_t heads = 0, kv_heads = 0, head_dim = 0, batch = 1, sp = 1, n_seq = 0;
  std::string packing;   // how the benchmark passed q, k, v (kept apart: measurements, not physics)
  double seconds = 0;
  std::int64_t line = 0;
  [[nodiscard]] bool single() const noexcept { return layout == "single"; }
  [[nodiscard]] std::string heads_key() const;   // "32/8/128": heads, K/V heads, head dim
  [[nodiscard]] std::string config_key() const;  // everything but the layout
  // Whether the layout changes the work: a ring of two or more positions (Ulysses alone attends
  // the whole sequence whatever the layout names).
  [[nodiscard]] bool layout_matters() const;
  [[nodiscard]] std::string group(const std::string& by) const;  // by: hardware | table | heads | sp | mask | pass
};

// Rows from a parsed CSV (column cp optional: ring); InputError naming the file, line and column
// for anything malformed.
[[nodiscard]] std::vector<TimeRow> time_rows(const std::string& file, const std::vector<std::string>& header,
                                             const std::vector<std::vector<std::string>>& cells,
                                             const std::vector<std::int64_t>& lines);

// Seconds of a row under a profile, from the analytic model (memoised; not thread-safe).
class TimePredictor {
 public:
  explicit TimePredictor(models::Catalog catalog) : scenarios_(std::move(catalog)) {}
  [[nodiscard]] double operator()(const TimeRow& row, const models::Profile& profile);

  // What one implementation's own code costs beyond the kernel and ring loop the implementations
  // of a GPU share: the host's time per collective call (USP's all-to-alls, which ring-flash-
  // attention never makes), from that implementation's own base profile. A row is predicted, and
  // its implementation's profile written, with its own.
  struct LibraryTerms {
    double host_collective_s = 0, host_collective_peer_s = 0;
  };
  void set_library_terms(const std::string& impl, const std::string& hardware, LibraryTerms terms);
  [[nodiscard]] models::Profile with_library_terms(models::Profile profile, const std::string& impl,
                                                   const std::string& hardware) const;

 private:
  ScenarioPredictor scenarios_;
  std::map<std::pair<std::string, std::string>, LibraryTerms> library_;
};

// What the fit frees: Profile fields per GPU, fields shared by all GPUs, and shared fields counted
// in SM cycles (seconds = cycles / the GPU's SM clock).
struct TimeFitSetup {
  // Per hardware name: the parameters every implementation of the rows shares on that GPU (they
  // call the same kernel); a row's profile is this one under its implementation's name.
  std::map<std::string, models::Profile> base;
  std::vector<std::string> per_hardware;
  std::vector<std::string> shared;
  std::vector<std::string> shared_cycles;
  // What a derived profile copies from another GPU's besides `per_hardware` (the component-fitted
  // kernel parameters when nothing is fitted on these rows): derived_from_other_gpus copies both.
  std::vector<std::string> copied;
  FitOptions options;
};

struct TimeParameter {
  std::string name;
  std::string hardware;  // empty: shared
  bool cycles = false;
  double lower = 0, upper = 1;
  [[nodiscard]] std::string label() const;  // "attention_efficiency[a100-80gb]", "tile_overhead_s[cycles]"
};

struct TimeFit {
  std::vector<TimeParameter> params;
  FitResult fit;                                    // on log seconds
  std::map<std::string, models::Profile> profiles;  // per hardware, fitted values set
  std::vector<double> predicted;                    // seconds, per row
};

// Throws InputError when a hardware has rows but no base profile, or too few rows. With no
// parameter named the rows are predicted from the base profiles (a score, not a fit).
[[nodiscard]] TimeFit fit_times(const std::vector<TimeRow>& rows, const TimeFitSetup& setup, TimePredictor& predictor);

// The fitted parameters that act on one hardware's profile, their values in its units (seconds
// for cycle parameters) and their covariance: what Profile::Uncertainty stores.
void fill_uncertainty(const TimeFit& fit, const std::string& hardware, models::Profile& profile);

// A layout's throughput over contiguous blocks on the same configuration: t_contiguous / t_layout.
struct RatioPoint {
  std::size_t contiguous = 0, other = 0;  // row indices
  double measured = 0;
};
[[nodiscard]] std::vector<RatioPoint> layout_ratios(const std::vector<TimeRow>& rows);

struct GroupScore {
  std::string group;
  std::int64_t time_points = 0, ratio_points = 0;
  double time_mape = 0, ratio_mape = 0;  // mean |predicted / measured - 1|
};

struct HeldOut {
  std::string by;
  std::vector<double> predicted;  // seconds per row from the fit without its group; NaN for single rows
  std::vector<GroupScore> groups;
  GroupScore all;                 // over every scored point
};

// The share of held-out points inside a 90 % log-normal band whose spread is the rms log
// residual of the other groups' held-out points only: what a user whose group (GPU, table, head
// configuration) was never measured would see. NaN with fewer than two scored groups.
[[nodiscard]] double grouped_interval_coverage(const std::vector<TimeRow>& rows, const HeldOut& h, double level = 0.9);

[[nodiscard]] HeldOut leave_one_group_out(const std::vector<TimeRow>& rows, const TimeFitSetup& setup,
                                          TimePredictor& predictor, const std::string& by);

// What a derived profile gets wrong, measured where both exist: each GPU's ring rows predicted
// with the per-GPU parameters another GPU's fit found (what `calibrate --derive-from` copies to a
// GPU without measurements; shared parameters are the same for both). One group per
// (target, source) pair, named "TARGET from SOURCE"; the log residuals of time and of layout
// ratios are what derived profiles' intervals are built from. Empty with fewer than two GPUs.
struct DerivedScore {
  std::vector<GroupScore> pairs;
  GroupScore all;
  std::vector<double> log_time, log_ratio;  // log(predicted / measured), every scored point
  std::vector<std::size_t> time_pair;       // the index in `pairs` of each log_time point
};
// The share of derived points inside their 90 % interval when the spread comes from the other
// pairs only (each pair's points judged by a log-normal band of the rms of the rest): the
// coverage a GPU whose pair was never measured would see. NaN with fewer than two pairs.
[[nodiscard]] double derived_interval_coverage(const DerivedScore& d, double level = 0.9);
[[nodiscard]] DerivedScore derived_from_other_gpus(const std::vector<TimeRow>& rows, const TimeFit& fit,
                                                   const TimeFitSetup& setup, TimePredictor& predictor);

}  // namespace ringsim::calibration
