#include "models/program/workload_rows.hpp"

#include "models/families/attention_cost.hpp"
#include "models/program/program.hpp"

namespace ringsim::models {

std::int64_t workload_row_count(const ResolvedScenario& s) {
  if (!s.program->has_ring()) return s.spec.sp;
  const std::int64_t n = s.ring_scenario().workload->devices();
  return n * n;
}

void for_each_workload_row(const ResolvedScenario& s, const std::function<void(const WorkloadRow&)>& row) {
  const auto& prog = *s.program;
  WorkloadRow r;
  if (prog.has_ring()) {
    const auto& w = *s.ring_scenario().workload;
    const std::int64_t n = w.devices();
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const auto k = prog.kv_position(j, i);
        r.round = i;
        r.device = j;
        r.kv_block = k;
        r.stats = w.block(((j - k) % n + n) % n, j);
        // The last round's block has no next holder in the forward pass: nothing is sent.
        r.kv_bytes = i + 1 < n ? w.kv_block_bytes() : 0;
        row(r);
      }
    return;
  }
  // Every rank's kernel calls in one row (one head, one sequence), with the bytes it sends in
  // the forward pass's collectives.
  const auto& table = prog.compute.front();
  for (std::int64_t j = 0; j < s.spec.sp; ++j) {
    BlockStats total;
    for (const auto& call : table.lists[table.list_of[static_cast<std::size_t>(j)]])
      total.add(call_tiles(call, s.tile), call.batch / s.spec.batch);
    r.round = 0;
    r.device = j;
    r.kv_block = -1;
    r.stats = total;
    r.kv_bytes = prog.sent_bytes_fwd;
    row(r);
  }
}

}  // namespace ringsim::models
