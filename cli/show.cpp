// `ringsim show`: the imbalance at a glance, in the terminal. (1) For two layouts side by side,
// the (device x round) work matrix as a heatmap on one scale. (2) For small n, the attention
// matrix (query rows x key columns, in original token order) coloured by the device that
// computes each pair in each round: the Striped Attention paper's Figures 2-4.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/scenario_options.hpp"
#include "cli/work_summary.hpp"
#include "models/catalog/resolve.hpp"
#include "models/workload/documents.hpp"
#include "models/io/error.hpp"
#include "models/scenario/size_checks.hpp"
#include "models/program/program.hpp"

namespace ringsim::cli {

using models::InputError;

namespace {

constexpr const char* kRamp = " .:-=+*#%@";  // plain fallback, 10 levels

struct Painter {
  bool color;
  // Heat: 0..1 -> a 256-colour ramp from dark blue through yellow to red.
  std::string heat(double v, const std::string& text) const {
    v = std::clamp(v, 0.0, 1.0);
    if (!color) return std::string(text.size() > 1 ? text.size() : 1, kRamp[static_cast<int>(v * 9.0 + 0.5)]);
    static constexpr int kColors[] = {17, 18, 19, 25, 31, 37, 72, 107, 142, 178, 214, 208, 202, 196};
    const int idx = static_cast<int>(v * 13.0 + 0.5);
    return fmt::format("\033[48;5;{}m{}\033[0m", kColors[idx], text);
  }
  std::string device(std::int64_t d, const std::string& text) const {
    if (!color) {
      static constexpr const char* kGlyphs = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
      return std::string(text.size(), kGlyphs[d % 62]);
    }
    static constexpr int kPalette[] = {196, 46, 21, 226, 201, 51, 208, 93, 118, 33, 220, 163, 87, 130, 250, 28};
    return fmt::format("\033[48;5;{}m{}\033[0m", kPalette[d % 16], text);
  }
};

double metric_of(const models::BlockStats& b, const std::string& metric) {
  if (metric == "pairs") return static_cast<double>(b.allowed_pairs);
  if (metric == "tiles") return static_cast<double>(b.tiles_visited);
  return static_cast<double>(b.visited_area);
}

// Strategies without a ring (all-gather, Ulysses): one bar per device, its kernels' work as a
// fraction of the busiest device's, on one scale for all panels.
void device_bars(const std::vector<std::unique_ptr<models::ResolvedScenario>>& ss, const Painter& paint, std::string& out) {
  std::int64_t top = 1;
  std::vector<std::vector<std::int64_t>> all;
  for (const auto& s : ss) {
    all.push_back(models::device_pairs(*s));
    top = std::max(top, *std::max_element(all.back().begin(), all.back().end()));
  }
  out += fmt::format("attention work per device (allowed pairs of its kernel calls, one head), as a fraction of the busiest "
                     "device of all panels\n\n");
  for (std::size_t i = 0; i < ss.size(); ++i) {
    out += fmt::format("{} ({}, {})\n", ss[i]->spec.layout.text(), ss[i]->strategy.spec, ss[i]->impl.name);
    const auto& p = all[i];
    const std::int64_t shown = std::min<std::int64_t>(static_cast<std::int64_t>(p.size()), 64);
    for (std::int64_t d = 0; d < shown; ++d) {
      const double v = static_cast<double>(p[static_cast<std::size_t>(d)]) / static_cast<double>(top);
      const int width = static_cast<int>(v * 50.0 + 0.5);
      out += fmt::format("{:>7}  {} {:.2f}\n", d, paint.heat(v, std::string(static_cast<std::size_t>(std::max(1, width)), ' ')), v);
    }
    out += "\n";
  }
}

void heatmaps(const std::vector<std::unique_ptr<models::ResolvedScenario>>& ss, const std::string& metric,
              const Painter& paint, std::string& out) {
  // A strategy without a ring has its layout's blocks counted here only: their sizes first.
  for (const auto& s : ss)
    if (!s->program->has_ring()) models::check_workload_sizes(*s);
  const std::int64_t n = ss.front()->ring_scenario().workload->devices();
  double full = 0;  // one full block: the common scale
  {
    // Per-head (sparse) masks count every head's tiles: a full block is then heads blocks.
    models::BlockStats b;
    const auto c = ss.front()->ring_scenario().layout->block();
    const auto heads = ss.front()->mask->heads();
    b.visited_area = c * c * heads;
    b.allowed_pairs = c * c * heads;
    const auto& t = ss.front()->tile;
    b.tiles_visited = ((c + t.q - 1) / t.q) * ((c + t.k - 1) / t.k) * heads;
    full = metric_of(b, metric);
  }
  const std::int64_t shown = std::min<std::int64_t>(n, 32);
  out += fmt::format("work per (device, round) = {} of the device's block, as a fraction of a full block "
                     "(one scale for all panels){}\n\n",
                     metric == "pairs" ? "allowed pairs" : metric == "tiles" ? "tiles computed" : "area of computed tiles",
                     n > shown ? fmt::format("; first {} devices and rounds of {}", shown, n) : "");
  std::vector<std::vector<std::string>> panels;
  for (const auto& s : ss) {
    std::vector<std::string> lines;
    const auto& w = *s->ring_scenario().workload;
    lines.push_back(fmt::format("{:<9}", s->spec.layout.text()));
    std::string hdr = "dev\\rnd  ";
    for (std::int64_t i = 0; i < shown; ++i) hdr += fmt::format("{:>3}", i % 100);
    lines.push_back(hdr);
    double busy = 0, bound = 0;
    for (std::int64_t j = 0; j < shown; ++j) {
      std::string line = fmt::format("{:>7}  ", j);
      for (std::int64_t i = 0; i < shown; ++i) {
        // The block the schedule gives position j in round i (a double ring's differs from a ring's).
        const auto k = s->program->kv_position(j, i);
        const double v = metric_of(w.block(((j - k) % n + n) % n, j), metric) / full;
        line += paint.heat(v, fmt::format("{:>3.0f}", std::min(99.0, v * 99.0)));
      }
      lines.push_back(line);
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const auto r = w.round_summary(i);
      busy += static_cast<double>(r.sum_visited_area) / static_cast<double>(n);
      bound += static_cast<double>(r.max_visited_area);
    }
    lines.push_back(fmt::format("useful {:.0f}% of the lock-step time", 100 * busy / std::max(1.0, bound)));
    panels.push_back(std::move(lines));
  }
  // Visible width of a panel line ignores the escape codes.
  auto visible = [](const std::string& s) {
    std::size_t w = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\033') {
        while (i < s.size() && s[i] != 'm') ++i;
        continue;
      }
      ++w;
    }
    return w;
  };
  const std::size_t width = 9 + 3 * static_cast<std::size_t>(shown) + 4;
  std::size_t rows = 0;
  for (const auto& p : panels) rows = std::max(rows, p.size());
  for (std::size_t l = 0; l < rows; ++l) {
    for (const auto& p : panels) {
      const std::string cell = l < p.size() ? p[l] : "";
      out += cell + std::string(width > visible(cell) ? width - visible(cell) : 1, ' ');
    }
    out += "\n";
  }
  // The legend names what the cells show: numbers on a colour scale on a terminal, the glyph
  // ramp when piped.
  out += paint.color ? "\ncells: 99 = a full block of work, 0 = skipped (the colour the same, blue to red); rounds are "
                       "columns, devices rows.\n"
                     : fmt::format("\ncells: '{}' from no work to a full block, one glyph per tenth ('{}' = a full "
                                   "block, ' ' = skipped); rounds are columns, devices rows.\n",
                                   kRamp, kRamp[9]);
}

void matrices(const std::vector<std::unique_ptr<models::ResolvedScenario>>& ss, const Painter& paint, std::string& out) {
  for (const auto& s : ss) {
    const auto& l = *s->layout;
    const auto& m = *s->mask;
    const std::int64_t n = l.n_dev();
    const std::int64_t seq = l.n_seq();
    if (m.heads() > 1) out += fmt::format("\n{}: head 0 of {} (sparse mask: skipped tiles not shown)", s->spec.layout.text(), m.heads());
    out += fmt::format("\n{}: attention matrix per round (rows = queries, columns = keys, original token order); "
                       "colour/glyph = device computing the pair, '.' = allowed but in a skipped tile, ' ' = masked\n",
                       s->spec.layout.text());
    // Which tiles are computed, per (round, device): tile of a local index pair.
    const auto tile = s->tile;
    std::vector<std::string> rounds_text(static_cast<std::size_t>(seq) + 1);
    for (std::int64_t i = 0; i < n; ++i) {
      rounds_text[0] += fmt::format("round {:<{}}", i, 2 * seq - 4);
      for (std::int64_t q = 0; q < seq; ++q) {
        std::string row;
        const auto pq = l.place(q);
        const std::int64_t k_dev = models::Workload::kv_block_of(pq.device, i, n);
        for (std::int64_t p = 0; p < seq; ++p) {
          const auto pk = l.place(p);
          if (pk.device != k_dev) {
            row += "  ";
            continue;
          }
          if (!m.allowed(q, p, 0)) {
            row += paint.color ? "\033[48;5;236m  \033[0m" : "  ";
            continue;
          }
          // Computed iff its tile holds an allowed pair: check the tile's pairs. Sparse masks
          // tile their compacted / bucket-sorted rows instead, so there every allowed pair is
          // drawn as computed.
          const std::int64_t qt = pq.local / tile.q, kt = pk.local / tile.k;
          bool computed = m.heads() > 1;
          for (std::int64_t a = qt * tile.q; a < std::min(l.block(), (qt + 1) * tile.q) && !computed; ++a)
            for (std::int64_t b = kt * tile.k; b < std::min(l.block(), (kt + 1) * tile.k) && !computed; ++b)
              computed = m.allowed(l.token(pq.device, a), l.token(k_dev, b), 0);
          row += computed ? paint.device(pq.device, "  ") : "..";
        }
        rounds_text[static_cast<std::size_t>(q) + 1] += row + "  ";
      }
    }
    for (const auto& line : rounds_text) out += line + "\n";
  }
}

}  // namespace

int run_show(int argc, char** argv) {
  cxxopts::Options o("ringsim show", "Terminal views of the workload imbalance");
  add_scenario_options(o, "contiguous,striped");
  o.add_options()("metric", "area|pairs|tiles", cxxopts::value<std::string>()->default_value("area"))
                 ("color", "auto|always|never", cxxopts::value<std::string>()->default_value("auto"))
                 ("matrix", "auto|always|never: the per-round attention matrix (auto: when n_seq <= 32)",
                  cxxopts::value<std::string>()->default_value("auto"))
                 ("h,help", "show help");
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto metric = one_of(r, "metric", {"area", "pairs", "tiles"});
  const auto color = one_of(r, "color", {"auto", "always", "never"});
  const auto matrix = one_of(r, "matrix", {"auto", "always", "never"});
  auto args = parse_scenario_args(r);
  require_one_strategy(args, "show");
  const models::Catalog catalog;
  choose_implementation(args, catalog);
  std::vector<std::unique_ptr<models::ResolvedScenario>> ss;
  for (const auto& l : args.layouts) {
    auto spec = args.base;
    spec.layout = l;
    ss.push_back(std::make_unique<models::ResolvedScenario>(models::resolve(spec, catalog)));
  }
  const Painter paint{color == "always" || (color == "auto" && isatty(STDOUT_FILENO))};
  const auto& s0 = *ss.front();
  std::string out = fmt::format("ringsim show: n_seq {} on {} devices ({} tokens each), strategy {} ({}), mask {}, tile {}x{}\n",
                                args.base.n_seq, args.base.sp, s0.layout->block(), s0.strategy.spec, s0.impl.name,
                                s0.mask->name(), s0.tile.q, s0.tile.k);
  if (s0.documents) out += "packed batch: " + documents_line(*s0.documents) + "\n";
  if (s0.ring_part)
    out += fmt::format("ring part: {} positions of {} tokens, each {} ranks of an all-to-all group\n",
                       s0.ring_scenario().spec.sp, s0.ring_scenario().layout->block(), s0.strategy.ulysses);
  if (s0.program->has_ring())
    heatmaps(ss, metric, paint, out);
  else
    device_bars(ss, paint, out);
  out += "\nper-device attention work, all rounds:\n";
  for (const auto& s : ss)
    out += fmt::format("  {:<20} {}\n", s->spec.layout.text(),
                       imbalance_line(models::device_pairs(*s), s->program->has_ring() && s->ring_part ? "ring position" : "device"));
  const std::int64_t n_seq = args.base.n_seq;
  if (s0.strategy.kind == models::StrategyKind::Ring && (matrix == "always" || (matrix == "auto" && n_seq <= 32))) {
    if (n_seq > 256) throw InputError({}, 0, "matrix", "the attention matrix view needs n_seq <= 256");
    matrices(ss, paint, out);
  }
  write_output("-", out);
  return 0;
}

}  // namespace ringsim::cli
