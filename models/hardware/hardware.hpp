#pragma once
// Accelerator and interconnect specs, read from configs/hardware/*.json, where every figure
// carries the public source it came from ({"value": ..., "source": ...}).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/hardware/machine.hpp"
#include "models/hardware/point_to_point.hpp"

namespace ringsim::models {

enum class Precision { BF16, FP16, TF32, FP32, FP8 };

[[nodiscard]] std::string_view to_string(Precision p) noexcept;
[[nodiscard]] Precision parse_precision(std::string_view text);  // "bf16", "fp16", "tf32", "fp32", "fp8"

struct Hardware {
  std::string name;
  std::string file;  // the file it was read from (errors name it); empty when built in code
  std::string description;
  std::string kind;  // "gpu" or "tpu"
  std::string topology;
  // Dense peak FLOP/s by precision; nullopt where the device has no such mode.
  std::optional<double> peak_bf16_per_s, peak_fp16_per_s, peak_tf32_per_s, peak_fp32_per_s, peak_fp8_per_s;
  // The fraction of the FP8 peak an FP8 GEMM reaches over the fraction of the BF16 peak a BF16
  // GEMM reaches ("fp8_gemm_relative_efficiency", sourced): measured GEMM pairs on
  // the architecture where the file gives it, 1 (the same fraction: derived, not measured) where
  // it does not.
  double fp8_gemm_relative_efficiency = 1;
  double hbm_bytes = 0;
  double hbm_bandwidth_bytes_per_s = 0;
  std::int64_t devices_per_node = 1;
  double intra_link_bandwidth_bytes_per_s = 0;  // per device, one direction
  double intra_link_latency_s = 0;
  // NVLinks from one GPU into its node's NVSwitch fabric (intra_node.nvlinks; 0 where the file gives
  // none: PCIe cards, TPUs). NCCL sizes a communicator's channels by it (transport/nccl_ctas.hpp).
  std::int64_t nvlinks_per_gpu = 0;
  double inter_node_bandwidth_bytes_per_s = 0;  // per device
  double inter_node_latency_s = 0;
  // Width of the matrix unit's operand tiles (TPU MXU: 128 x 128 systolic array). A matmul
  // dimension that is not a multiple of it is padded up to one, so the padded part costs time
  // but does no useful work. 1 (the default, when the file has no such figure) models no padding.
  std::int64_t matrix_unit_width = 1;
  // How a GPU runs a kernel (configs/hardware: "compute_units", each figure sourced): streaming
  // multiprocessors (compute units on AMD), the clock the peak figures are quoted at, the
  // special-function unit's exp2 results per clock per SM, and the shared memory and registers
  // that decide how many thread blocks (CTAs) an SM holds at once. 0 where the file gives none
  // (TPUs): kernel-level timing (models/families/kernel_time.hpp) needs them.
  std::int64_t sm_count = 0;
  // CUDA compute capability x 10 (90 for 9.0): libraries choose their attention kernel by it
  // (Implementation::kernel_for). 0 where the file gives none (AMD, TPUs).
  std::int64_t compute_capability = 0;
  double sm_clock_hz = 0;
  double sfu_ops_per_clock_per_sm = 0;
  std::int64_t shared_memory_per_sm_bytes = 0;
  // The most shared memory one CTA may opt in to (cudaDevAttrMaxSharedMemoryPerBlockOptin: 1 KB
  // below the SM's on NVIDIA parts, which the runtime keeps per CTA). Launch code picks tiles by
  // it (FlashAttention-2's backward). The file's shared_memory_per_sm_bytes where it gives none.
  std::int64_t shared_memory_per_block_bytes = 0;
  // Shared-memory bytes an SM serves per clock (32 banks x 4 bytes on NVIDIA GPUs); 0 where the
  // file gives none: no shared-memory bound on kernel tiles.
  double shared_memory_bytes_per_clock_per_sm = 0;
  std::int64_t registers_per_sm = 0;
  // Latency of one dependent global-memory load (a loop step that waits for its load), seconds.
  double memory_latency_s = 0;
  std::vector<std::string> sources;
  // The node the GPU sits in, as shared resources (models/hardware/machine.hpp): the file's
  // "machine" block, else the flat machine of the intra_node and inter_node figures above.
  MachineSpec machine;
  // Ring hops as measured on this hardware (configs/links/NAME.json, attached by the catalog);
  // absent: the link spec at the profile's link_efficiency.
  std::optional<PointToPoint> point_to_point;

  [[nodiscard]] bool has_compute_units() const noexcept {
    return sm_count > 0 && sm_clock_hz > 0 && sfu_ops_per_clock_per_sm > 0 && shared_memory_per_sm_bytes > 0 &&
           registers_per_sm > 0;
  }

  // `n` rounded up to a multiple of matrix_unit_width: the size the matrix unit really works on.
  [[nodiscard]] std::int64_t padded_to_matrix_unit(std::int64_t n) const noexcept {
    return (n + matrix_unit_width - 1) / matrix_unit_width * matrix_unit_width;
  }

  // Throws InputError when the device has no such precision.
  [[nodiscard]] double peak_flops_per_s(Precision p) const;

  [[nodiscard]] static Hardware from_json(const nlohmann::json& j, const std::string& file);
  [[nodiscard]] static Hardware load_file(const std::string& path);
};

// The check every command makes of a topology the user names for a mesh (simulate, predict and
// sweep under the simulator, and the analytic sweep through the topology's node size): it must
// hold the mesh's devices, and a mesh spanning several nodes takes whole nodes (schedulers
// allocate nodes, and the analytic model counts the hops that leave a node as if every node were
// full): nodes:3x3 cannot host 8 ranks. InputError (field "topology") otherwise.
void check_topology_hosts(const std::string& topology, std::int64_t topology_devices, std::int64_t devices_per_node,
                          std::int64_t mesh_devices);

}  // namespace ringsim::models
