// Fuzz target: the mask files (docs:FILE document starts, qkfile:FILE kept positions,
// hashfile:FILE buckets), chosen by the first byte, on a small fixed scenario. A mask that
// loads is then counted tile by tile and checked against the brute-force count of its
// allowed() predicate: a differential test of the fast counts on fuzzed masks.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "models/io/error.hpp"
#include "models/workload/layout.hpp"
#include "models/workload/mask.hpp"
#include "models/workload/sparse_io.hpp"
#include "models/workload/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ringsim::models;
  if (size < 2) return 0;
  const int kind = data[0] % 3;
  const std::int64_t sp = 1 + data[1] % 4;  // ring of 1 to 4 devices
  const std::int64_t n_seq = 16 * sp, heads = 2;
  const auto& path = ringsim::fuzz::as_file(data + 2, size - 2);
  try {
    const std::string spec = (kind == 0 ? "docs:" : kind == 1 ? "qkfile:" : "hashfile:") + path;
    const auto mask = kind == 0 ? make_mask(MaskSpec::parse(spec), n_seq) : make_sparse_mask(MaskSpec::parse(spec), n_seq, heads, 1);
    for (const auto* layout_spec : {"contiguous", "striped", "zigzag"}) {
      const auto layout = Layout::make(LayoutSpec::parse(layout_spec), n_seq, sp);
      const TileShape tile{4, 4};
      for (std::int64_t j = 0; j < sp; ++j)
        for (std::int64_t k = 0; k < sp; ++k) {
          const auto fast = Workload::count_block(layout, *mask, j, k, tile);
          std::int64_t brute = 0;
          for (std::int64_t h = 0; h < mask->heads(); ++h)
            for (std::int64_t a = 0; a < layout.block(); ++a)
              for (std::int64_t b = 0; b < layout.block(); ++b) brute += mask->allowed(layout.token(j, a), layout.token(k, b), h);
          if (fast.allowed_pairs != brute) __builtin_trap();
        }
    }
  } catch (const InputError&) {
  }
  return 0;
}
