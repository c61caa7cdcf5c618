#pragma once
// The attention kernel calls one layer of a ring scenario makes on each device, round by round,
// as the implementation's ring code issues them (configs/ring_steps/: the shapes per kind of K/V
// block), with the kernel-time model's time of each. A trace of that run holds the same calls in
// the same order, so its kernels can be given their shapes (calibrate --from-trace), and a
// synthetic trace can be written from them (the tests).
#include <cstdint>
#include <vector>

#include "models/families/kernel_time.hpp"
#include "models/scenario/scenario.hpp"

namespace ringsim::calibration {

struct RingCall {
  std::int64_t round = 0;
  models::KernelCall call;  // shape (heads, batch and head dim of one device), bottom-right causal
  models::KernelTime time;  // under the scenario's profile
};

// Per device (ring position 0 .. sp-1), one layer's calls in issue order; the backward issues the
// same calls in the same rounds. Device d holds the K/V block of device d - r in round r.
// InputError (field "impl") unless the scenario is a ring whose implementation times the flash
// kernel family by step shapes (ring-flash-attn, TransformerEngine's p2p ring, ...).
[[nodiscard]] std::vector<std::vector<RingCall>> ring_kernel_calls(const models::ResolvedScenario& s);

}  // namespace ringsim::calibration
