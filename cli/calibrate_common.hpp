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
#include "io/output_set.hpp"
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

// One hop type of HARDWARE.json in `dir` (configs/links format), keeping the other hop type when
// the file exists (intra-node from probes, inter-node from nccl-tests, say). stage_hop takes the
// folder's lock (io/folder_lock.hpp) into `set`, reads the file and stages the new one, so the
// read and the rename that set.commit() does are one step for concurrent writers; the other
// outputs of the command join the same set. Returns the report line ("wrote PATH (intra_node;
// inter_node kept)"). write_hop does it alone, committed at once.
struct HopRecord {
  std::string hardware, probe_name;  // probe_name: "" keeps the file's
  bool inter_node = false;
  models::PointToPointHop hop;
  std::string fitted_from, notes, date;
};
std::string stage_hop(io::OutputSet& set, const std::string& dir, const HopRecord& r);
std::string write_hop(const std::string& dir, const HopRecord& r);

// A folder the command writes files into (--out-dir, --profiles-dir and the folders under it):
// created with its parents when missing. InputError (exit code 2, one line naming `field`) when
// the path or one of its parents is a file, or it cannot be created. Returns the topmost folder
// it created ("" when `dir` existed), so a run that then fails can remove what it made.
std::string make_output_folder(const std::string& dir, const char* field);
// The same checks without creating anything: a command refuses a file given as its folder before
// it computes what it would write there.
void check_output_folder(const std::string& dir, const char* field);
// Removes `dir` and its parents up to `top` (make_output_folder's answer) while they are empty;
// never throws. Does nothing when `top` is "".
void remove_created_folders(const std::string& dir, const std::string& top) noexcept;

// The files of one command, written as a set (io/output_set.hpp): `folders` are made first
// (make_output_folder, InputError naming `field`), then every file is staged and all are renamed
// together. On any failure nothing is replaced and the folders made are removed again.
struct PendingFile {
  std::string path, text;
};
void write_file_set(const std::vector<PendingFile>& files, const std::vector<std::string>& folders, const char* field);

}  // namespace ringsim::cli
