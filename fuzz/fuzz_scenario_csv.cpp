// Fuzz target: scenario CSV (cli::read_csv and the columns `predict --scenarios` reads from it),
// with the names checked as the catalog checks them before they become file paths.
#include <cstdint>
#include <string>

#include "cli/csv.hpp"
#include "cli/scenario_options.hpp"
#include "fuzz/fuzz_support.hpp"
#include "models/io/error.hpp"
#include "models/io/names.hpp"
#include "models/io/parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ringsim;
  try {
    const auto t = cli::read_csv(fuzz::as_file(data, size));
    const cli::ScenarioColumns cols(t);
    const auto c_tq = t.column("tile_q"), c_tk = t.column("tile_k"), c_batch = t.column("batch");
    const auto c_mask = t.column("mask"), c_profile = t.column("profile"), c_layout = t.column("layout");
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      if (t.rows[i].size() != t.header.size()) __builtin_trap();  // the reader's promise
      auto spec = cols.spec(t, i);
      if (spec.mp < 1 || spec.sp < 1 || spec.n_seq < 1) __builtin_trap();
      if (c_batch) spec.batch = t.positive_int(i, *c_batch);
      if (c_tq && c_tk) spec.tile = models::TileShape{t.positive_int(i, *c_tq), t.positive_int(i, *c_tk)};
      if (c_mask) spec.mask = cli::typed_cell(t, i, *c_mask, &models::MaskSpec::parse);
      if (c_layout && !t.text_or(i, c_layout, "").empty())
        spec.layout = cli::typed_cell(t, i, *c_layout, &models::LayoutSpec::parse);
      spec.profile = t.text_or(i, c_profile, "");
      try {
        if (!spec.model.starts_with("attn:")) models::check_catalog_name(spec.model, "model", "model");
        models::check_catalog_name(spec.hardware, "hardware", "hardware");
        if (!spec.profile.empty() && !spec.profile.ends_with(".json"))
          models::check_catalog_name(spec.profile, "profile", "profile");
      } catch (const models::InputError& e) {
        throw models::InputError(t.file, t.lines[i], e.field(), e.message());
      }
      (void)cli::csv_line(t.rows[i]);  // written back unchanged by predict
    }
  } catch (const models::InputError&) {
  }
  return 0;
}
