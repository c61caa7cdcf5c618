#pragma once
// Kernel times a fit has already computed, per row. A kernel-curve fit times every row through the
// kernel model at each point it tries (calibration/kernel_curves.cpp), and many points leave a
// row's pass with the same rates: the accepted point again as the Jacobian's centre, a parameter
// of the other pass perturbed for the Jacobian (the forward's rows do not read the backward's
// efficiencies), every held-out fold starting where the full fit ended. The kernel model's list
// schedule is nearly all of a fit's time (a 108-row H100 fit: 98 % in it), so these are served
// from here. Keyed on every bit of the rates the row's pass reads (models::pass_rates), a hit is
// exactly what the kernel model would return: fits, and the profiles they write, are unchanged.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "calibration/kernel_curves.hpp"
#include "models/families/kernel_time.hpp"
#include "models/implementations/kernel_spec.hpp"

namespace ringsim::calibration {

class KernelTimeMemo {
 public:
  KernelTimeMemo(const std::vector<KernelRow>& rows, const models::KernelSpec& spec);
  // predict_kernel_row(rows[i], spec, rates): remembered when row i's pass was timed at rates it
  // reads alike.
  [[nodiscard]] double seconds(std::size_t i, const models::KernelRates& rates);
  [[nodiscard]] std::int64_t computed() const noexcept { return computed_; }
  [[nodiscard]] std::int64_t served() const noexcept { return served_; }

  // The bits of a KernelRates, field by field (its padding excluded).
  static constexpr std::size_t kKeyWords = 19;
  using Key = std::array<std::uint64_t, kKeyWords>;

 private:
  // A row's last few timings: enough to keep the Jacobian's centre while the parameters of the
  // row's own pass are perturbed around it (two points each).
  static constexpr std::size_t kWays = 8;
  struct Slot {
    std::array<Key, kWays> keys{};
    std::array<double, kWays> values{};
    std::size_t used = 0, next = 0;
  };
  const std::vector<KernelRow>& rows_;
  const models::KernelSpec& spec_;
  std::vector<Slot> slots_;
  std::int64_t computed_ = 0, served_ = 0;
};

}  // namespace ringsim::calibration
