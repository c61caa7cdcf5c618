#pragma once
// An implementation's protocol: what it does around its attention kernel, read from its code
// (the optional "protocol" object of configs/implementations/NAME.json). Two halves of one
// description:
// - messages and what waits for what: how a ring's K/V and dK/dV share the wire, how an
//   all-gather is pipelined with compute, whether Ulysses replicates KV heads, the accumulators'
//   dtype. The program (models/program/program.hpp) and both solvers read them;
// - the ring step's compute (models/implementations/ring_steps.hpp; "ring_steps" names a file of
//   configs/ring_steps/): which kernel calls each step makes on which shapes, the merges of
//   partial outputs, the pass's final conversions, the host's operations. Kernel families that
//   time a library's calls (AttentionCost "flash") read them.
// A file without the object gets the defaults, which are ringsim's behaviour before
// implementations described their protocols (docs/simulator.md).
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "models/implementations/ring_steps.hpp"

namespace ringsim::models {

// How the backward ring moves K/V blocks and the travelling dK/dV accumulators.
enum class BackwardMessages : std::uint8_t {
  // Separate transfers that may be on the wire at the same time and share the hop fairly: K/V
  // of round s leaves as soon as the successor's buffer is free, dK/dV once round s is
  // complete (separate streams or process groups; InternEvo's dkv_*_window groups).
  Concurrent,
  // Separate messages queued on one communicator: one at a time, in the order they were
  // issued (ring-flash-attention: kv_comm and d_kv_comm are two RingComm objects on the same
  // process group, so their batched send/recv run on one NCCL communicator and stream).
  Ordered,
  // One message per round carrying the K/V block of the next round and the accumulator of the
  // round just finished (TransformerEngine p2p: the [KV | dKV] buffer).
  Fused,
};

struct Protocol {
  BackwardMessages backward = BackwardMessages::Concurrent;
  // After the last backward round the accumulators travel one more hop, home. TE's backward
  // walks the ring the other way starting from the forward's last block, so its accumulators
  // end at home after N - 1 hops (false).
  bool dkv_home_hop = true;
  // All-gather strategies: K/V gathered in slices of this many KV heads, the next slice's
  // all-gather overlapping the current slice's kernel (ring-flash-attention's llama3 variant,
  // heads_k_stride); 0: all heads at once, before any compute (TE all_gather, not overlapped).
  std::int64_t allgather_heads_stride = 0;
  // All-gather of K and of V as separate collectives (TE gathers k then v).
  bool allgather_separate_kv = false;
  // The backward gathers K/V again (TE and ring-flash-attention keep only the local block);
  // false: the forward's gathered K/V are kept for the backward (torch's flex path saves them).
  bool allgather_backward_regather = true;
  // Ulysses with a degree above the KV heads (per tensor-parallel rank): KV heads repeated up to
  // the degree before the all-to-all (verl's repeat_kv), at replication x the K/V traffic;
  // false: such a degree is refused (TE asserts num_heads % cp_size == 0 for K and V).
  bool kv_head_replication = false;
  // dtype bytes of the travelling dK/dV accumulators as the code sends them (TE: the K/V dtype;
  // ring-flash-attention: fp32); 0: the profile's dkv_wire_bytes.
  std::int64_t dkv_wire_bytes = 0;
  // Per ring step: kernel calls, merges, host work; empty for implementations whose ring rounds
  // are timed as one tile loop per block (kernel family "blockwise").
  RingSteps ring_steps;

  // `j`: the "protocol" object or null (defaults); `ring_steps_dir`: where "ring_steps" files are
  // (configs/ring_steps). InputError naming the file and field.
  [[nodiscard]] static Protocol from_json(const nlohmann::json* j, const std::string& file,
                                          const std::string& ring_steps_dir);
  [[nodiscard]] static std::string_view name(BackwardMessages b) noexcept;
};

}  // namespace ringsim::models
