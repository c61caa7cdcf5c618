#include "planning/chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <stdexcept>

#include <cairo-svg.h>
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <mutex>
#include <fmt/format.h>

#include "io/output_file.hpp"
#include "models/io/error.hpp"

namespace ringsim::planning {

namespace {
constexpr const char* kUnfitLabel = "does not fit in memory";  // the open marker's legend entry
}  // namespace

namespace {

constexpr double kWidth = 900, kHeight = 560;
constexpr const char* kFont = "DejaVu Sans";
// Tableau-10: distinguishable, printable.
constexpr double kColours[][3] = {{0.12, 0.47, 0.71}, {1.00, 0.50, 0.05}, {0.17, 0.63, 0.17}, {0.84, 0.15, 0.16},
                                  {0.58, 0.40, 0.74}, {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.50, 0.50, 0.50},
                                  {0.74, 0.74, 0.13}, {0.09, 0.75, 0.81}};

void text(cairo_t* cr, const std::string& s, double x, double y, double size, double align_x = 0, double align_y = 0.5,
          bool bold = false, double angle = 0) {
  cairo_select_font_face(cr, kFont, CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_text_extents_t e;
  cairo_text_extents(cr, s.c_str(), &e);
  cairo_save(cr);
  cairo_translate(cr, x, y);
  cairo_rotate(cr, angle);
  cairo_move_to(cr, -e.x_bearing - align_x * e.width, -e.y_bearing - align_y * e.height);
  cairo_show_text(cr, s.c_str());
  cairo_restore(cr);
}

double text_width(cairo_t* cr, const std::string& s, double size) {
  cairo_select_font_face(cr, kFont, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_text_extents_t e;
  cairo_text_extents(cr, s.c_str(), &e);
  return e.x_advance;
}

// cairo's stream writer: appends to a std::string.
cairo_status_t append_to_string(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

void check_status(cairo_status_t status, const std::string& path) {
  if (status != CAIRO_STATUS_SUCCESS) throw std::runtime_error("cannot draw " + path + ": " + cairo_status_to_string(status));
}

// cairo and fontconfig keep font caches for the life of the process; release them at exit so
// that a leak checker (the ASan build's LeakSanitizer) sees only real leaks.
void release_font_caches_at_exit() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit([] {
      cairo_debug_reset_static_data();
      FcFini();
    });
  });
}

// Draws with `draw` on an SVG and/or a PNG surface, in memory; then each file is written
// through io::write_output (complete or absent, never through a planted link).
void write_surfaces(const std::string& svg_path, const std::string& png_path, const std::function<void(cairo_t*)>& draw) {
  release_font_caches_at_exit();
  std::string svg, png;
  if (!svg_path.empty()) {
    cairo_surface_t* s = cairo_svg_surface_create_for_stream(append_to_string, &svg, kWidth, kHeight);
    cairo_t* cr = cairo_create(s);
    draw(cr);
    cairo_destroy(cr);
    cairo_surface_finish(s);
    const auto status = cairo_surface_status(s);
    cairo_surface_destroy(s);
    check_status(status, svg_path);
  }
  if (!png_path.empty()) {
    cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(kWidth), static_cast<int>(kHeight));
    cairo_t* cr = cairo_create(s);
    draw(cr);
    cairo_destroy(cr);
    const auto status = cairo_surface_write_to_png_stream(s, append_to_string, &png);
    cairo_surface_destroy(s);
    check_status(status, png_path);
  }
  if (!svg_path.empty()) io::write_output(svg_path, svg);
  if (!png_path.empty()) io::write_output(png_path, png);
}

std::string trim_zeros(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

std::vector<double> round_ticks(double lo, double hi, int target) {
  // Whatever the data: finite bounds (callers skip non-finite points; this keeps an empty or
  // overflowing range from making no ticks or endless ones).
  if (!std::isfinite(lo)) lo = 0;
  if (!std::isfinite(hi)) hi = lo + 1;
  lo = std::clamp(lo, -1e300, 1e300);
  hi = std::clamp(hi, -1e300, 1e300);
  if (!(hi > lo)) hi = lo + (lo == 0 ? 1 : std::abs(lo) * 0.1);
  const double raw = (hi - lo) / std::max(1, target - 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> t;
  // At most a few dozen: a range far from 0 can be narrower than its values' resolution.
  for (double v = std::floor(lo / step) * step; v <= hi + step * 1e-9 && t.size() < 64; v += step)
    t.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  if (t.empty()) t.push_back(lo);
  if (t.back() < hi - step * 1e-9) t.push_back(t.back() + step);
  return t;
}

std::string tick_label(double v, AxisFormat f, double step) {
  // Decimals that tell ticks `st` apart: 0 to 12 (a step of 0, inf or 1e-300 from hostile
  // figures must not reach the conversion to int).
  const auto decimals = [](double st) {
    const double d = std::ceil(-std::log10(st) - 1e-9);
    return std::isfinite(d) ? static_cast<int>(std::clamp(d, 0.0, 12.0)) : 0;
  };
  switch (f) {
    case AxisFormat::Binary: {
      const char* units[] = {"", "k", "M", "G", "T"};
      int u = 0;
      double x = v;
      while (std::abs(x) >= 1024 && u < 4) x /= 1024, ++u;
      return trim_zeros(fmt::format("{:.2f}", x)) + units[u];
    }
    case AxisFormat::Metric: {
      const char* units[] = {"", "k", "M", "G", "T"};
      int u = 0;
      double x = v, st = step;
      while (std::abs(x) >= 1000 && u < 4) x /= 1000, st /= 1000, ++u;
      return fmt::format("{:.{}f}", x, decimals(st)) + (u ? std::string(" ") + units[u] : std::string());
    }
    case AxisFormat::Plain: return fmt::format("{:.{}f}", v, decimals(step));
    case AxisFormat::HitRate: return trim_zeros(fmt::format("{:.1f}", 100 * (1 - v))) + "%";
  }
  return fmt::format("{}", v);
}

void render(const LineChart& c, const std::string& svg_path, const std::string& png_path) {
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const auto& s : c.series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) || (c.log2_x && s.x[i] <= 0)) continue;
      x0 = std::min(x0, s.x[i]), x1 = std::max(x1, s.x[i]);
      y0 = std::min(y0, s.y[i]), y1 = std::max(y1, s.y[i]);
    }
  if (!std::isfinite(x0)) throw models::InputError({}, 0, "plot", "no rows to draw (check --where and the CSV's status column)");
  for (const auto& r : c.references) y0 = std::min(y0, r.y), y1 = std::max(y1, r.y);
  for (const auto& m : c.marks)
    if (std::isfinite(m.x) && (!c.log2_x || m.x > 0)) x0 = std::min(x0, m.x), x1 = std::max(x1, m.x);
  if (c.y_min) y0 = std::min(y0, *c.y_min);
  const auto yt = round_ticks(y0, y1);
  const double ylo = yt.front(), yhi = yt.back(), ystep = yt.size() > 1 ? yt[1] - yt[0] : 1;
  // x ticks: powers of two on a log2 axis (every other one when crowded), round values otherwise.
  std::vector<double> xt;
  double xlo = x0, xhi = x1;
  if (c.log2_x) {
    const int e0 = static_cast<int>(std::floor(std::log2(x0))), e1 = static_cast<int>(std::ceil(std::log2(x1)));
    const int every = (e1 - e0) > 10 ? 2 : 1;
    for (int e = e0; e <= e1; e += every) xt.push_back(std::ldexp(1.0, e));
    xlo = std::ldexp(1.0, e0), xhi = std::max(std::ldexp(1.0, e1), xlo * 2);
  } else {
    xt = round_ticks(x0, x1);
    xlo = xt.front(), xhi = xt.back();
  }
  const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1;

  write_surfaces(svg_path, png_path, [&](cairo_t* cr) {
    // Legend width from the longest label.
    double legend_w = 0;
    for (const auto& s : c.series) legend_w = std::max(legend_w, text_width(cr, s.label, 12));
    for (const auto& r : c.references) legend_w = std::max(legend_w, text_width(cr, r.label, 12));
    if (!c.marks.empty()) legend_w = std::max(legend_w, text_width(cr, c.marks_label, 12));
    const bool marks_unfit = std::any_of(c.series.begin(), c.series.end(), [](const Series& s) {
      return std::find(s.fits.begin(), s.fits.end(), false) != s.fits.end();
    });
    if (marks_unfit) legend_w = std::max(legend_w, text_width(cr, kUnfitLabel, 12));
    // The legend takes what its labels need, up to 40% of the width; longer labels are cut.
    legend_w = std::min(legend_w + 50, 0.4 * kWidth);
    const auto fit = [&](std::string s) {
      if (s.size() > 300) s.resize(300);  // a label from a hostile CSV cell: a screen's worth
      if (text_width(cr, s, 12) <= legend_w - 50) return s;
      while (!s.empty() && text_width(cr, s + "...", 12) > legend_w - 50) {
        s.pop_back();
        // Whole UTF-8 characters only: drop the continuation bytes of the one cut.
        while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();
      }
      return s + "...";
    };
    const double L = 90, R = 20 + legend_w, T = 50, B = 70;
    const double W = kWidth - L - R, H = kHeight - T - B;
    const auto px = [&](double x) {
      const double f = c.log2_x ? (std::log2(x) - std::log2(xlo)) / (std::log2(xhi) - std::log2(xlo))
                                : (x - xlo) / (xhi - xlo);
      return L + (c.reverse_x ? 1 - f : f) * W;
    };
    const auto py = [&](double y) { return T + H - (y - ylo) / (yhi - ylo) * H; };
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text(cr, c.title, kWidth / 2, 24, 16, 0.5, 0.5, true);
    // Grid and ticks.
    cairo_set_line_width(cr, 1);
    for (const double y : yt) {
      cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
      cairo_move_to(cr, L, std::round(py(y)) + 0.5);
      cairo_line_to(cr, L + W, std::round(py(y)) + 0.5);
      cairo_stroke(cr);
      cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
      text(cr, tick_label(y, c.y_format, ystep), L - 8, py(y), 12, 1.0, 0.5);
    }
    for (const double x : xt) {
      cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
      cairo_move_to(cr, std::round(px(x)) + 0.5, T);
      cairo_line_to(cr, std::round(px(x)) + 0.5, T + H);
      cairo_stroke(cr);
      cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
      text(cr, tick_label(x, c.x_format, xstep), px(x), T + H + 8, 12, 0.5, 0.0);
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_rectangle(cr, L + 0.5, T + 0.5, W, H);
    cairo_stroke(cr);
    text(cr, c.x_label, L + W / 2, kHeight - 24, 13, 0.5, 0.5);
    text(cr, c.y_label, 22, T + H / 2, 13, 0.5, 0.5, false, -M_PI / 2);
    // Reference lines, dashed.
    double ly = T + 10;
    const double lx = L + W + 16;
    for (const auto& r : c.references) {
      const double dash[] = {6, 4};
      cairo_set_dash(cr, dash, 2, 0);
      cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
      cairo_set_line_width(cr, 1.5);
      cairo_move_to(cr, L, py(r.y));
      cairo_line_to(cr, L + W, py(r.y));
      cairo_stroke(cr);
      cairo_move_to(cr, lx, ly);
      cairo_line_to(cr, lx + 24, ly);
      cairo_stroke(cr);
      cairo_set_dash(cr, nullptr, 0, 0);
      text(cr, fit(r.label), lx + 30, ly, 12);
      ly += 20;
    }
    // Vertical marks, dashed, in their series' colour; one legend entry (grey) says what they are.
    if (!c.marks.empty()) {
      const double dash[] = {3, 3};
      cairo_set_dash(cr, dash, 2, 0);
      cairo_set_line_width(cr, 1.5);
      for (const auto& m : c.marks) {
        if (!std::isfinite(m.x) || (c.log2_x && m.x <= 0)) continue;
        const auto* col = kColours[m.series % 10];
        cairo_set_source_rgb(cr, col[0], col[1], col[2]);
        cairo_move_to(cr, px(m.x), T);
        cairo_line_to(cr, px(m.x), T + H);
        cairo_stroke(cr);
      }
      cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
      cairo_move_to(cr, lx + 12, ly - 8);
      cairo_line_to(cr, lx + 12, ly + 8);
      cairo_stroke(cr);
      cairo_set_dash(cr, nullptr, 0, 0);
      text(cr, fit(c.marks_label), lx + 30, ly, 12);
      ly += 20;
    }
    // Series: lines with point markers (open where the configuration does not fit in memory),
    // and the legend.
    bool any_unfit = false;
    for (std::size_t k = 0; k < c.series.size(); ++k) {
      const auto& s = c.series[k];
      const auto* col = kColours[k % 10];
      struct Pt {
        double x, y;
        bool fits;
        bool operator<(const Pt& o) const { return x < o.x; }
      };
      std::vector<Pt> pts;
      for (std::size_t i = 0; i < s.x.size(); ++i)
        if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]) && (!c.log2_x || s.x[i] > 0))
          pts.push_back({s.x[i], s.y[i], s.fits.empty() || s.fits[i]});
      std::sort(pts.begin(), pts.end());
      cairo_set_source_rgb(cr, col[0], col[1], col[2]);
      cairo_set_line_width(cr, 2);
      for (std::size_t i = 0; i < pts.size(); ++i)
        (i ? cairo_line_to : cairo_move_to)(cr, px(pts[i].x), py(pts[i].y));
      cairo_stroke(cr);
      for (const auto& p : pts) {
        cairo_new_path(cr);
        cairo_arc(cr, px(p.x), py(p.y), p.fits ? 3.5 : 4.5, 0, 2 * M_PI);
        if (p.fits) {
          cairo_fill(cr);
          continue;
        }
        any_unfit = true;
        cairo_set_source_rgb(cr, 1, 1, 1);
        cairo_fill_preserve(cr);
        cairo_set_source_rgb(cr, col[0], col[1], col[2]);
        cairo_set_line_width(cr, 1.5);
        cairo_stroke(cr);
        cairo_set_line_width(cr, 2);
      }
      cairo_move_to(cr, lx, ly);
      cairo_line_to(cr, lx + 24, ly);
      cairo_stroke(cr);
      cairo_arc(cr, lx + 12, ly, 3.5, 0, 2 * M_PI);
      cairo_fill(cr);
      cairo_set_source_rgb(cr, 0, 0, 0);
      text(cr, fit(s.label), lx + 30, ly, 12);
      ly += 20;
    }
    if (any_unfit) {
      cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
      cairo_set_line_width(cr, 1.5);
      cairo_new_path(cr);  // the legend text left a current point: no line from it
      cairo_arc(cr, lx + 12, ly, 4.5, 0, 2 * M_PI);
      cairo_stroke(cr);
      cairo_set_source_rgb(cr, 0, 0, 0);
      text(cr, fit(kUnfitLabel), lx + 30, ly, 12);
    }
  });
}

void render(const Heatmap& m, const std::string& svg_path, const std::string& png_path) {
  const std::size_t nx = m.x_ticks.size(), ny = m.y_ticks.size();
  if (nx == 0 || ny == 0 || m.values.size() != nx * ny)
    throw models::InputError({}, 0, "plot", "no rows to draw (check --where and the CSV's status column)");
  const auto colour = [&](double v, double* rgb) {
    // White (low) to dark red (high): exposed time reads as heat.
    const double t = std::clamp((v - m.v_min) / (m.v_max > m.v_min ? m.v_max - m.v_min : 1), 0.0, 1.0);
    rgb[0] = 1.0 - 0.35 * t;
    rgb[1] = 1.0 - 0.85 * t;
    rgb[2] = 1.0 - 0.85 * t;
  };
  const auto label = [&](double v) { return m.percent ? fmt::format("{:.0f}%", 100 * v) : fmt::format("{:.3g}", v); };
  write_surfaces(svg_path, png_path, [&](cairo_t* cr) {
    const double L = 110, R = 120, T = 50, B = 70;
    const double W = kWidth - L - R, H = kHeight - T - B;
    const double cw = W / static_cast<double>(nx), ch = H / static_cast<double>(ny);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text(cr, m.title, kWidth / 2, 24, 16, 0.5, 0.5, true);
    for (std::size_t j = 0; j < ny; ++j)
      for (std::size_t i = 0; i < nx; ++i) {
        const double v = m.values[j * nx + i];
        const double x = L + static_cast<double>(i) * cw, y = T + H - static_cast<double>(j + 1) * ch;
        double rgb[3] = {0.93, 0.93, 0.93};
        if (std::isfinite(v)) colour(v, rgb);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_rectangle(cr, x, y, cw, ch);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 1, 1, 1);
        cairo_set_line_width(cr, 1);
        cairo_rectangle(cr, x, y, cw, ch);
        cairo_stroke(cr);
        const double dark = std::isfinite(v) ? (v - m.v_min) / (m.v_max > m.v_min ? m.v_max - m.v_min : 1) : 0;
        cairo_set_source_rgb(cr, dark > 0.6 ? 1 : 0.1, dark > 0.6 ? 1 : 0.1, dark > 0.6 ? 1 : 0.1);
        text(cr, std::isfinite(v) ? label(v) : "-", x + cw / 2, y + ch / 2, std::min(13.0, ch * 0.4), 0.5, 0.5);
      }
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    for (std::size_t i = 0; i < nx; ++i) text(cr, m.x_ticks[i], L + (static_cast<double>(i) + 0.5) * cw, T + H + 8, 12, 0.5, 0.0);
    for (std::size_t j = 0; j < ny; ++j)
      text(cr, m.y_ticks[j], L - 8, T + H - (static_cast<double>(j) + 0.5) * ch, 12, 1.0, 0.5);
    text(cr, m.x_label, L + W / 2, kHeight - 24, 13, 0.5, 0.5);
    text(cr, m.y_label, 22, T + H / 2, 13, 0.5, 0.5, false, -M_PI / 2);
    // Colour bar with round ticks.
    const double bx = L + W + 30, bw = 18;
    for (int k = 0; k < 100; ++k) {
      double rgb[3];
      colour(m.v_min + (m.v_max - m.v_min) * (k + 0.5) / 100, rgb);
      cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
      cairo_rectangle(cr, bx, T + H - H * (k + 1) / 100.0, bw, H / 100.0 + 0.5);
      cairo_fill(cr);
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_rectangle(cr, bx + 0.5, T + 0.5, bw, H);
    cairo_stroke(cr);
    const auto ticks = round_ticks(m.v_min, m.v_max, 5);
    const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
    for (const double v : ticks) {
      if (v < m.v_min - 1e-12 || v > m.v_max + 1e-12) continue;
      const double y = T + H - (v - m.v_min) / (m.v_max > m.v_min ? m.v_max - m.v_min : 1) * H;
      text(cr, m.percent ? fmt::format("{:.0f}%", 100 * v) : tick_label(v, AxisFormat::Plain, step), bx + bw + 6, y, 11);
    }
    text(cr, m.value_label, bx + bw / 2, T + H + 20, 12, 0.5, 0.5);
  });
}

}  // namespace ringsim::planning
