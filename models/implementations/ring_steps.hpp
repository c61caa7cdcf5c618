#pragma once
// The compute half of a ring library's protocol (models/implementations/protocol.hpp: the implementation's
// "protocol" names a file of configs/ring_steps/, shared by implementations that run the same
// ring code, e.g. ring-flash-attention and YunChang's vendored copy), read from its code: which
// attention kernel calls one ring step makes on which
// shapes for each kind of K/V block (the device's own, an earlier device's, a later device's),
// how it merges each call's partial output into the running one (memory-bound element-wise work,
// often in fp32) and what it does once per pass (the host's time per step and call is the profile's). What
// travels and what waits for what is the other half (Protocol's message fields). Shapes are
// relative to the block of c tokens a device holds ("c", "c/2", "c-1").
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/io/code_source.hpp"

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
// (rows x heads x head_dim) and of its keys (rows x kv_heads x head_dim). Its host-side work is
// the call's (Profile::host_call_s), measured with the call, unless the code's operations are
// counted (`host_ops`, each Profile::host_op_s: an eager merge, op by op).
struct MemoryOp {
  double q_bytes_per_element = 0;
  double kv_bytes_per_element = 0;
  double host_ops = 0;  // eager PyTorch operations (views and copies included) the host dispatches
  std::string what;
  // A code path that depends on the device's rank (ring-flash-attention's TorchScript merge: a
  // process whose first merges were whole-block ones runs its sliced merges unfused): devices
  // from `from_rank` on run memory op `from_rank_op` instead. -1: every rank runs this one.
  std::int64_t from_rank = -1;
  std::string from_rank_op;
};

struct StepCall {
  LengthExpr q, k;
  bool causal = false;     // the kernel's causal flag (bottom-right aligned when q and k differ)
  bool kernel = true;      // false: the step's element-wise work only (a skipped block's zero gradients)
  std::string fwd_merge;   // keys into RingSteps::memory_ops ("" for none)
  std::string bwd_merge;
};

// Whose K/V block a step works on, seen from the device holding the queries.
enum class StepClass { Diagonal = 0, Below = 1, Above = 2 };  // its own, an earlier device's, a later one's
[[nodiscard]] StepClass step_class(std::int64_t q_device, std::int64_t k_device) noexcept;
[[nodiscard]] std::string_view to_string(StepClass c) noexcept;

struct StepCalls {
  std::array<std::vector<StepCall>, 3> calls;  // by StepClass
  // Eager operations each step dispatches besides its calls and merges (the communicator's
  // buffers, isend/irecv, waits and stream syncs, the K/V views), per pass; each costs
  // Profile::host_op_s on top of host_step_s. 0 where host_step_s holds them as measured.
  double fwd_host_ops = 0, bwd_host_ops = 0;
  [[nodiscard]] const std::vector<StepCall>& of(StepClass c) const noexcept {
    return calls[static_cast<std::size_t>(c)];
  }
};

struct RingSteps {
  std::string name;
  std::string description;
  std::vector<CodeSource> sources;
  // std::less<>: looked up by string_view every step of every prediction, without a copy.
  std::map<std::string, std::map<std::string, StepCalls, std::less<>>, std::less<>> steps;  // mask family -> layout family -> calls
  // Mask family -> layout families the library runs with one varlen call per step over the
  // documents two blocks share (packed documents: no closed-form step shapes; timed from the
  // block's tile counts).
  std::map<std::string, std::vector<std::string>, std::less<>> varlen;
  std::map<std::string, MemoryOp, std::less<>> memory_ops;
  MemoryOp fwd_final, bwd_final;  // once per pass, over the device's whole block

  [[nodiscard]] bool empty() const noexcept { return steps.empty(); }
  // The calls for a mask and layout family; nullptr when the library has none (a varlen layout,
  // or one it does not run).
  [[nodiscard]] const StepCalls* plan(std::string_view mask_family, std::string_view layout_family) const;
  // Whether its ring runs this mask and layout family at all (steps or varlen calls).
  [[nodiscard]] bool runs(std::string_view mask_family, std::string_view layout_family) const;
  [[nodiscard]] const MemoryOp& memory_op(const std::string& op_name) const;  // empty name: no work
  // The op device `q_device` runs for `op_name` (its from_rank rule applied).
  [[nodiscard]] const MemoryOp& memory_op(const std::string& op_name, std::int64_t q_device) const;
  // The smallest from_rank among the memory ops of cls's calls, -1 when none has a rule: devices
  // from there on run another memory op than rank 0 for some call of `cls`.
  [[nodiscard]] std::int64_t rank_rule_from(const StepCalls& plan, StepClass cls) const;
  // "causal: contiguous, zigzag, striped; full: contiguous; docs (varlen): contiguous".
  [[nodiscard]] std::string offered() const;
  // InputError naming the file and field for anything malformed (a call naming a memory op
  // that is not there included).
  [[nodiscard]] static RingSteps from_json(const nlohmann::json& j, const std::string& file);
  [[nodiscard]] static RingSteps load_file(const std::string& path);
};

}  // namespace ringsim::models
