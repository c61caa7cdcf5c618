#include "cli/calibrate_common.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/csv.hpp"
#include "io/folder_lock.hpp"
#include "models/io/error.hpp"
#include "models/io/names.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using models::InputError;

std::string today() {
  const auto now = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
  const std::chrono::year_month_day ymd{now};
  return fmt::format("{:04d}-{:02d}-{:02d}", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()));
}

std::string date_option(const cxxopts::ParseResult& a) {
  const auto date = a["date"].as<std::string>();
  return date.empty() ? today() : date;
}

std::string fmt_se(double se) {
  return std::isfinite(se) ? fmt::format("{:.3g}", se) : "n/a (on a bound, or not identified by these rows)";
}

models::Profile::Uncertainty parameter_uncertainty(const std::vector<calibration::FreeParameter>& params,
                                                   const calibration::FitResult& f) {
  models::Profile::Uncertainty u;
  for (const auto& q : params) u.parameters.push_back(q.name);
  u.covariance.assign(params.size(), std::vector<double>(params.size(), 0.0));
  for (std::size_t i = 0; i < params.size(); ++i)
    for (std::size_t j = 0; j < params.size(); ++j)
      u.covariance[i][j] = f.covariance(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
  return u;
}

void describe_fit(const std::vector<calibration::FreeParameter>& params, const calibration::FitResult& f,
                  std::size_t name_width, std::string& out, std::string& notes) {
  for (std::size_t k = 0; k < params.size(); ++k) {
    const auto& p = params[k];
    const double v = f.params[static_cast<Eigen::Index>(k)];
    const double se = f.std_errors[static_cast<Eigen::Index>(k)];
    out += fmt::format("  {:<{}} = {:.4g}  (std error {}, bounds [{:g}, {:g}]): {}\n", p.name, name_width, v, fmt_se(se),
                       p.lower, p.upper, p.meaning);
    notes += fmt::format("{}{} = {:.4g} +- {} in [{:g}, {:g}]", k ? "; " : "", p.name, v, fmt_se(se), p.lower, p.upper);
  }
}

models::Profile base_profile(const cxxopts::ParseResult& a, const models::Catalog& catalog, const models::Hardware& hw,
                             const std::string& fallback_impl) {
  models::ScenarioSpec spec;
  spec.impl = a["impl"].as<std::string>().empty() ? fallback_impl : a["impl"].as<std::string>();
  spec.profile = a["profile"].as<std::string>();
  const auto impl = catalog.choose_implementation(spec, hw, models::parse_layouts({"contiguous", "striped"}));
  return catalog.profile(spec.profile, hw, impl);
}

std::vector<std::string> names_in(const cxxopts::ParseResult& a, const char* key) {
  std::vector<std::string> out;
  for (auto& n : models::split(a[key].as<std::string>(), ','))
    if (!n.empty()) {
      try {
        (void)calibration::find_parameter(n);
      } catch (const InputError& e) {
        throw InputError({}, 0, key, e.message());
      }
      out.push_back(std::move(n));
    }
  return out;
}

std::vector<std::pair<std::string, std::string>> as_pairs(const std::string& as, const char* what) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : models::split(as, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw models::InputError({}, 0, "as", std::string("expected ") + what + "=HARDWARE, got '" + item + "'");
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    models::check_catalog_name(out.back().second, "as", "hardware");
  }
  return out;
}

std::string stage_hop(io::OutputSet& set, const std::string& dir, const HopRecord& r) {
  const auto path = (std::filesystem::path(dir) / (r.hardware + ".json")).string();
  set.hold(io::FolderLock(dir));
  models::PointToPoint links;
  std::error_code ec;
  const bool had = std::filesystem::exists(path, ec);
  if (had) links = models::PointToPoint::load_file(path);
  const auto& other = r.inter_node ? links.intra_node : links.inter_node;
  const char* mine = r.inter_node ? "inter_node" : "intra_node";
  const char* theirs = r.inter_node ? "intra_node" : "inter_node";
  const auto kept = had && other ? fmt::format("; {} kept from: {}", theirs, links.fitted_from) : std::string();
  links.hardware = r.hardware;
  if (!r.probe_name.empty()) links.probe_name = r.probe_name;
  links.fitted_from = fmt::format("{}: {}{}", mine, r.fitted_from, kept);
  links.date = r.date;
  links.notes = fmt::format("{}: {}", mine, r.notes);
  (r.inter_node ? links.inter_node : links.intra_node) = r.hop;
  set.stage(path, links.to_json().dump(2) + "\n");
  return fmt::format("wrote {} ({}{})\n", path, mine, had && other ? fmt::format("; {} kept", theirs) : std::string());
}

std::string write_hop(const std::string& dir, const HopRecord& r) {
  io::OutputSet set;
  auto line = stage_hop(set, dir, r);
  set.commit();
  return line;
}

namespace {

// The topmost folder of `dir` that does not exist ("" when `dir` is a folder); InputError naming
// `field` when `dir` or a parent on the way is a file.
std::string first_missing_folder(const std::string& dir, const char* field) {
  models::check_path(dir, field);
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(fs::status(dir, ec))) return {};
  fs::path top = fs::path(dir).lexically_normal();
  if (!top.has_filename()) top = top.parent_path();  // "out/" names the folder "out"
  for (fs::path p = top;; p = p.parent_path()) {
    const auto st = fs::status(p, ec);
    if (fs::exists(st)) {
      // A file on the way is named as such, not as "Not a directory".
      if (!fs::is_directory(st)) {
        const std::string what = st.type() == fs::file_type::fifo                                             ? "a named pipe"
                                 : st.type() == fs::file_type::character || st.type() == fs::file_type::block ? "a device"
                                 : st.type() == fs::file_type::socket                                         ? "a socket"
                                                                                                              : "a file";
        throw InputError({}, 0, field,
                         p == top ? "'" + dir + "' is " + what + ", expected a folder (or a new name) to write into"
                                  : "'" + p.string() + "' is " + what + ", so the folder '" + dir + "' cannot be created in it");
      }
      break;
    }
    top = p;
    if (p == p.parent_path() || p.parent_path().empty()) break;
  }
  return top.string();
}

}  // namespace

void check_output_folder(const std::string& dir, const char* field) { (void)first_missing_folder(dir, field); }

std::string make_output_folder(const std::string& dir, const char* field) {
  const auto top = first_missing_folder(dir, field);
  if (top.empty()) return top;
  std::error_code ec;
  if (!std::filesystem::create_directories(dir, ec) && ec)
    throw InputError({}, 0, field, "cannot create the folder '" + dir + "': " + ec.message());
  return top;
}

void write_file_set(const std::vector<PendingFile>& files, const std::vector<std::string>& folders, const char* field) {
  std::vector<std::pair<std::string, std::string>> made;  // (folder, topmost created)
  try {
    for (const auto& f : folders) made.emplace_back(f, make_output_folder(f, field));
    io::OutputSet set;
    for (const auto& f : files) set.stage(f.path, f.text);
    set.commit();
  } catch (...) {
    for (auto it = made.rbegin(); it != made.rend(); ++it) remove_created_folders(it->first, it->second);
    throw;
  }
}

void remove_created_folders(const std::string& dir, const std::string& top) noexcept {
  if (top.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::path(dir).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  for (; !p.empty(); p = p.parent_path()) {
    if (!fs::is_empty(p, ec) || ec || !fs::remove(p, ec)) return;
    if (p == fs::path(top) || p == p.parent_path()) return;
  }
}

}  // namespace ringsim::cli
