#pragma once
// Checked 64-bit arithmetic for sizes that come from input: counts of pairs, tiles, FLOPs and
// bytes are products of user-given numbers, and a wrapped product is a silently wrong answer
// (or undefined behaviour). Each helper throws InputError naming the field and what the
// product stands for, so a front-end answers with one line and exit code 2.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "models/io/error.hpp"

namespace ringsim::models {

// True when a * b fits int64 (then stored in `out`); operands may have any sign.
[[nodiscard]] constexpr bool mul_fits(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept {
  return !__builtin_mul_overflow(a, b, &out);
}

// The product of `factors`; throws InputError(field) "<what> overflows 64-bit integers" when
// any partial product does.
[[nodiscard]] inline std::int64_t checked_product(std::initializer_list<std::int64_t> factors, std::string_view field,
                                                  std::string_view what) {
  std::int64_t p = 1;
  for (const std::int64_t f : factors)
    if (!mul_fits(p, f, p))
      throw InputError({}, 0, std::string(field),
                       std::string(what) + " overflows 64-bit integers (the sizes are too large to count exactly)");
  return p;
}

[[nodiscard]] inline std::int64_t checked_sum(std::int64_t a, std::int64_t b, std::string_view field,
                                              std::string_view what) {
  std::int64_t s = 0;
  if (__builtin_add_overflow(a, b, &s))
    throw InputError({}, 0, std::string(field),
                     std::string(what) + " overflows 64-bit integers (the sizes are too large to count exactly)");
  return s;
}

}  // namespace ringsim::models
