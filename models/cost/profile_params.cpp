#include "models/cost/profile_params.hpp"

#include <array>

namespace ringsim::models {

namespace {

// Bounds: efficiencies are fractions of a peak (a floor keeps a fit away from zero rates), fixed
// costs stay below what any measured row could hide, byte counts below a few passes over HBM.
constexpr bool kCommon = true, kFamily = false;
// attention_bwd_factor is the tile loop's FLOP count (5 products against 2), not a fit's freedom.
constexpr bool kFit = true, kFixed = false;
// The point-to-point limit and extra latency are absent from a profile unless set (0: none).
constexpr bool kWhenSet = true, kWritten = false;
constexpr std::array kParameters{
    ProfileParameter{"overlap", &Profile::overlap, 0, 1, kCommon, kFit, kWritten, "fraction of the ring transfer hidden behind compute"},
    ProfileParameter{"masked_tile_penalty", &Profile::masked_tile_penalty, 0, 2, kFamily, kFit, kWritten,
                     "extra cost of a tile holding masked pairs, as a fraction of its compute (mask built and applied "
                     "element-wise)"},
    ProfileParameter{"skipped_tile_cost", &Profile::skipped_tile_cost, 0, 1, kFamily, kFit, kWritten,
                     "fraction of a computed tile's cost that a skipped tile still costs"},
    ProfileParameter{"attention_efficiency", &Profile::attention_efficiency, 0.02, 1, kCommon, kFit, kWritten,
                     "fraction of peak reached inside attention tiles (matmul_efficiency held fixed)"},
    ProfileParameter{"round_overhead_s", &Profile::round_overhead_s, 0, 0.05, kCommon, kFit, kWritten,
                     "fixed seconds per ring round per layer and pass (sync, buffer swap)"},
    ProfileParameter{"tile_overhead_s", &Profile::tile_overhead_s, 0, 0.01, kCommon, kFit, kWritten, "fixed seconds per visited tile"},
    ProfileParameter{"link_efficiency", &Profile::link_efficiency, 0.02, 1, kCommon, kFit, kWritten,
                     "fraction of link bandwidth a ring transfer reaches"},
    ProfileParameter{"matmul_efficiency", &Profile::matmul_efficiency, 0.02, 1, kCommon, kFit, kWritten,
                     "fraction of peak reached by projection and MLP matmuls"},
    ProfileParameter{"sparse_kernel_efficiency", &Profile::sparse_kernel_efficiency, 0.05, 2, kFamily, kFit, kWritten,
                     "the sparse (index-based) kernel's attention efficiency relative to attention_efficiency"},
    ProfileParameter{"sparse_prep_bytes_per_element", &Profile::sparse_prep_bytes_per_element, 0, 1024, kFamily, kFit, kWritten,
                     "HBM bytes per token x head x head_dim element of the sparse gathers/scatter, per pass"},
    ProfileParameter{"hash_sort_bytes_per_token", &Profile::hash_sort_bytes_per_token, 0, 65536, kFamily, kFit, kWritten,
                     "HBM bytes per token x head of the hash mask's stable sort"},
    ProfileParameter{"masked_tile_s", &Profile::masked_tile_s, 0, 0.01, kFamily, kFit, kWritten,
                     "fixed seconds per tile holding masked pairs, whatever the heads (the tile's mask built once)"},
    ProfileParameter{"skipped_tile_s", &Profile::skipped_tile_s, 0, 0.01, kFamily, kFit, kWritten,
                     "fixed seconds per skipped tile (a loop step that tests and skips)"},
    ProfileParameter{"round_bytes_per_element", &Profile::round_bytes_per_element, 0, 2000, kFamily, kFit, kWritten,
                     "HBM bytes per element of the device's Q block moved each ring round regardless of tiles "
                     "(reshapes, transposes)"},
    ProfileParameter{"attention_bwd_efficiency", &Profile::attention_bwd_efficiency, 0.02, 1, kFamily, kFit, kWritten,
                     "fraction of peak the attention kernel's matrix unit reaches in the backward"},
    ProfileParameter{"cta_overhead_s", &Profile::cta_overhead_s, 0, 1e-3, kFamily, kFit, kWritten,
                     "fixed SM-seconds per thread block of the attention kernel (prologue, epilogue)"},
    ProfileParameter{"kernel_launch_s", &Profile::kernel_launch_s, 0, 1e-4, kFamily, kFit, kWhenSet,
                     "GPU seconds one launch of the attention kernels adds to a call (grid launch and drain)"},
    ProfileParameter{"solo_cta_gain", &Profile::solo_cta_gain, 0, 7, kFamily, kFit, kWhenSet,
                     "how much faster than its share of a full SM a CTA runs with fewer CTAs on the SM (0: none)"},
    ProfileParameter{"shared_memory_efficiency", &Profile::shared_memory_efficiency, 0.05, 1, kFamily, kFit, kWhenSet,
                     "fraction of shared-memory bandwidth a forward tile's operand reads and writes reach (0: no bound)"},
    ProfileParameter{"bwd_shared_memory_efficiency", &Profile::bwd_shared_memory_efficiency, 0.05, 1, kFamily, kFit,
                     kWhenSet,
                     "fraction of shared-memory bandwidth a backward tile's operand reads and writes reach (0: the "
                     "forward's)"},
    ProfileParameter{"softmax_overlap", &Profile::softmax_overlap, 0, 1, kFamily, kFit, kWritten,
                     "fraction of a tile's softmax work (exp, fp32) hidden behind its matrix-unit work"},
    ProfileParameter{"host_step_s", &Profile::host_step_s, 0, 0.01, kFamily, kFit, kWritten,
                     "host seconds to issue one forward ring step besides its calls (loop, communicator)"},
    ProfileParameter{"host_call_s", &Profile::host_call_s, 0, 0.01, kFamily, kFit, kWritten,
                     "host seconds per forward attention call with its merge"},
    ProfileParameter{"host_bwd_step_s", &Profile::host_bwd_step_s, 0, 0.01, kFamily, kFit, kWritten,
                     "host seconds to issue one backward ring step besides its calls (two communicators)"},
    ProfileParameter{"host_bwd_call_s", &Profile::host_bwd_call_s, 0, 0.01, kFamily, kFit, kWritten,
                     "host seconds per backward attention call with its accumulations"},
    ProfileParameter{"host_op_s", &Profile::host_op_s, 0, 0.001, kFamily, kFit, kWhenSet,
                     "host seconds per eager PyTorch operation a ring step or merge dispatches (configs/ring_steps "
                     "host_ops)"},
    ProfileParameter{"host_collective_s", &Profile::host_collective_s, 0, 0.01, kCommon, kFit, kWhenSet,
                     "host seconds per collective call of the library's context-parallel code (copies, NCCL call)"},
    ProfileParameter{"host_collective_peer_s", &Profile::host_collective_peer_s, 0, 0.01, kCommon, kFit, kWhenSet,
                     "host seconds a collective call adds per peer of its group (one send and one receive each)"},
    ProfileParameter{"memory_efficiency", &Profile::memory_efficiency, 0.05, 1, kCommon, kFit, kWritten,
                     "fraction of HBM bandwidth element-wise ops reach"},
    ProfileParameter{"stream_read_efficiency", &Profile::stream_read_efficiency, 0.05, 1, kCommon, kFixed, kWhenSet,
                     "fraction of HBM bandwidth a streaming read reaches (a decode step's cache and weights)"},
    ProfileParameter{"p2p_latency_s", &Profile::p2p_latency_s, 0, 2e-3, kCommon, kFit, kWhenSet,
                     "extra latency of one point-to-point transfer of the library (kernel launch, handshake)"},
    ProfileParameter{"p2p_bandwidth_bytes_per_s", &Profile::p2p_bandwidth_bytes_per_s, 5e9, 5e11, kCommon, kFit,
                     kWhenSet,
                     "the most one point-to-point transfer of the library reaches, bytes/s"},
    ProfileParameter{"attention_bwd_factor", &Profile::attention_bwd_factor, 0.5, 10, kFamily, kFixed, kWritten,
                     "backward attention FLOPs over forward FLOPs of the tile loop"},
};

}  // namespace

std::span<const ProfileParameter> profile_parameters() noexcept { return kParameters; }

const ProfileParameter* find_profile_parameter(std::string_view name) noexcept {
  for (const auto& p : kParameters)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace ringsim::models
