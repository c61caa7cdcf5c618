#include "planning/plot.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::planning {

using models::InputError;

const std::vector<PlotKindInfo>& plot_kinds() {
  static const std::vector<PlotKindInfo> kinds = {
      {"speedup", PlotKind::Speedup, "vs n_seq per device count", false},
      {"throughput", PlotKind::Throughput, "tokens/s vs devices", false},
      {"exposed", PlotKind::Exposed, "heatmap", true},
      {"memory", PlotKind::Memory, "vs n_seq", false},
      {"crossover", PlotKind::Crossover, "prefill: pass-Q / pass-KV time vs cache-hit rate per model", false},
  };
  return kinds;
}

PlotKind parse_plot_kind(const std::string& t) {
  std::string names;
  for (const auto& k : plot_kinds()) {
    if (t == k.name) return k.kind;
    names += (names.empty() ? "" : ", ") + std::string(k.name);
  }
  throw InputError({}, 0, "kind", "expected one of " + names + ", got '" + t + "'");
}

std::string plot_kinds_help() {
  std::string h;
  for (const auto& k : plot_kinds()) h += (h.empty() ? "" : " | ") + std::string(k.name) + " (" + k.help + ")";
  return h;
}

std::pair<std::string, std::string> parse_where(const std::string& t) {
  const auto eq = t.find('=');
  if (eq == std::string::npos || eq == 0) throw InputError({}, 0, "where", "expected COLUMN=VALUE, got '" + t + "'");
  return {t.substr(0, eq), t.substr(eq + 1)};
}

std::pair<std::string, double> parse_mark(const std::string& t) {
  const auto eq = t.rfind('=');
  if (eq == std::string::npos || eq == 0) throw InputError({}, 0, "mark", "expected SERIES=RATE, got '" + t + "'");
  const double rate = models::parse_double(t.substr(eq + 1), "mark");
  if (!(rate >= 0 && rate < 1))
    throw InputError({}, 0, "mark", "the cache-hit rate of '" + t + "' must be at least 0 and below 1");
  return {t.substr(0, eq), rate};
}

namespace {

// The columns that say which configuration a row is (not what was predicted for it).
const std::vector<std::string>& identity_columns() {
  static const std::vector<std::string> c = {"hardware", "model", "impl", "cp", "mp", "sp", "dp", "devices",
                                             "n_seq", "batch", "layout", "mask", "tile", "topology",
                                             "zero", "recompute", "engine"};
  return c;
}

// The selected rows (status ok, every --where holds) with located numeric access.
struct Rows {
  const Table& t;
  std::vector<std::size_t> idx;
  Rows(const Table& table, const PlotRequest& r) : t(table) {
    for (const auto& [col, _] : r.where)
      if (!t.column(col)) throw InputError(t.file, 1, col, "no such column to select rows by (--where)");
    const auto status = t.column("status");
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      if (status && t.rows[i][*status] != "ok") continue;
      bool keep = true;
      for (const auto& [col, value] : r.where) keep = keep && t.rows[i][*t.column(col)] == value;
      if (keep) idx.push_back(i);
    }
    if (idx.empty()) throw InputError(t.file, 0, "where", "no row with status ok matches the selection");
    // The axes that pair and place rows must be counts in every selected row: a row whose n_seq
    // is "lots" would otherwise pair with nothing and vanish from the chart without a word.
    for (const char* axis : {"mp", "sp", "dp", "devices", "n_seq", "batch"}) {
      if (!t.column(axis)) continue;
      for (const auto i : idx) {
        const auto& cell = text(i, axis);
        try {
          (void)models::parse_positive_int(cell, axis);
        } catch (const InputError& e) {
          throw InputError(t.file, t.lines[i], axis, e.message());
        }
      }
    }
  }
  [[nodiscard]] std::size_t col(const std::string& name) const {
    const auto c = t.column(name);
    if (!c) throw InputError(t.file, 1, name, "missing column (is this a ringsim sweep CSV?)");
    return *c;
  }
  [[nodiscard]] const std::string& text(std::size_t row, const std::string& name) const { return t.rows[row][col(name)]; }
  [[nodiscard]] double num(std::size_t row, const std::string& name) const {
    try {
      return models::parse_double(text(row, name), name);
    } catch (const InputError& e) {
      throw InputError(t.file, t.lines[row], name, e.message());
    }
  }
  // The values a chart divides by or puts on a log axis: positive; amounts: not negative.
  [[nodiscard]] double positive(std::size_t row, const std::string& name) const {
    const double v = num(row, name);
    if (!(v > 0)) throw InputError(t.file, t.lines[row], name, "expected a positive number, got " + text(row, name));
    return v;
  }
  [[nodiscard]] double non_negative(std::size_t row, const std::string& name) const {
    const double v = num(row, name);
    if (!(v >= 0)) throw InputError(t.file, t.lines[row], name, "expected a number >= 0, got " + text(row, name));
    return v;
  }
  // A value computed from a row's figures, finite or an error naming the row.
  [[nodiscard]] double finite(std::size_t row, const std::string& name, double v) const {
    if (!std::isfinite(v))
      throw InputError(t.file, t.lines[row], name, "the row's figures give a value out of range (" + text(row, name) + ")");
    return v;
  }
  // Identity columns that take more than one value over the selected rows, less `exclude`.
  [[nodiscard]] std::vector<std::string> varying(const std::set<std::string>& exclude) const {
    std::vector<std::string> out;
    for (const auto& c : identity_columns()) {
      if (exclude.count(c) || !t.column(c)) continue;
      std::set<std::string> values;
      for (const auto i : idx) values.insert(text(i, c));
      if (values.size() > 1) out.push_back(c);
    }
    return out;
  }
  // A series label from the columns that tell series apart: "mesh 2x4, zero3, recompute full".
  [[nodiscard]] std::string key(std::size_t row, const std::vector<std::string>& cols) const {
    std::string k;
    const auto has = [&](const char* c) { return std::find(cols.begin(), cols.end(), c) != cols.end(); };
    const auto add = [&](const std::string& s) { k += (k.empty() ? "" : ", ") + s; };
    if (has("mp") || has("sp")) add("mesh " + text(row, "mp") + "x" + text(row, "sp"));
    for (const auto& c : cols) {
      if (c == "mp" || c == "sp") continue;
      const auto& v = text(row, c);
      if (c == "zero") add(v == "none" ? std::string("no ZeRO") : v);
      else if (c == "recompute") add("recompute " + v);
      else if (c == "dp") add("dp " + v);
      else if (c == "tile") add("tile " + v);
      else if (c == "devices") add(v + (v == "1" ? " device" : " devices"));
      else if (c == "hardware" || c == "model" || c == "layout" || c == "impl" || c == "cp" || c == "mask") add(v);
      else add(c + " " + v);
    }
    return k;
  }
};

// Groups points into series by a key, in first-seen order; `keep_max` keeps the larger y of two
// points at the same x (the best configuration), else the smaller.
// A configuration that fits in memory beats one that does not at the same x, whatever their
// y: the chart shows what can run, and marks a point where nothing at that x fits.
struct SeriesBuilder {
  struct Point {
    double y;
    bool fits;
  };
  std::vector<std::string> order;
  std::map<std::string, std::map<double, Point>> points;
  void add(const std::string& label, double x, double y, bool keep_max, bool fits = true) {
    if (!points.count(label)) order.push_back(label);
    auto& p = points[label];
    const auto it = p.find(x);
    if (it == p.end()) {
      p[x] = {y, fits};
    } else if (fits != it->second.fits) {
      if (fits) it->second = {y, true};
    } else {
      it->second.y = keep_max ? std::max(it->second.y, y) : std::min(it->second.y, y);
    }
  }
  [[nodiscard]] std::vector<Series> build() const {
    std::vector<Series> out;
    for (const auto& label : order) {
      Series s;
      s.label = label;
      for (const auto& [x, pt] : points.at(label)) s.x.push_back(x), s.y.push_back(pt.y), s.fits.push_back(pt.fits);
      out.push_back(std::move(s));
    }
    return out;
  }
};

// Whether the row's configuration fits in device memory (column fits_memory; a CSV without the
// column counts as fitting).
bool row_fits(const Rows& rows, std::size_t i) {
  return !rows.t.column("fits_memory") || rows.text(i, "fits_memory") != "false";
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string with_prefix(const std::string& head, const std::string& rest) {
  return rest.empty() ? head : head + ", " + rest;
}

}  // namespace

namespace {
// --mark draws closed-form crossovers: on the crossover chart only, not silently dropped elsewhere.
void check_marks(const PlotRequest& r) {
  if (!r.marks.empty() && r.kind != PlotKind::Crossover)
    throw InputError({}, 0, "mark", "--mark draws on --kind crossover only");
}
}  // namespace

LineChart line_chart(const Table& t, const PlotRequest& r) {
  check_marks(r);
  const Rows rows(t, r);
  LineChart c;
  SeriesBuilder b;
  switch (r.kind) {
    case PlotKind::Speedup: {
      // Pair each baseline row with the compared layout's row of the same configuration.
      const auto others = rows.varying({"layout", "index"});
      std::map<std::string, std::size_t> base;
      for (const auto i : rows.idx)
        if (rows.text(i, "layout") == r.baseline) base[rows.key(i, others)] = i;
      const auto series_cols = rows.varying({"layout", "index", "n_seq", "devices", "impl"});
      for (const auto i : rows.idx) {
        if (rows.text(i, "layout") != r.layout) continue;
        const auto it = base.find(rows.key(i, others));
        if (it == base.end()) continue;
        const auto& d = rows.text(i, "devices");
        const std::string label = with_prefix(d + (d == "1" ? " device" : " devices"), rows.key(i, series_cols));
        b.add(label, rows.positive(i, "n_seq"),
              rows.finite(i, "step_s", rows.positive(it->second, "step_s") / rows.positive(i, "step_s")), true,
              row_fits(rows, i) && row_fits(rows, it->second));
      }
      if (b.order.empty())
        throw InputError(t.file, 0, "layout",
                         "no configuration has both layouts " + r.baseline + " and " + r.layout + " (--baseline, --layout)");
      c.title = r.title.empty() ? "Speedup of " + r.layout + " over " + r.baseline : r.title;
      c.x_label = "sequence length n_seq (tokens)";
      c.y_label = "speedup (step time " + r.baseline + " / " + r.layout + ", x)";
      c.references.push_back({"no speedup (1x)", 1.0});
      break;
    }
    case PlotKind::Throughput: {
      const auto series_cols = rows.varying({"index", "devices", "mp", "sp", "dp", "tile_q", "tile_k", "zero", "recompute"});
      for (const auto i : rows.idx)
        b.add(rows.key(i, series_cols).empty() ? "all" : rows.key(i, series_cols), rows.positive(i, "devices"),
              rows.non_negative(i, "tokens_per_s"), true, row_fits(rows, i));
      c.title = r.title.empty() ? "Training throughput vs devices (best mesh, tile and memory setting per point)" : r.title;
      c.x_label = "devices (dp x mp x sp)";
      c.y_label = "throughput (tokens/s)";
      c.x_format = AxisFormat::Plain;
      c.y_format = AxisFormat::Metric;
      c.y_min = 0;
      break;
    }
    case PlotKind::Memory: {
      const auto series_cols = rows.varying({"index", "n_seq", "layout", "tile_q", "tile_k", "impl"});
      double capacity = 0;
      for (const auto i : rows.idx) {
        b.add(rows.key(i, series_cols).empty() ? "memory" : rows.key(i, series_cols), rows.positive(i, "n_seq"),
              rows.non_negative(i, "memory_bytes") / kGiB, false, row_fits(rows, i));
        capacity = rows.positive(i, "memory_capacity_bytes") / kGiB;
      }
      // GiB, as the command line prints memory.
      c.title = r.title.empty() ? "Memory per device vs context" : r.title;
      c.x_label = "sequence length n_seq (tokens)";
      c.y_label = "memory per device (GiB)";
      c.y_min = 0;
      c.references.push_back({fmt::format("device memory ({:.1f} GiB)", capacity), capacity});
      break;
    }
    case PlotKind::Crossover: {
      // x: the new-token share T/(P+T) on a log2 axis, read (reversed) as the hit rate 1 - share;
      // y: pass-Q's TTFT over pass-KV's. A line per series; the context P+T joins the label
      // when it varies (points of two contexts at one share are different requests).
      std::set<std::string> contexts;
      const auto context = [&](std::size_t i) {
        return rows.positive(i, "n_seq") + rows.non_negative(i, "cached_tokens");
      };
      for (const auto i : rows.idx) {
        if (rows.text(i, "phase") != "prefill")
          throw InputError(t.file, t.lines[i], "phase", "the crossover chart takes prefill rows (sweep --phase prefill), got " +
                                                              rows.text(i, "phase") + " (select with --where phase=prefill)");
        contexts.insert(fmt::format("{:.0f}", context(i)));
      }
      const auto series_cols = rows.varying({"index", "n_seq", "batch"});
      for (const auto i : rows.idx) {
        std::string label = rows.key(i, series_cols);
        if (contexts.size() > 1)
          label = with_prefix("context " + tick_label(context(i), AxisFormat::Binary, 1), label);
        b.add(label.empty() ? "prefill" : label, rows.positive(i, "n_seq") / context(i),
              rows.finite(i, "pass_q_ttft_s", rows.positive(i, "pass_q_ttft_s") / rows.positive(i, "pass_kv_ttft_s")),
              false, row_fits(rows, i));
      }
      c.title = r.title.empty() ? "Prefill: pass-Q over pass-KV against the cache-hit rate" : r.title;
      c.x_label = "KV-cache hit rate P/(P+T) (log scale of the new-token share T/(P+T))";
      c.y_label = "time to first token, pass-Q / pass-KV (x)";
      c.x_format = AxisFormat::HitRate;
      c.reverse_x = true;
      c.y_min = 0;
      c.references.push_back({"equal: below, pass-Q is faster", 1.0});
      c.series = b.build();
      for (const auto& [label, rate] : r.marks) {
        const auto it = std::find(b.order.begin(), b.order.end(), label);
        if (it == b.order.end()) {
          std::string labels;
          for (const auto& l : b.order) labels += (labels.empty() ? "" : ", ") + l;
          throw InputError({}, 0, "mark", "no series '" + label + "' to mark (the series: " + labels + ")");
        }
        c.marks.push_back({static_cast<std::size_t>(it - b.order.begin()), 1 - rate});
      }
      c.marks_label = r.marks_label;
      return c;
    }
    case PlotKind::Exposed:
      throw InputError({}, 0, "kind", "exposed is a heatmap");
  }
  c.series = b.build();
  return c;
}

Heatmap heatmap(const Table& t, const PlotRequest& r) {
  check_marks(r);
  const Rows rows(t, r);
  std::set<double> xs, ys;
  std::map<std::pair<double, double>, double> cell;
  for (const auto i : rows.idx) {
    const double x = rows.positive(i, "n_seq"), y = rows.positive(i, "devices");
    const double step = rows.positive(i, "step_s");
    const double v = rows.finite(
        i, "step_s", (rows.non_negative(i, "exposed_transfer_s") + rows.non_negative(i, "grad_sync_exposed_s")) / step);
    xs.insert(x), ys.insert(y);
    const auto it = cell.find({x, y});
    cell[{x, y}] = it == cell.end() ? v : std::min(it->second, v);
  }
  Heatmap m;
  m.title = r.title.empty() ? "Exposed communication, share of the step" : r.title;
  m.x_label = "sequence length n_seq (tokens)";
  m.y_label = "devices";
  m.value_label = "exposed";
  for (const double x : xs) m.x_ticks.push_back(tick_label(x, AxisFormat::Binary, 1));
  for (const double y : ys) m.y_ticks.push_back(fmt::format("{:.0f}", y));
  m.v_min = 0;
  m.v_max = 0;
  for (const double y : ys)
    for (const double x : xs) {
      const auto it = cell.find({x, y});
      m.values.push_back(it == cell.end() ? NAN : it->second);
      if (it != cell.end()) m.v_max = std::max(m.v_max, it->second);
    }
  // A round top for the colour bar: 10%, 20%, 50% or 100%.
  for (const double top : {0.1, 0.2, 0.5, 1.0})
    if (m.v_max <= top) {
      m.v_max = top;
      break;
    }
  return m;
}

void plot(const Table& t, const PlotRequest& r, const std::string& svg_path, const std::string& png_path) {
  const auto& kinds = plot_kinds();
  const auto it = std::find_if(kinds.begin(), kinds.end(), [&](const PlotKindInfo& k) { return k.kind == r.kind; });
  if (it != kinds.end() && it->heatmap) render(heatmap(t, r), svg_path, png_path);
  else render(line_chart(t, r), svg_path, png_path);
}

}  // namespace ringsim::planning
