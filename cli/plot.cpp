// `ringsim plot`: charts of sweep CSVs (speedup vs n_seq, tokens/s vs devices, exposed
// communication heatmap, memory vs context, prefill's pass-Q / pass-KV crossover) as SVG and/or
// PNG, without a display.
#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "models/io/error.hpp"
#include "planning/plot.hpp"

namespace ringsim::cli {

int run_plot(int argc, char** argv) {
  cxxopts::Options o("ringsim plot", "Charts of a sweep's CSV (ringsim sweep) as SVG and/or PNG");
  o.positional_help("SWEEP.csv");
  o.add_options()("file", "sweep CSV", cxxopts::value<std::string>()->default_value(""))
                 ("kind", planning::plot_kinds_help(), cxxopts::value<std::string>()->default_value("speedup"))
                 ("where", "COLUMN=VALUE: only rows where it holds (repeatable)", cxxopts::value<std::vector<std::string>>())
                 ("baseline", "speedup: the layout whose step time is divided", cxxopts::value<std::string>()->default_value("contiguous"))
                 ("layout", "speedup: the layout compared with it", cxxopts::value<std::string>()->default_value("striped"))
                 ("mark", "crossover: SERIES=RATE, a vertical line at that cache-hit rate in the series' colour (repeatable)",
                  cxxopts::value<std::vector<std::string>>())
                 ("mark-label", "crossover: the legend entry of the --mark lines",
                  cxxopts::value<std::string>()->default_value("closed-form crossover"))
                 ("title", "chart title (default: from the kind)", cxxopts::value<std::string>()->default_value(""))
                 ("svg", "write the chart as SVG here", cxxopts::value<std::string>()->default_value(""))
                 ("png", "write the chart as PNG here", cxxopts::value<std::string>()->default_value(""))
                 ("h,help", "show help");
  o.parse_positional({"file"});
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto file = r["file"].as<std::string>();
  if (file.empty()) throw models::InputError({}, 0, "file", "give the sweep CSV to plot");
  const auto svg = r["svg"].as<std::string>(), png = r["png"].as<std::string>();
  if (svg.empty() && png.empty()) throw models::InputError({}, 0, "svg", "give --svg FILE and/or --png FILE");
  planning::PlotRequest req;
  req.kind = planning::parse_plot_kind(r["kind"].as<std::string>());
  if (r.count("where"))
    for (const auto& w : r["where"].as<std::vector<std::string>>()) req.where.push_back(planning::parse_where(w));
  req.baseline = r["baseline"].as<std::string>();
  req.layout = r["layout"].as<std::string>();
  req.title = r["title"].as<std::string>();
  if (r.count("mark"))
    for (const auto& m : r["mark"].as<std::vector<std::string>>()) req.marks.push_back(planning::parse_mark(m));
  req.marks_label = r["mark-label"].as<std::string>();
  planning::plot(read_csv(file), req, svg, png);
  return 0;
}

}  // namespace ringsim::cli
