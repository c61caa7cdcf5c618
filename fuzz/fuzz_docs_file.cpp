// Fuzz target: document-length files (--docs FILE), n_seq from the first byte, on a ring of 1
// to 4 devices. Lengths that load must sum to n_seq; the document layouts that accept them
// must be permutations; and the per-document causal mask's block counts must equal the
// brute-force count of its allowed() predicate over those layouts (a differential test).
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "models/workload/documents.hpp"
#include "models/io/error.hpp"
#include "models/workload/layout.hpp"
#include "models/workload/mask.hpp"
#include "models/workload/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ringsim::models;
  if (size < 2) return 0;
  const std::int64_t sp = 1 + data[0] % 4;
  const std::int64_t n_seq = 8 * sp * (1 + data[1] % 4);  // 8 to 128 tokens
  const auto& path = ringsim::fuzz::as_file(data + 2, size - 2);
  try {
    const auto docs = Documents::make(DocumentsSpec::parse(path), n_seq);
    if (docs.total() != n_seq || docs.lengths.empty()) __builtin_trap();
    for (const auto l : docs.lengths)
      if (l < 1) __builtin_trap();
    const auto mask = make_documents(docs.starts(), n_seq);
    for (const char* spec : {"contiguous", "striped", "doc-zigzag", "doc-zigzag-docmajor", "ptrr:2"}) {
      std::unique_ptr<Layout> layout;
      try {
        const auto parsed = LayoutSpec::parse(spec);
        layout = std::make_unique<Layout>(parsed.from_documents() ? document_layout(parsed, docs, sp)
                                                                  : Layout::make(parsed, n_seq, sp));
      } catch (const InputError&) {
        continue;  // lengths a layout cannot take (not multiples of its chunks)
      }
      std::vector<char> seen(static_cast<std::size_t>(n_seq), 0);
      for (std::int64_t j = 0; j < sp; ++j)
        for (std::int64_t a = 0; a < layout->block(); ++a) {
          const auto t = layout->token(j, a);
          if (t < 0 || t >= n_seq || seen[static_cast<std::size_t>(t)]++) __builtin_trap();
        }
      const TileShape tile{4, 4};
      for (std::int64_t j = 0; j < sp; ++j)
        for (std::int64_t k = 0; k < sp; ++k) {
          const auto fast = Workload::count_block(*layout, *mask, j, k, tile);
          std::int64_t brute = 0;
          for (std::int64_t a = 0; a < layout->block(); ++a)
            for (std::int64_t b = 0; b < layout->block(); ++b) brute += mask->allowed(layout->token(j, a), layout->token(k, b), 0);
          if (fast.allowed_pairs != brute) __builtin_trap();
        }
    }
  } catch (const InputError&) {
  }
  return 0;
}
