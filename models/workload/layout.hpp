#pragma once
// Which device owns which token, and where in its local block: the partition of one sequence
// over the sp devices of a ring. Every layout maps global token <-> (device, local index) both
// ways, and describes a range of local indices as arithmetic progressions of global positions,
// which is what lets masks count allowed pairs per tile in closed form.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload/layout_spec.hpp"

namespace ringsim::models {

enum class LayoutKind { Contiguous, Striped, Zigzag, BlockCyclic, Permutation };

// Global positions start, start + stride, ..., start + (count - 1) * stride (stride >= 1).
struct Progression {
  std::int64_t start = 0;
  std::int64_t stride = 1;
  std::int64_t count = 0;
  [[nodiscard]] std::int64_t last() const noexcept { return start + (count - 1) * stride; }
  friend bool operator==(const Progression&, const Progression&) = default;
};

struct Placement {
  std::int64_t device = 0;
  std::int64_t local = 0;
  friend bool operator==(const Placement&, const Placement&) = default;
};

class Layout {
 public:
  // Factories validate their arguments and throw InputError (n_seq divisible by n_dev and by
  // the layout's granularity, positive sizes).
  [[nodiscard]] static Layout contiguous(std::int64_t n_seq, std::int64_t n_dev);
  [[nodiscard]] static Layout striped(std::int64_t n_seq, std::int64_t n_dev);
  // 2N chunks of c/2 tokens; device j holds chunk j then chunk 2N-1-j, in that local order.
  [[nodiscard]] static Layout zigzag(std::int64_t n_seq, std::int64_t n_dev);
  // Stripes of w tokens dealt round-robin: token t -> device (t div w) mod N.
  [[nodiscard]] static Layout block_cyclic(std::int64_t n_seq, std::int64_t n_dev, std::int64_t width);
  // tokens_in_slot_order[d * c + l] = global token at local index l of device d.
  [[nodiscard]] static Layout permutation(std::vector<std::int64_t> tokens_in_slot_order, std::int64_t n_dev,
                                          std::string name = "perm");

  // contiguous | ring | striped | zigzag | cyclic:W | perm:FILE (FILE: whitespace-separated
  // global tokens in slot order, n_seq of them, '#' comments allowed). Layouts derived from a
  // sparse mask (bucket-striped, bucket-rotated: models/workload/balanced_layout.hpp) or from packed
  // documents (models/workload/documents.hpp) need those; resolve() builds them.
  [[nodiscard]] static Layout make(const LayoutSpec& spec, std::int64_t n_seq, std::int64_t n_dev);

  [[nodiscard]] LayoutKind kind() const noexcept { return kind_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::int64_t n_seq() const noexcept { return n_seq_; }
  [[nodiscard]] std::int64_t n_dev() const noexcept { return n_dev_; }
  [[nodiscard]] std::int64_t block() const noexcept { return block_; }  // c = n_seq / n_dev
  [[nodiscard]] std::int64_t width() const noexcept { return width_; }  // stripe width (cyclic)

  [[nodiscard]] Placement place(std::int64_t token) const noexcept;
  [[nodiscard]] std::int64_t token(std::int64_t device, std::int64_t local) const noexcept;
  // The device's whole block as one arithmetic progression (token(d, l) = start + l * stride),
  // where the layout is that simple (contiguous, striped, cyclic:1); nullopt otherwise.
  [[nodiscard]] std::optional<Progression> affine(std::int64_t device) const noexcept;

  // Global positions of local indices [lo, hi) of `device`, in local order, appended to `out`
  // as few progressions as the layout allows (at most 2 for contiguous/striped/zigzag).
  void segments(std::int64_t device, std::int64_t lo, std::int64_t hi, std::vector<Progression>& out) const;
  [[nodiscard]] std::vector<std::int64_t> positions(std::int64_t device) const;
  // Upper bounds over every device and range of `len` consecutive local indices: how many
  // progressions segments() appends, and last - first position + 1. The size checks
  // (models/scenario/size_checks.hpp) estimate counting costs from them before counting anything.
  [[nodiscard]] std::int64_t max_segments(std::int64_t len) const noexcept;
  [[nodiscard]] std::int64_t max_span(std::int64_t len) const noexcept;

  // token(d, l) == token(0, l) + d * shift for every d, l: true for contiguous (shift c),
  // striped (1) and block-cyclic (w). Masks that depend only on q - p then give block counts
  // that depend only on the device difference, which the workload memoises.
  [[nodiscard]] std::optional<std::int64_t> device_shift() const noexcept;
  // True when, for masks that depend only on whether p <= q, a block's counts depend only on
  // the sign of (q device - k device): contiguous, striped, zigzag, block-cyclic.
  [[nodiscard]] bool order_classes() const noexcept { return kind_ != LayoutKind::Permutation; }
  // Global positions increase with the local index on every device (all but permutations).
  [[nodiscard]] bool monotone() const noexcept { return kind_ != LayoutKind::Permutation; }
  // The same for one device: also true for a permutation whose slots of this device hold
  // increasing tokens (the per-document balancers' layouts do).
  [[nodiscard]] bool monotone(std::int64_t device) const noexcept {
    return kind_ != LayoutKind::Permutation || monotone_devices_[static_cast<std::size_t>(device)] != 0;
  }
  // Shared by the copies of one explicit permutation and by nothing else (null for the other
  // kinds): lets memos tell permutations apart without comparing n_seq tokens. Holding it keeps
  // its address from being reused.
  [[nodiscard]] const std::shared_ptr<const void>& instance_tag() const noexcept { return instance_tag_; }

 private:
  Layout() = default;
  LayoutKind kind_ = LayoutKind::Contiguous;
  std::string name_;
  std::int64_t n_seq_ = 0;
  std::int64_t n_dev_ = 0;
  std::int64_t block_ = 0;
  std::int64_t width_ = 1;
  std::vector<std::int64_t> slot_to_token_;  // permutation only
  std::vector<std::int64_t> token_to_slot_;  // permutation only
  std::vector<char> monotone_devices_;        // permutation only: per device, tokens increase
  std::shared_ptr<const void> instance_tag_;  // permutation only
};

}  // namespace ringsim::models
