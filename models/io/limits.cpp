#include "models/io/limits.hpp"

#include <unistd.h>

#include <algorithm>
#include <string>

#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::models {
namespace {

std::string g3(double v) { return short_number(v, 3); }
std::string gib(double bytes) { return g3(bytes / (1024.0 * 1024.0 * 1024.0)) + " GiB"; }

}  // namespace

double memory_budget_bytes() noexcept {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 1e18;  // unknown: do not refuse on a guess
  return static_cast<double>(pages) * static_cast<double>(page);
}

void check_memory(double bytes, std::string_view field, std::string_view what) {
  // Most scenarios need far less than any machine has: skip the system call for them.
  if (bytes < 256.0 * 1024 * 1024) return;
  const double budget = memory_budget_bytes();
  if (!(bytes <= budget))
    throw InputError({}, 0, std::string(field),
                     std::string(what) + " needs about " + gib(bytes) + " of memory, more than this machine's " +
                         gib(budget));
}

void check_count_steps(double steps, std::string_view field, std::string_view what, std::string_view hint) {
  if (!(steps <= kMaxCountSteps))
    throw InputError({}, 0, std::string(field),
                     std::string(what) + " takes about " + g3(steps) + " steps, more than the " + g3(kMaxCountSteps) +
                         " ringsim allows for one scenario" + (hint.empty() ? "" : " (" + std::string(hint) + ")"));
}

}  // namespace ringsim::models
