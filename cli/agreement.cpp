// `ringsim agreement`: Kendall's tau-b between a measured and a predicted column of one CSV (for
// example predict --scenarios output beside the published figures it passed through), over all
// rows or within groups of rows.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "planning/agreement.hpp"

namespace ringsim::cli {

int run_agreement(int argc, char** argv) {
  cxxopts::Options o("ringsim agreement",
                     "Ranking agreement (Kendall's tau-b) between measured and predicted columns of a CSV");
  o.positional_help("FILE.csv");
  o.add_options()("file", "CSV with both columns", cxxopts::value<std::string>()->default_value(""))
                 ("measured", "column of measurements", cxxopts::value<std::string>()->default_value(""))
                 ("predicted", "column of predictions", cxxopts::value<std::string>()->default_value(""))
                 ("group", "comma-separated columns: compare only rows that agree on them (e.g. the layouts of one configuration)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("measured-lower-is-better", "the measured column is a time (smaller ranks higher)")
                 ("predicted-lower-is-better", "the predicted column is a time (smaller ranks higher)")
                 ("format", "table|json", cxxopts::value<std::string>()->default_value("table"))
                 ("h,help", "show help");
  o.parse_positional({"file"});
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto format = one_of(r, "format", {"table", "json"});
  const auto file = r["file"].as<std::string>();
  if (file.empty()) throw models::InputError({}, 0, "file", "give the CSV to read");
  const auto t = read_csv(file);
  const auto cm = t.require_column(r["measured"].as<std::string>());
  const auto cp = t.require_column(r["predicted"].as<std::string>());
  std::vector<std::size_t> groups;
  if (const auto g = r["group"].as<std::string>(); !g.empty())
    for (const auto& c : models::split(g, ',')) groups.push_back(t.require_column(std::string(models::trim(c))));
  std::vector<double> x, y;
  std::vector<std::string> label;
  std::int64_t skipped = 0;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    // A measurement that is not a number (OOM, n/a) is not ranked.
    const auto& cell = t.rows[i][cm];
    if (cell.empty() || !(std::isdigit(static_cast<unsigned char>(cell[0])) || cell[0] == '.' || cell[0] == '-')) {
      ++skipped;
      continue;
    }
    x.push_back(t.number(i, cm) * (r.count("measured-lower-is-better") ? -1 : 1));
    y.push_back(t.number(i, cp) * (r.count("predicted-lower-is-better") ? -1 : 1));
    std::string key;
    for (const auto c : groups) key += t.rows[i][c] + "\x1f";
    label.push_back(key);
  }
  if (x.size() < 2)
    throw models::InputError(file, 0, r["measured"].as<std::string>(),
                             fmt::format("needs at least two rows with a numeric measurement, found {}", x.size()));
  // Every pair is compared: quadratic in the rows, so bounded (about 5e9 pairs, seconds).
  constexpr std::size_t kMaxRows = 100000;
  if (x.size() > kMaxRows)
    throw models::InputError(file, 0, r["measured"].as<std::string>(),
                             fmt::format("{} rows: Kendall's tau compares every pair; at most {} rows", x.size(), kMaxRows));
  const auto a = planning::kendall_tau_b(x, y, groups.empty() ? std::vector<std::string>{} : label);
  // No untied pair in a column: tau-b is undefined (0/0), said so rather than printed as 0.
  const bool defined = a.concordant + a.discordant + a.ties_measured > 0 && a.concordant + a.discordant + a.ties_predicted > 0;
  if (format == "json") {
    fmt::print("{{\"tau_b\": {}, \"items\": {}, \"pairs\": {}, \"concordant\": {}, \"discordant\": {}, "
               "\"ties_measured\": {}, \"ties_predicted\": {}, \"rows_without_a_measurement\": {}}}\n",
               defined ? fmt::format("{:.4f}", a.tau_b) : std::string("null"), a.items, a.pairs, a.concordant,
               a.discordant, a.ties_measured, a.ties_predicted, skipped);
  } else {
    fmt::print("Kendall's tau-b {} over {} rows{}: {} pairs compared, {} concordant, {} discordant, {} tied in the "
               "measurements only, {} tied in the predictions only{}\n",
               defined ? fmt::format("{:.3f}", a.tau_b) : std::string("undefined (every pair tied in a column)"), a.items, groups.empty() ? "" : " (pairs within groups)", a.pairs, a.concordant, a.discordant,
               a.ties_measured, a.ties_predicted,
               skipped ? fmt::format("; {} rows without a numeric measurement left out", skipped) : std::string());
  }
  return 0;
}

}  // namespace ringsim::cli
