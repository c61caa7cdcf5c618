#pragma once
// The host's time per ring step, fitted on runs of a ring library's step loop where the GPU's work
// is negligible (data/components/host/: ring-flash-attention's per-step operations at 128 tokens
// per rank, one process per rank, its communicator on a one-rank NCCL group). Such a run's wall
// time is the host's: the Python loop, the communicator's send/recv, commit and wait per step,
// and per attention call its wrapper and the merge (forward) or accumulations (backward). Per pass,
// two terms: seconds per step (Profile::host_step_s, host_bwd_step_s) and per call
// (host_call_s, host_bwd_call_s); a run's calls per step come from the library's own step plan
// (configs/ring_steps/), so the counts are the cost model's. Held out: leave one run out, and
// leave one layout out where the other layouts still tell the two terms apart (a ring whose every
// step calls once cannot: steps and calls are then proportional).
#include <cstdint>
#include <string>
#include <vector>

#include "models/implementations/ring_steps.hpp"

namespace ringsim::calibration {

struct HostRow {
  std::string gpu;       // the machine, as the file names it
  std::string layout;    // layout family: contiguous, zigzag, striped
  std::string pass;      // fwd or bwd
  std::int64_t devices = 0, rank = 0, tokens = 0;
  double seconds = 0;    // wall time of one pass of the step loop
  std::int64_t line = 0;
  // Filled by fit_host_steps from the step plan: steps run and attention calls made.
  double steps = 0, calls = 0;
};

// Steps and attention calls of `rank`'s pass in a causal ring of `devices` under `layout`, from
// the library's step plan (a call of zero length is not made).
struct HostCounts {
  double steps = 0, calls = 0;
};
[[nodiscard]] HostCounts host_counts(const models::RingSteps& steps, const std::string& layout, std::int64_t devices,
                                     std::int64_t rank, std::int64_t tokens);

struct HostLayoutScore {
  std::string layout;
  bool identified = false;  // whether the other layouts' runs tell steps from calls
  double held_out_mape = 0;
};

struct HostPassFit {
  std::string pass;
  double step_s = 0, call_s = 0, step_se = 0, call_se = 0;
  std::int64_t rows = 0;
  double in_sample_mape = 0, held_out_mape = 0;  // held out: leave one run out
  std::vector<HostLayoutScore> by_layout;
};

struct HostFit {
  std::vector<HostPassFit> passes;  // fwd, bwd (those present)
  std::vector<HostRow> rows;        // with counts
  std::vector<double> fitted_s, held_out_s;
};

// Weighted least squares on relative error, both terms >= 0. InputError (field "rows") for a pass
// with fewer than three runs or runs that cannot tell steps from calls.
[[nodiscard]] HostFit fit_host_steps(std::vector<HostRow> rows, const models::RingSteps& steps);

}  // namespace ringsim::calibration
