#pragma once
// What a kernel timing was measured on, written beside every timing so that a calibration CSV
// says which GPU, clocks and software stack its numbers belong to.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ringsim::calibration {

struct DeviceInfo {
  std::int32_t index = 0;
  std::string name;
  std::int32_t cc_major = 0;
  std::int32_t cc_minor = 0;
  std::int32_t sm_count = 0;
  std::int32_t sm_clock_khz = 0;      // peak, as the driver reports it
  std::int32_t memory_clock_khz = 0;  // peak
  std::int32_t memory_bus_bits = 0;
  std::int64_t memory_bytes = 0;
  std::int32_t l2_bytes = 0;
  std::int32_t shared_per_sm_bytes = 0;
  std::int32_t driver_version = 0;   // e.g. 13000 for CUDA 13.0
  std::int32_t runtime_version = 0;  // likewise
  std::string pci_bus_id;
};

// Throws std::runtime_error when the device cannot be queried (no driver, bad index).
[[nodiscard]] DeviceInfo query_device_info(std::int32_t device);

// (column, value) pairs for a CSV row, units in the column names; the same columns every time.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> csv_fields(const DeviceInfo& info);

}  // namespace ringsim::calibration
