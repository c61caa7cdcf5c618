#pragma once
// What a ring library does in one step, read from its code (configs/implementations:
// "ring_protocol"): which attention kernel calls it makes on which shapes for each kind of K/V
// block (the device's own, an earlier device's, a later device's), how it merges each call's
// partial output into the running one (memory-bound element-wise work, often in fp32), what it
// does once per pass, how much host-side work a step takes, and what travels in which dtype.
// Shapes are relative to the block of c tokens a device holds ("c", "c/2", "c-1").
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ringsim::models {

// A length c / div + add (div >= 1), as written ("c", "c/2", "c-1", "c/2+1").
struct LengthExpr {
  std::int64_t div = 1;
  std::int64_t add = 0;
  std::string text = "c";
  [[nodiscard]] std::int64_t of(std::int64_t c) const noexcept { return c / div + add; }
  // Throws InputError naming `field` for anything but c[/K][+-J].
  [[nodiscard]] static LengthExpr parse(std::string_view text, const std::string& file, const std::string& field);
};

// Element-wise work around a kernel call: HBM bytes per element of the call's queries
// (rows x heads x head_dim) and of its keys (rows x kv_heads x head_dim), and the host-side
// operations (kernel launches, fused element-wise calls) it takes.
struct MemoryOp {
  double q_bytes_per_element = 0;
  double kv_bytes_per_element = 0;
  std::int64_t host_ops = 0;
  std::string what;
};

struct StepCall {
  LengthExpr q, k;
  bool causal = false;     // the kernel's causal flag (bottom-right aligned when q and k differ)
  std::string fwd_merge;   // keys into RingProtocol::memory_ops ("" for none)
  std::string bwd_merge;
};

// Whose K/V block a step works on, seen from the device holding the queries.
enum class StepClass { Diagonal = 0, Below = 1, Above = 2 };  // its own, an earlier device's, a later one's
[[nodiscard]] StepClass step_class(std::int64_t q_device, std::int64_t k_device) noexcept;
[[nodiscard]] std::string_view to_string(StepClass c) noexcept;

struct StepPlan {
  std::array<std::vector<StepCall>, 3> calls;  // by StepClass
  [[nodiscard]] const std::vector<StepCall>& of(StepClass c) const noexcept {
    return calls[static_cast<std::size_t>(c)];
  }
};

// Messages as the library sends them (data for the simulator's protocol; the analytic model
// reads the dtypes).
struct MessageProtocol {
  std::int64_t kv_dtype_bytes = 2;
  std::int64_t dkv_dtype_bytes = 4;
  bool kv_one_message = false;       // K and V concatenated into one buffer
  bool dkv_with_kv = false;          // dK/dV share a message with the next K/V
  bool dkv_own_communicator = false; // dK/dV go over a communicator of their own
  std::string notes;
};

struct RingProtocol {
  std::map<std::string, std::map<std::string, StepPlan>> steps;  // mask family -> layout family -> plan
  std::map<std::string, MemoryOp> memory_ops;
  MemoryOp fwd_final, bwd_final;  // once per pass, over the device's whole block
  std::int64_t host_ops_per_step_fwd = 0, host_ops_per_step_bwd = 0;
  std::int64_t host_ops_per_call_fwd = 1, host_ops_per_call_bwd = 1;
  MessageProtocol messages;

  [[nodiscard]] bool empty() const noexcept { return steps.empty(); }
  // The plan for a mask and layout family; nullptr when the library has none.
  [[nodiscard]] const StepPlan* plan(std::string_view mask_family, std::string_view layout_family) const;
  [[nodiscard]] const MemoryOp& memory_op(const std::string& name) const;  // empty name: no work
  // "causal: contiguous, zigzag, striped; full: contiguous".
  [[nodiscard]] std::string offered() const;
  [[nodiscard]] static RingProtocol from_json(const nlohmann::json& j, const std::string& file);
};

}  // namespace ringsim::models
