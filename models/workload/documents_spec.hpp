#pragma once
// Packed documents as the user names them (--docs, a docs column, a GUI field), parsed once at
// the edge: a lengths file or a seeded log-normal draw (models/workload/documents.hpp says what
// each means). The lengths are made from it in resolve(), which knows n_seq
// (Documents::make); a planner that builds lengths itself names them with `given`.
#include <cstdint>
#include <string>
#include <string_view>

namespace ringsim::models {

enum class DocumentsSource { File, Lognormal, Given };

class DocumentsSpec {
 public:
  // FILE or lognormal:MEAN:SIGMA:SEED[:Q]; InputError (field "docs") for a malformed spec.
  [[nodiscard]] static DocumentsSpec parse(std::string_view text);
  // Lengths the caller hands to resolve() itself; `name` is what outputs show.
  [[nodiscard]] static DocumentsSpec given(std::string name);

  [[nodiscard]] const std::string& text() const noexcept { return text_; }  // as written
  [[nodiscard]] DocumentsSource source() const noexcept { return source_; }
  [[nodiscard]] const std::string& file() const noexcept { return text_; }  // File
  [[nodiscard]] double mean() const noexcept { return mean_; }              // Lognormal
  [[nodiscard]] double sigma() const noexcept { return sigma_; }
  [[nodiscard]] std::uint64_t seed() const noexcept { return seed_; }
  [[nodiscard]] std::int64_t quantum() const noexcept { return quantum_; }

  friend bool operator==(const DocumentsSpec& a, const DocumentsSpec& b) noexcept { return a.text_ == b.text_; }

 private:
  std::string text_;
  DocumentsSource source_ = DocumentsSource::File;
  double mean_ = 0, sigma_ = 0;
  std::uint64_t seed_ = 0;
  std::int64_t quantum_ = 1;
};

}  // namespace ringsim::models
