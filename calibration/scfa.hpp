#pragma once
// Fitting a Profile for Sparse Causal Flash Attention on one device (mesh 1x1) to published
// forward+backward times (data/scfa_calibration.csv): dense causal FlashAttention rows fix the
// attention efficiency, sparse rows (hash buckets, query/key dropping) the sparse kernel's
// relative efficiency and the masking penalty. The time predictor is injected so a test can
// recover known parameters from synthetic rows.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibration/fit.hpp"
#include "calibration/tables.hpp"
#include "models/cost/cost.hpp"
#include "models/catalog/resolve.hpp"

namespace ringsim::calibration {

// One published time: method flash|hash|qk, its parameter (none, nb=K, drop=P), tokens, ms.
struct ScfaRow {
  std::string method;
  std::string param;
  models::MaskSpec mask;  // the ringsim mask: causal, hash:K, qkdrop:P
  std::int64_t n_seq = 0;
  double ms = 0;     // forward + backward, milliseconds
  std::int64_t line = 0;
};

// The published setting: batch 4, 48 heads of dim 64, one device, tiles 128x128.
struct ScfaSetting {
  std::string hardware = "a100-40gb";
  std::string model = "attn:48:48:64";
  std::int64_t batch = 4;
  models::TileShape tile{128, 128};
  std::uint64_t seed = 1;
};

// Rows from a parsed CSV (header + cells + source lines). Throws InputError naming the file
// for a missing column (method, param, n_seq, ms), an unknown method, or a bad value.
[[nodiscard]] std::vector<ScfaRow> scfa_rows(const std::string& file, const std::vector<std::string>& header,
                                             const std::vector<std::vector<std::string>>& cells,
                                             const std::vector<std::int64_t>& lines);
// "flash"/"none" -> causal; "hash"/"nb=8" -> hash:8; "qk"/"drop=0.5" -> qkdrop:0.5.
[[nodiscard]] std::string scfa_mask(const std::string& method, const std::string& param);
[[nodiscard]] models::ScenarioSpec scfa_spec(const ScfaSetting& setting, const models::MaskSpec& mask, std::int64_t n_seq);

// Seconds of attention forward + backward for a row under a profile.
using ScfaPredictor = std::function<double(const ScfaRow&, const models::Profile&)>;
// The analytic model for `setting` (memoised; not thread-safe).
[[nodiscard]] ScfaPredictor analytic_scfa_predictor(const models::Catalog& catalog, const ScfaSetting& setting);

struct ScfaCalibration {
  models::Profile profile;             // base with the fitted values
  std::vector<FreeParameter> free;
  FitResult fit;                       // on log(seconds): residuals ~ relative errors
  std::vector<double> predicted_ms;    // per row
  std::vector<double> relative_error;  // predicted / published - 1, per row
};

// The default free parameters: attention_efficiency, sparse_kernel_efficiency, masked_tile_penalty.
[[nodiscard]] std::vector<std::string> scfa_default_free();
// Throws InputError when there are fewer rows than free parameters.
[[nodiscard]] ScfaCalibration calibrate_scfa(const std::vector<ScfaRow>& rows, const models::Profile& base,
                                             const std::vector<std::string>& free, const ScfaPredictor& predictor,
                                             const FitOptions& options = {});

// Leave one row out: each row predicted by the same free parameters fitted to the others (NaN
// where the others cannot determine them or the fit fails); the profile's held-out spread.
struct ScfaHeldOut {
  std::vector<double> predicted_ms;  // per row
  double mape = 0, log_sd = 0;       // over the rows predicted; NaN when none is
  std::int64_t points = 0;
};
[[nodiscard]] ScfaHeldOut scfa_leave_one_row_out(const std::vector<ScfaRow>& rows, const models::Profile& base,
                                                 const std::vector<std::string>& free, const ScfaPredictor& predictor,
                                                 const FitOptions& options = {});

}  // namespace ringsim::calibration
