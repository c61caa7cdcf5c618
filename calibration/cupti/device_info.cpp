#include "calibration/cupti/device_info.hpp"

#include <cuda_runtime_api.h>

#include <stdexcept>

namespace ringsim::calibration {
namespace {

void check(cudaError_t code, const char* what) {
  if (code != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")");
}

std::int32_t attribute(cudaDeviceAttr attr, std::int32_t device, const char* what) {
  int value = 0;
  check(cudaDeviceGetAttribute(&value, attr, device), what);
  return value;
}

}  // namespace

DeviceInfo query_device_info(std::int32_t device) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  DeviceInfo info;
  info.index = device;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  // CUDA 13 dropped the clock fields from cudaDeviceProp; the attributes remain.
  info.sm_clock_khz = attribute(cudaDevAttrClockRate, device, "cudaDevAttrClockRate");
  info.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, device, "cudaDevAttrMemoryClockRate");
  info.memory_bus_bits = prop.memoryBusWidth;
  info.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  info.l2_bytes = prop.l2CacheSize;
  info.shared_per_sm_bytes = static_cast<std::int32_t>(prop.sharedMemPerMultiprocessor);
  check(cudaDriverGetVersion(&info.driver_version), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&info.runtime_version), "cudaRuntimeGetVersion");
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess) info.pci_bus_id = bus;
  return info;
}

std::vector<std::pair<std::string, std::string>> csv_fields(const DeviceInfo& info) {
  const auto s = [](auto v) { return std::to_string(v); };
  return {{"device_index", s(info.index)},
          {"device_name", info.name},
          {"compute_capability", s(info.cc_major) + "." + s(info.cc_minor)},
          {"sm_count", s(info.sm_count)},
          {"sm_clock_khz", s(info.sm_clock_khz)},
          {"memory_clock_khz", s(info.memory_clock_khz)},
          {"memory_bus_bits", s(info.memory_bus_bits)},
          {"memory_bytes", s(info.memory_bytes)},
          {"l2_bytes", s(info.l2_bytes)},
          {"shared_per_sm_bytes", s(info.shared_per_sm_bytes)},
          {"driver_version", s(info.driver_version)},
          {"runtime_version", s(info.runtime_version)},
          {"pci_bus_id", info.pci_bus_id}};
}

}  // namespace ringsim::calibration
