#pragma once
// Kernel curves: the flash kernel family's per-GPU parameters fitted on single-kernel timings
// alone (data/components/kernels/: FlashAttention's benchmark charts and a single-GPU kernel
// profile), through the same kernel-time model the cost model uses (models/families/kernel_time.hpp:
// CTA tiles, waves, the causal tail). Fitted: the matrix-unit efficiency of the forward and of the
// backward (Profile::attention_efficiency, attention_bwd_efficiency) and the fixed cost of a CTA
// (cta_overhead_s); held out: leave one shape group out (a chart's sequence length, a profile's
// (q_len, k_len)), the shape being what a user's context length, CP degree and layout change.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibration/fit.hpp"
#include "models/cost/cost.hpp"
#include "models/families/kernel_time.hpp"
#include "models/hardware/hardware.hpp"
#include "models/implementations/kernel_spec.hpp"

namespace ringsim::calibration {

enum class KernelPass { Fwd, Bwd, FwdBwd };
[[nodiscard]] const char* to_string(KernelPass p) noexcept;

// One timed kernel call (or a forward and backward pair, FwdBwd), bottom-right causal when
// q_len != k_len (FlashAttention >= 2.1).
struct KernelRow {
  std::string gpu;     // as the file names it
  KernelPass pass = KernelPass::Fwd;
  std::int64_t batch = 1, heads = 1, kv_heads = 1, head_dim = 64, q_len = 0, k_len = 0;
  bool causal = false;
  double seconds = 0;
  std::string group;   // the shape group held out together
  std::int64_t line = 0;
};

// What a measured kernel call may be, checked before the kernel model lays out its CTAs (one
// entry per query or key block of a call, allocated per evaluation): a call of one GPU runs at
// most 2^26 queries and keys (64M tokens; the longest single-GPU benchmarks time 1M), at most
// models::kMaxBatch sequences of at most 2^16 heads (the model files' bound), whose query heads
// are a multiple of the K/V heads (GQA), Q and K each at most 2^40 elements (batch x heads x
// tokens x head dim: 2 TiB in bf16, beyond any GPU's memory); it lasts from 1 ns (a launch alone
// costs microseconds) to 1e6 s. Beyond these a row is a typo, not a measurement.
inline constexpr std::int64_t kMaxKernelRowTokens = std::int64_t{1} << 26;
inline constexpr std::int64_t kMaxKernelRowHeads = std::int64_t{1} << 16;
inline constexpr double kMaxKernelRowElements = 1099511627776.0;  // 2^40
// Rows of one file, and timed calls of one GPU's fit: each is timed through the kernel model
// thousands of times (a fit of 108 takes about a minute on one core; the largest published kernel
// profile holds 320 shapes), so 10,000 is about two hours with progress shown, and more is refused
// before it is read.
inline constexpr std::int64_t kMaxKernelRows = 10000;
inline constexpr double kMinKernelRowSeconds = 1e-9;
inline constexpr double kMaxKernelRowSeconds = 1e6;

// The columns a file names a row's figures by, for the messages of check_kernel_row.
struct KernelRowColumns {
  std::string batch = "batch", heads = "heads", kv_heads = "kv_heads", head_dim = "head_dim", q_len = "q_len",
              k_len = "k_len", seconds = "seconds";
};
// Throws InputError(file, row.line, the column) for a row outside the bounds above.
void check_kernel_row(const KernelRow& row, const KernelRowColumns& columns, const std::string& file);

// Seconds of a chart's TFLOP/s under FlashAttention's benchmark rule (benchmarks/
// benchmark_flash_attention.py flops()): forward 4 b s_q s_k h d, halved when causal; backward
// 2.5x, forward + backward 3.5x.
[[nodiscard]] double seconds_from_tflops(double tflops, KernelPass pass, const KernelRow& shape);

// The kernel model's time of `row` under profile `p` on `hw`.
[[nodiscard]] double predict_kernel_row(const KernelRow& row, const models::KernelSpec& spec, const models::Hardware& hw,
                                        const models::Profile& p);
// The same at rates already derived (models::KernelRates::of): a fit's rows share them.
[[nodiscard]] double predict_kernel_row(const KernelRow& row, const models::KernelSpec& spec,
                                        const models::KernelRates& rates);

struct KernelParameterFit {
  std::string name;  // a Profile parameter
  double value = 0, std_error = 0;
  bool at_bound = false;
};

struct KernelPassScore {
  KernelPass pass = KernelPass::Fwd;
  std::int64_t rows = 0;
  double in_sample_mape = 0, held_out_mape = 0;
  double held_out_signed = 0;  // mean of held-out / measured - 1: which way the held-out times err
};
// The scores per pass present in `rows` of the in-sample and held-out times (one per row, in order).
[[nodiscard]] std::vector<KernelPassScore> score_passes(const std::vector<KernelRow>& rows, const std::vector<double>& fitted_s,
                                                        const std::vector<double>& held_out_s);

struct KernelCurveFit {
  models::Profile profile;  // `base` with the fitted parameters set
  std::vector<KernelParameterFit> parameters;
  std::vector<KernelPassScore> scores;  // per pass present
  std::vector<double> fitted_s, held_out_s;  // per row, in the order given
  std::int64_t groups = 0;
  // Row timings the fit asked for: computed by the kernel model, or remembered from an earlier
  // point that left the row's pass with the same rates (calibration/kernel_time_memo.hpp).
  std::int64_t kernel_times_computed = 0, kernel_times_remembered = 0;
};

// Fits the parameters of `free` (Profile parameter names; default attention_efficiency,
// attention_bwd_efficiency (only where forward and backward are timed apart), cta_overhead_s,
// softmax_overlap where the rows span two or more head dims, solo_cta_gain where three or more
// calls launch at most one wave of CTAs, shared_memory_efficiency where the forward rows run tiles
// whose shared-memory bytes per FLOP differ by half again or more (on hardware that gives its
// shared-memory rate), bwd_shared_memory_efficiency where backward rows timed apart run tiles whose
// bytes per FLOP differ by a quarter or more, and kernel_launch_s where some call lasts under 100 us)
// on relative time error. InputError (field "rows") with fewer rows than parameters or
// fewer than two shape groups (nothing to hold out); a row outside check_kernel_row's bounds, or
// of a head dim the kernel has no tile for, with its line and field.
// `progress` (if given) is called after each least-squares start with the starts done and their
// total (the full fit's and every held-out fold's), so a front-end can show how far a fit of
// minutes has come.
// The parameters fit_kernel_curves frees when `free` is empty, by the rules above, in its order;
// the same InputErrors for a row it refuses. A fit of minutes need not run to learn them.
[[nodiscard]] std::vector<std::string> default_kernel_free_parameters(const std::vector<KernelRow>& rows,
                                                                      const models::KernelSpec& spec,
                                                                      const models::Hardware& hw,
                                                                      const models::Profile& base);
[[nodiscard]] KernelCurveFit fit_kernel_curves(const std::vector<KernelRow>& rows, const models::KernelSpec& spec,
                                               const models::Hardware& hw, const models::Profile& base,
                                               std::vector<std::string> free = {},
                                               const std::function<void(std::int64_t, std::int64_t)>& progress = {});

}  // namespace ringsim::calibration
