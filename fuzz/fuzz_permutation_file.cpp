// Fuzz target: permutation files (perm:FILE layouts). The first byte picks the ring size and
// the sequence length; a layout that loads must map token <-> (device, local) both ways.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "models/io/error.hpp"
#include "models/workload/layout.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ringsim::models;
  if (size < 1) return 0;
  const std::int64_t sp = 1 + data[0] % 4;
  const std::int64_t n_seq = sp * (1 + (data[0] >> 2) % 16);
  const auto& path = ringsim::fuzz::as_file(data + 1, size - 1);
  try {
    const auto l = Layout::make(LayoutSpec::parse("perm:" + path), n_seq, sp);
    for (std::int64_t t = 0; t < n_seq; ++t) {
      const auto p = l.place(t);
      if (p.device < 0 || p.device >= sp || l.token(p.device, p.local) != t) __builtin_trap();
    }
  } catch (const InputError&) {
  }
  return 0;
}
