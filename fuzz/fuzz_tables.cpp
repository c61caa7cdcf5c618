// Fuzz target: the CSV tables of `ringsim check` (measurements), `plot` (a sweep's rows, the
// charts' data without drawing) and `agreement`. Bad input must be an InputError; what is
// charted must be finite.
#include <cmath>
#include <cstdint>
#include <string>

#include "cli/csv.hpp"
#include "fuzz/fuzz_support.hpp"
#include "models/io/error.hpp"
#include "models/catalog/resolve.hpp"
#include "planning/check.hpp"
#include "planning/plot.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ringsim;
  if (size < 1) return 0;
  static const models::Catalog catalog;
  const int use = data[0] % 5;
  try {
    const auto t = cli::read_csv(fuzz::as_file(data + 1, size - 1));
    if (use == 0) {
      planning::CheckOptions o;
      for (const auto& f : planning::check_measurements(t, catalog, o))
        if (f.line < 1) __builtin_trap();
      return 0;
    }
    planning::PlotRequest r;
    r.kind = use == 1 ? planning::PlotKind::Speedup
             : use == 2 ? planning::PlotKind::Throughput
             : use == 3 ? planning::PlotKind::Memory
                        : planning::PlotKind::Exposed;
    if (r.kind == planning::PlotKind::Exposed) {
      const auto m = planning::heatmap(t, r);
      if (!std::isfinite(m.v_max)) __builtin_trap();
    } else {
      const auto c = planning::line_chart(t, r);
      for (const auto& s : c.series)
        for (std::size_t i = 0; i < s.x.size(); ++i)
          if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) __builtin_trap();
    }
  } catch (const models::InputError&) {
  }
  return 0;
}
