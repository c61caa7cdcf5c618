// Fuzz target: PyTorch profiler traces (`ringsim trace summarize`), plain or gzip. Bad input must
// be an InputError; a summary must be finite, its busy and idle time must add up to the wall,
// and no more communication may be exposed than ran.
#include <cmath>
#include <cstdint>

#include "calibration/trace/kineto.hpp"
#include "calibration/trace/step_summary.hpp"
#include "calibration/trace/trace_text.hpp"
#include "fuzz/fuzz_support.hpp"
#include "models/catalog/catalog.hpp"
#include "models/io/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ringsim;
  static const auto classes =
      calibration::KernelClasses::load(calibration::KernelClasses::default_path(models::Catalog::default_root()));
  try {
    const auto& path = fuzz::as_file(data, size);
    // A small inflated-size limit: a gzip bomb must stop at it, within the fuzzer's memory limit.
    const auto trace = calibration::parse_kineto_trace(calibration::read_trace_text(path, std::int64_t{64} << 20), path);
    const auto s = calibration::summarize(trace, classes);
    for (const auto& st : s.steps) {
      if (!std::isfinite(st.wall_us) || !std::isfinite(st.busy_us) || st.idle_us < 0) __builtin_trap();
      if (st.exposed_communication_us > st.communication_us * (1 + 1e-9) + 1e-6) __builtin_trap();
      if (st.busy_us > st.wall_us * (1 + 1e-9) + 1e-6) __builtin_trap();
    }
  } catch (const models::InputError&) {
  }
  return 0;
}
