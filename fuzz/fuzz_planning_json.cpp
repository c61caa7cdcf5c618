// Fuzz target: sweep files and plan files (JSON), chosen by the first byte. A sweep file that
// loads and validates against the catalog must give the same grid again from what
// `--print-grid` / `plan --emit-sweep` write (its fingerprint, which names a sweep's output,
// must not change), and its points must decode within the axes; a plan file that loads must
// give a grid that validates or an InputError.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"
#include "models/catalog/resolve.hpp"
#include "planning/grid.hpp"
#include "planning/plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ringsim;
  if (size < 1) return 0;
  static const models::Catalog catalog;
  const bool plan = data[0] & 1;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const auto j = models::parse_json_text(text, "fuzz.json");
    if (plan) {
      const auto req = planning::plan_request_from_json(j, "fuzz.json");
      const auto g = planning::plan_grid(req, catalog);
      g.validate(catalog, "fuzz.json");
      (void)g.size();
    } else {
      const auto g = planning::SweepGrid::from_json(j, "fuzz.json");
      g.validate(catalog, "fuzz.json");
      const auto again = planning::SweepGrid::from_json(g.to_json(), "again.json");
      if (again.fingerprint() != g.fingerprint() || again.size() != g.size()) __builtin_trap();
      const std::int64_t n = g.size();
      for (const std::int64_t i : {std::int64_t{0}, n / 2, n - 1}) {
        const auto p = g.point(i);
        if (p.index != i || p.spec.mp < 1 || p.spec.sp < 1 || p.spec.n_seq < 1) __builtin_trap();
      }
    }
  } catch (const models::InputError&) {
  }
  return 0;
}
