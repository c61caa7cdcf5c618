#pragma once
// A layout as the user names it, parsed once at the edge (CLI flag, CSV cell, JSON field, GUI
// field): its family and parameters. Everything below takes this value; the Layout itself is
// built from it in resolve() (models/catalog/resolve.cpp), which knows n_seq, the ring size and,
// for the layouts derived from a mask or from packed documents, that mask or those documents.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim::models {

enum class LayoutFamily {
  Contiguous,         // contiguous (also written ring)
  Striped,            // striped
  Zigzag,             // zigzag
  Cyclic,             // cyclic:W
  Permutation,        // perm:FILE
  BucketStriped,      // bucket-striped (from a sparse mask)
  BucketRotated,      // bucket-rotated (from a hash mask)
  DocZigzag,          // doc-zigzag (from packed documents)
  DocZigzagDocMajor,  // doc-zigzag-docmajor
  Ptrr,               // ptrr[:B]
};

// torch's flex_attention BlockMask block size: ptrr's default block.
inline constexpr std::int64_t kDefaultPtrrBlock = 128;

class LayoutSpec {
 public:
  LayoutSpec() = default;  // contiguous
  // InputError (field "layout") for an unknown family or a malformed parameter.
  [[nodiscard]] static LayoutSpec parse(std::string_view text);

  [[nodiscard]] const std::string& text() const noexcept { return text_; }  // as written
  [[nodiscard]] LayoutFamily family() const noexcept { return family_; }
  // The name implementations list (configs/implementations/*.json "layouts"): contiguous for ring.
  [[nodiscard]] const std::string& family_name() const noexcept { return family_name_; }
  [[nodiscard]] std::int64_t width() const noexcept { return width_; }   // cyclic:W
  [[nodiscard]] std::int64_t block() const noexcept { return block_; }   // ptrr:B
  [[nodiscard]] const std::string& file() const noexcept { return file_; }  // perm:FILE
  // Built from the scenario's sparse mask / packed documents rather than from n_seq alone.
  [[nodiscard]] bool from_mask() const noexcept;
  [[nodiscard]] bool from_documents() const noexcept;
  // An explicit token order (a file, or one derived from a mask or documents): its size is
  // checked before it is built (models/scenario/size_checks.cpp).
  [[nodiscard]] bool is_permutation() const noexcept;

  friend bool operator==(const LayoutSpec& a, const LayoutSpec& b) noexcept { return a.text_ == b.text_; }

 private:
  std::string text_ = "contiguous";
  LayoutFamily family_ = LayoutFamily::Contiguous;
  std::string family_name_ = "contiguous";
  std::int64_t width_ = 0;
  std::int64_t block_ = kDefaultPtrrBlock;
  std::string file_;
};

// Every layout family ringsim can count; implementations offer subsets of them.
[[nodiscard]] const std::vector<std::string>& known_layout_families();
// Each of `texts` parsed (the lists of --layout and of grid files).
[[nodiscard]] std::vector<LayoutSpec> parse_layouts(const std::vector<std::string>& texts);
// Their texts, comma-separated (messages).
[[nodiscard]] std::string join_texts(const std::vector<LayoutSpec>& layouts);

}  // namespace ringsim::models
