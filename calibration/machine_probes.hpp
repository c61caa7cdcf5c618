#pragma once
// Fitting a machine's shared resources to published probes (data/components/links/pcie_probes.csv,
// written by scripts/normalize-pcie-probes.py; one machine description per probed machine in
// data/components/machines/). A probe row is a set of transfers that ran at once (a
// p2pBandwidthLatencyTest cell, a p2pmark pattern, a multi-flow test) with the rate or latency it
// measured, or an nccl-tests collective with its time; the machine's free capacities (its JSON's
// "free" list, an inner list being one value several identical resources share) are fitted on log
// error by the bounded Levenberg-Marquardt of calibration/fit.hpp, and every row is scored by a fit
// to the machine's other rows (leave one row out), in time: a rate's error is its transfer
// time's.
//
// What a row predicts (models/transport/):
//   uni, bidir, flows, staggered, single_reader, all_pairs: the transfers' max-min fair rates
//     (flow_GBps: the first transfer's, sum_GBps: all of them), each rate its bytes over its route's
//     latency plus its fluid time;
//   latency: the first transfer's route latency;
//   all_reduce, all_gather, reduce_scatter, alltoall, sendrecv: NCCL's collective over the group
//     (time_us, or busbw_GBps by nccl-tests' conventions).
// Rows of patterns no model covers (a custom one-shot all-reduce kernel, DeepEP's expert dispatch)
// are listed as not modelled and neither fitted nor scored.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/hardware/machine.hpp"
#include "models/transport/collectives.hpp"

namespace ringsim::calibration {

struct MachineProbeRow {
  std::string machine, source, pattern, metric, note;
  std::vector<models::transport::Transfer> transfers;  // point-to-point patterns
  std::vector<std::int64_t> group;                      // collectives
  double bytes = 0;                                     // per transfer, or the collective's size
  double value = 0;                                     // as published (GB/s, us)
  std::int64_t line = 0;
  [[nodiscard]] bool collective() const noexcept { return !group.empty(); }
  [[nodiscard]] bool modelled() const noexcept;
  // Whether the row is a rate (its time error is the inverse rate's) rather than a time.
  [[nodiscard]] bool rate() const noexcept;
};

// Rows from a parsed CSV (columns machine, source, pattern, transfers, bytes, metric, value, note);
// InputError naming file, line and column for anything malformed.
[[nodiscard]] std::vector<MachineProbeRow> probe_rows(const std::string& file, const std::vector<std::string>& header,
                                               const std::vector<std::vector<std::string>>& cells,
                                               const std::vector<std::int64_t>& lines);

// A probed machine's description: its "machine" block (models/hardware/machine.hpp), GPUs and
// nodes, the NVLink port of NVSwitch machines, and what is free.
class ProbeMachine {
 public:
  [[nodiscard]] static ProbeMachine load(const std::string& path);
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::int64_t nodes() const noexcept { return nodes_; }
  [[nodiscard]] std::int64_t devices() const noexcept { return gpus_ * nodes_; }
  // Free values, one per group (an inner list of paths shares one value): names and current values.
  [[nodiscard]] const std::vector<std::vector<std::string>>& free() const noexcept { return free_; }
  [[nodiscard]] std::vector<double> values() const;
  // The description with the free groups set to `values` (a link whose both-ways capacity falls
  // below its one-way figure gets the one-way figure lowered to it, as one direction cannot carry
  // more than both; one whose both-ways capacity exceeds twice one way is capped there).
  [[nodiscard]] nlohmann::json with(const std::vector<double>& values) const;
  [[nodiscard]] models::MachineSpec spec(const nlohmann::json& doc) const;
  [[nodiscard]] const std::string& file() const noexcept { return file_; }

 private:
  std::string file_, name_;
  nlohmann::json doc_;
  std::int64_t gpus_ = 1, nodes_ = 1;
  std::vector<std::vector<std::string>> free_;
};

// The value a row measures, predicted on `machine` (GB/s or us as the row's metric).
[[nodiscard]] double predict_probe(const models::MachineSpec& machine, std::int64_t nodes, const MachineProbeRow& row);
[[nodiscard]] double predict_probe_on(const models::transport::Fabric& fabric, const MachineProbeRow& row);

struct MachineFit {
  std::vector<std::string> names;  // one per free group (its paths joined by '+')
  std::vector<double> values, std_errors;
  std::vector<double> predicted, held_out;  // per modelled row (of the rows given), NaN for the others
  nlohmann::json fitted;                    // the description with the fitted values
  // Leave-one-row-out time error per pattern, over rate rows and collectives of >= 1 MB.
  std::map<std::string, std::pair<double, std::int64_t>> held_out_mape;
  std::map<std::string, std::pair<double, std::int64_t>> in_sample_mape;
};

// Fits `machine` on the modelled rows of `rows` that name it; with nothing free the rows are
// predicted from the description (a score, not a fit). Throws InputError when a row's devices
// are outside the machine or there are fewer rows than free values.
[[nodiscard]] MachineFit fit_machine(const ProbeMachine& machine, const std::vector<MachineProbeRow>& rows,
                                     bool leave_one_out = true);

}  // namespace ringsim::calibration
