#pragma once
// What the fitting modes of `ringsim calibrate` share: the provenance date, the text of a
// standard error, the report lines of fitted parameters, the profile a fit starts from and the
// parameter names a flag lists.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <cxxopts.hpp>

#include "calibration/fit.hpp"
#include "calibration/tables.hpp"
#include "models/catalog/resolve.hpp"
#include "models/hardware/point_to_point.hpp"

namespace ringsim::cli {

// YYYY-MM-DD: today (measure's rows and calibrate's provenance).
[[nodiscard]] std::string today();
// The provenance date: --date, else today().
[[nodiscard]] std::string date_option(const cxxopts::ParseResult& a);

// A fitted parameter's standard error for reports and provenance notes.
[[nodiscard]] std::string fmt_se(double se);

// One line per fitted parameter for the report, and the same compactly for the provenance.
void describe_fit(const std::vector<calibration::FreeParameter>& params, const calibration::FitResult& f,
                  std::size_t name_width, std::string& out, std::string& notes);

// A fit's parameters and their covariance, as a profile's uncertainty carries them (the
// held-out spread is the caller's, from its own grouping).
[[nodiscard]] models::Profile::Uncertainty parameter_uncertainty(const std::vector<calibration::FreeParameter>& params,
                                                                 const calibration::FitResult& f);

// The base profile of a fit: profiles are keyed by (hardware, implementation); the implementation
// is --impl, else the one the --profile reference names, else `fallback_impl`.
[[nodiscard]] models::Profile base_profile(const cxxopts::ParseResult& a, const models::Catalog& catalog,
                                           const models::Hardware& hw, const std::string& fallback_impl);

// The parameters option `key` lists (comma-separated), each a known one (else InputError naming `key`).
[[nodiscard]] std::vector<std::string> names_in(const cxxopts::ParseResult& a, const char* key);
// --as NAME=HARDWARE,...: (the measured GPU's name as a data file writes it, the catalog hardware),
// each hardware name checked. `what` names the left side in the message (GPU, PROBE).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> as_pairs(const std::string& as, const char* what);

// Writes one hop type of HARDWARE.json in `dir` (configs/links format), keeping the other hop type
// when the file exists (intra-node from probes, inter-node from nccl-tests, say). Returns the
// report line ("wrote PATH (intra_node; inter_node kept)").
struct HopRecord {
  std::string hardware, probe_name;  // probe_name: "" keeps the file's
  bool inter_node = false;
  models::PointToPointHop hop;
  std::string fitted_from, notes, date;
};
std::string write_hop(const std::string& dir, const HopRecord& r);

}  // namespace ringsim::cli
