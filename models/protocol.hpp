#pragma once
// What an implementation's messages are and what waits for what: the part of its code that
// decides how a ring's K/V and dK/dV share the wire, how an all-gather is pipelined with
// compute, and whether Ulysses replicates KV heads. Read from the optional "protocol" object of
// configs/implementations/NAME.json; a file without it gets the defaults, which are ringsim's
// behaviour before implementations described their messages (docs/simulator.md).
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

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

struct MessageProtocol {
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

  // `j`: the "protocol" object or null (defaults). InputError naming the file and field.
  [[nodiscard]] static MessageProtocol from_json(const nlohmann::json* j, const std::string& file);
  [[nodiscard]] static std::string_view name(BackwardMessages b) noexcept;
};

}  // namespace ringsim::models
