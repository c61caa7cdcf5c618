#pragma once
// A mask as the user names it, parsed once at the edge: its family and parameters. The Mask is
// built from it in resolve() (models/catalog/resolve.cpp), which knows n_seq, the model's heads
// (one sparse mask per head) and the seed: make_mask (mask.hpp), make_sparse_mask (sparse_io.hpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim::models {

enum class MaskFamily {
  Causal,     // causal
  Full,       // full
  Window,     // window:W
  Documents,  // docs:FILE (document starts), or the packed documents of --docs
  QKDrop,     // qkdrop:P
  Hash,       // hash:NB, hash:NB:zipf:S
  Lsh,        // lsh:NB[:D]
  QKFile,     // qkfile:PATH
  HashFile,   // hashfile:PATH
};

class MaskSpec {
 public:
  MaskSpec() = default;  // causal
  // InputError (field "mask") for an unknown family or a malformed parameter.
  [[nodiscard]] static MaskSpec parse(std::string_view text);
  // Per-document causal attention over packed documents given apart from the mask (--docs):
  // written "docs", the family implementations list for it.
  [[nodiscard]] static MaskSpec packed_documents();

  [[nodiscard]] const std::string& text() const noexcept { return text_; }  // as written
  [[nodiscard]] MaskFamily family() const noexcept { return family_; }
  // The name implementations list (configs/implementations/*.json "masks").
  [[nodiscard]] const std::string& family_name() const noexcept { return family_name_; }
  // Index-based (SCFA) masks: one per attention head, generated from the seed or read from a file.
  [[nodiscard]] bool sparse() const noexcept;
  [[nodiscard]] std::int64_t window() const noexcept { return window_; }  // window:W
  [[nodiscard]] double drop_rate() const noexcept { return rate_; }        // qkdrop:P
  [[nodiscard]] std::int64_t buckets() const noexcept { return buckets_; } // hash, lsh
  [[nodiscard]] double zipf() const noexcept { return zipf_; }             // hash:NB:zipf:S; 0 uniform
  [[nodiscard]] std::int64_t dim() const noexcept { return dim_; }         // lsh:NB:D
  [[nodiscard]] const std::string& file() const noexcept { return file_; } // docs, qkfile, hashfile

  friend bool operator==(const MaskSpec& a, const MaskSpec& b) noexcept { return a.text_ == b.text_; }

 private:
  std::string text_ = "causal";
  MaskFamily family_ = MaskFamily::Causal;
  std::string family_name_ = "causal";
  std::int64_t window_ = 0;
  double rate_ = 0;
  std::int64_t buckets_ = 0;
  double zipf_ = 0;
  std::int64_t dim_ = 64;
  std::string file_;
};

// Every mask family ringsim can count; implementations offer subsets of them.
[[nodiscard]] const std::vector<std::string>& known_mask_families();

}  // namespace ringsim::models
