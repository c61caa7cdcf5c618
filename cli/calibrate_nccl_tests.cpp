#include "cli/calibrate_nccl_tests.hpp"

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/nccl_tests.hpp"
#include "cli/calibrate_common.hpp"
#include "cli/csv.hpp"
#include "models/hardware/point_to_point.hpp"
#include "models/io/error.hpp"
#include "models/io/names.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using models::InputError;

namespace {

constexpr std::size_t kMaxFiles = 256;

std::string hop_line(const char* what, const models::PointToPointHop& h) {
  return fmt::format("  {:<6} {:>8.2f} +- {:<6.2f} GB/s  {:>7.2f} +- {:<5.2f} us per step  {:>3} sizes  held-out {:.2f} %\n", what,
                     h.bandwidth_bytes_per_s / 1e9, h.bandwidth_se / 1e9, h.latency_s * 1e6, h.latency_se * 1e6, h.rows,
                     100 * h.held_out_mape);
}

std::string describe(const calibration::NcclTestsFile& f) {
  std::string s = fmt::format("{}_perf ({}), ", calibration::collective_name(f.collective), f.collective_from);
  s += f.ranks > 0 ? fmt::format("{} ranks ({})", f.ranks, f.ranks_from) : std::string("ranks not printed");
  if (f.hosts > 0) s += fmt::format(" on {} host{}", f.hosts, f.hosts == 1 ? "" : "s");
  if (!f.gpu.empty()) s += ", " + f.gpu;
  return s;
}

}  // namespace

int calibrate_from_nccl_tests(const cxxopts::ParseResult& a) {
  const auto list = a["from-nccl-tests"].as<std::string>();
  const auto hop = a["hop"].as<std::string>();
  if (hop != "intra-node" && hop != "inter-node")
    throw InputError({}, 0, "hop", "--from-nccl-tests needs --hop intra-node or --hop inter-node (got '" + hop + "'): which hop the files measured");
  const bool inter = hop == "inter-node";
  const auto hw = a["hardware"].as<std::string>();
  if (hw.empty())
    throw InputError({}, 0, "hardware", "--from-nccl-tests needs --hardware NAME: the catalog GPU the hop belongs to (e.g. h100-sxm)");
  models::check_catalog_name(hw, "hardware", "hardware");
  const auto collective = a["collective"].as<std::string>();
  const auto dir = a["links-dir"].as<std::string>();
  if (!dir.empty()) check_output_folder(dir, "links-dir");

  std::vector<std::string> files;
  for (const auto& item : models::split(list, ',')) {
    if (models::trim(item).empty()) throw InputError({}, 0, "from-nccl-tests", "expected FILE[,FILE...], got an empty name in '" + list + "'");
    models::check_path(item, "from-nccl-tests");
    files.push_back(item);
  }
  if (files.size() > kMaxFiles) throw InputError({}, 0, "from-nccl-tests", fmt::format("expected at most {} files", kMaxFiles));

  std::string out = fmt::format(
      "ringsim calibrate: the {} hop of {} from nccl-tests output. Bus bandwidth is the per-link figure "
      "(NVIDIA/nccl-tests doc/PERFORMANCE.md); each size >= {:.0f} bytes is taken as one ring step: bytes = size x "
      "factor / steps, time / steps; time = latency + bytes / bandwidth, least squares on relative time; held-out: "
      "leave one size out\n",
      hop, hw, calibration::kRingMessageBytes);
  std::vector<calibration::ProbeRow> all;
  std::string gpu, collectives;
  for (const auto& file : files) {
    const auto f = calibration::read_nccl_tests(file, collective);
    // The hosts of the Rank lines say which hop the busbw measured: one host is NVLink/PCIe only,
    // several cross the network (its slowest link sets a ring's pace).
    if (f.hosts == 1 && inter)
      throw InputError(file, 0, "hop", "--hop inter-node, but every rank of the file runs on one host: it measured an intra-node hop");
    if (f.hosts > 1 && !inter)
      throw InputError(file, 0, "hop",
                       fmt::format("--hop intra-node, but the file's ranks run on {} hosts: its busbw is the network's", f.hosts));
    const auto ring = calibration::nccl_ring(f.collective, std::max(f.ranks, 2));
    const auto pattern = fmt::format("nccl-tests {}_perf, {}{} (busbw per link; {} ring step{} per call)",
                                     calibration::collective_name(f.collective),
                                     f.ranks > 0 ? fmt::format("{} ranks", f.ranks) : std::string("ranks not printed"),
                                     f.hosts > 0 ? fmt::format(" on {} hosts", f.hosts) : std::string(), ring.steps,
                                     ring.steps == 1 ? "" : "s");
    auto rows = calibration::nccl_hop_rows(f, hw, pattern);
    if (rows.size() < 3)
      throw InputError(file, 0, "size",
                       fmt::format("{} sizes of at least {:.0f} bytes: a line needs 3 (run nccl-tests with -b 1M or less)",
                                   rows.size(), calibration::kRingMessageBytes));
    const auto fit = calibration::fit_hop(rows, file, 0);
    out += fmt::format("{}: {}; busbw factor {:.4g}, {} ring step{}\n", file, describe(f), ring.factor, ring.steps,
                       ring.steps == 1 ? "" : "s");
    out += hop_line("hop", fit.hop);
    if (gpu.empty()) gpu = f.gpu;
    const auto name = std::string(calibration::collective_name(f.collective)) + "_perf";
    if (collectives.find(name) == std::string::npos) {
      if (!collectives.empty()) collectives += ", ";
      collectives += name;
    }
    all.insert(all.end(), rows.begin(), rows.end());
  }
  // The hop written is fitted on every file's steps together: one hop, however it was measured.
  auto joint = files.size() == 1 ? calibration::fit_hop(all, files.front(), 0) : calibration::fit_hop(all, list, 0);
  joint.hop.pattern = files.size() == 1 ? all.front().pattern
                                        : fmt::format("nccl-tests {} ({} files; busbw per link, one ring step per row)",
                                                      collectives, files.size());
  if (files.size() > 1) {
    out += fmt::format("all {} files together:\n", files.size());
    out += hop_line("hop", joint.hop);
  }

  if (!dir.empty()) {
    HopRecord rec;
    rec.hardware = hw;
    rec.probe_name = gpu;
    rec.inter_node = inter;
    rec.hop = joint.hop;
    rec.fitted_from = "nccl-tests output " + models::join_list(files);
    rec.date = date_option(a);
    rec.notes = fmt::format("{}. Fitted by ringsim calibrate --from-nccl-tests over collective sizes of at least 1 MiB, "
                            "each as one ring step (bus bandwidth as the per-link figure, NVIDIA/nccl-tests doc/PERFORMANCE.md).",
                            joint.hop.pattern);
    out += write_hop(dir, rec);
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace ringsim::cli
