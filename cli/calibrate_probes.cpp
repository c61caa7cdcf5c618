#include "cli/calibrate_probes.hpp"

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/link_probes.hpp"
#include "cli/calibrate_common.hpp"
#include "cli/csv.hpp"
#include "models/io/error.hpp"
#include "models/io/names.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using models::InputError;

namespace {

// The rows of a probe file (data/components/links/): one message size of one pattern per row.
std::vector<calibration::ProbeRow> probe_rows(const CsvTable& t) {
  const auto c_hw = t.require_column("hardware"), c_pattern = t.require_column("pattern");
  const auto c_size = t.require_column("size_bytes"), c_gbps = t.require_column("gbps_per_directed_pair");
  std::vector<calibration::ProbeRow> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    calibration::ProbeRow r;
    r.hardware = t.text(i, c_hw);
    r.pattern = t.text(i, c_pattern);
    r.inter_node = r.pattern.starts_with("inter-node");
    r.ring = r.pattern.find("ring") != std::string::npos;
    r.bytes = t.number(i, c_size);
    const double gbps = t.number(i, c_gbps);
    if (!(r.bytes > 0) || !(gbps > 0))
      throw InputError(t.file, t.lines[i], !(r.bytes > 0) ? "size_bytes" : "gbps_per_directed_pair",
                       "expected a positive number");
    // One message's time from the printed per-pair bandwidth (decimal GB/s): the probe's own time
    // column covers 100 rounds and, in one log, disagrees with its bandwidth by 10x (see
    // data/components/README.md).
    r.seconds = r.bytes / (gbps * 1e9);
    r.line = t.lines[i];
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string hop_line(const char* what, const calibration::HopFit& f) {
  const auto& h = f.hop;
  return fmt::format("  {:<10} {:>8.2f} +- {:<6.2f} GB/s  {:>7.2f} +- {:<5.2f} us  {:>3} sizes  held-out {:.2f} %  ({})\n",
                     what, h.bandwidth_bytes_per_s / 1e9, h.bandwidth_se / 1e9, h.latency_s * 1e6, h.latency_se * 1e6,
                     h.rows, 100 * h.held_out_mape, h.pattern);
}

}  // namespace

int calibrate_from_probes(const cxxopts::ParseResult& a) {
  const auto file = a["from-probes"].as<std::string>();
  const auto table = read_csv(file);
  const auto rows = probe_rows(table);
  const auto as = a["as"].as<std::string>();
  if (as.empty())
    throw InputError({}, 0, "as", "--from-probes needs --as PROBE=HARDWARE[,...] (e.g. H800=h800): which catalog GPU each probed one is");
  const auto dir = a["links-dir"].as<std::string>();
  if (!dir.empty()) check_output_folder(dir, "links-dir");
  std::string out = fmt::format("ringsim calibrate: point-to-point hops from {} (sizes >= {:.0f} bytes; time = latency + "
                                "bytes / bandwidth, least squares on relative time; held-out: leave one size out)\n",
                                file, calibration::kRingMessageBytes);
  std::vector<std::pair<std::string, models::PointToPoint>> fits;
  for (const auto& [probe, hw] : as_pairs(as, "PROBE")) {
    auto fit = calibration::fit_hardware(rows, probe, hw, file);
    fit.links.fitted_from = file + " (" + probe + " rows; its header names the source)";
    fit.links.date = a["date"].as<std::string>();
    fit.links.notes = "intra_node: " + (fit.links.intra_node ? fit.links.intra_node->pattern : std::string("not probed")) +
                      "; inter_node: " + (fit.links.inter_node ? fit.links.inter_node->pattern + " (per GPU)" : std::string("not probed")) +
                      ". Fitted by ringsim calibrate --from-probes over sizes of at least 1 MiB.";
    out += fmt::format("{} (probed as {}):\n", hw, probe);
    if (fit.links.intra_node) out += hop_line("intra", fit.intra);
    if (fit.links.inter_node) out += hop_line("inter", fit.inter);
    fits.emplace_back(hw, fit.links);
  }
  if (!dir.empty()) {
    // All or none of the files, under the folder's lock (a concurrent calibrate --from-trace or
    // --from-nccl-tests merges one hop into the same files: calibrate_common.hpp).
    io::OutputSet set;
    set.hold(io::FolderLock(dir));
    for (const auto& [hw, links] : fits)
      set.stage((std::filesystem::path(dir) / (hw + ".json")).string(), links.to_json().dump(2) + "\n");
    set.commit();
    out += fmt::format("wrote {} files to {}\n", fits.size(), dir);
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace ringsim::cli
