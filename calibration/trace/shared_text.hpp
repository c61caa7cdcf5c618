#pragma once
// Text held once however many operations carry it. A trace launches a few hundred distinct
// kernels millions of times; an Nsight Systems export names each kernel by an id into its
// StringIds table, so a small hostile database can give a million rows one name of 64 MB. A copy
// per operation would be 64 TB; a SharedText per distinct name keeps it at 64 MB.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ringsim::calibration {

class SharedText {
 public:
  SharedText() = default;
  // Implicit, so that an op's name reads and assigns like the std::string it replaces.
  SharedText(std::string text) : text_(std::make_shared<const std::string>(std::move(text))) {}  // NOLINT
  SharedText(const char* text) : SharedText(std::string(text)) {}                                // NOLINT

  [[nodiscard]] const std::string& str() const noexcept { return text_ ? *text_ : empty_text(); }
  operator const std::string&() const noexcept { return str(); }  // NOLINT
  [[nodiscard]] bool empty() const noexcept { return str().empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return str().size(); }
  void clear() noexcept { text_.reset(); }
  // Whether the two hold the same copy (not merely equal text).
  [[nodiscard]] bool shares(const SharedText& o) const noexcept { return text_ == o.text_; }

  friend bool operator==(const SharedText& a, std::string_view b) noexcept { return std::string_view(a.str()) == b; }

 private:
  static const std::string& empty_text() noexcept {
    static const std::string kEmpty;
    return kEmpty;
  }
  std::shared_ptr<const std::string> text_;
};

// One SharedText per distinct text seen (a reader's names).
class TextPool {
 public:
  [[nodiscard]] SharedText intern(std::string_view text) {
    if (const auto it = pool_.find(text); it != pool_.end()) return it->second;
    SharedText s{std::string(text)};
    // The key views the pooled copy, which never moves (it lives behind a shared pointer).
    pool_.emplace(std::string_view(s.str()), s);
    return s;
  }
  [[nodiscard]] std::size_t size() const noexcept { return pool_.size(); }

 private:
  std::unordered_map<std::string_view, SharedText> pool_;
};

}  // namespace ringsim::calibration
