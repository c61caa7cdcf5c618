#include "calibration/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ringsim::calibration {

namespace {
std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}
std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '<' ? std::string("&lt;") : c == '&' ? std::string("&amp;") : std::string(1, c);
  return o;
}
constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
}  // namespace

std::string svg_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                      const std::vector<PlotSeries>& series) {
  const double W = 760, H = 480, L = 70, R = 190, T = 40, B = 60;
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      x0 = std::min(x0, std::log2(s.x[i]));
      x1 = std::max(x1, std::log2(s.x[i]));
      for (double y : {s.predicted[i], s.measured[i]})
        if (std::isfinite(y)) y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  if (!(x1 > x0)) x1 = x0 + 1;
  y0 = std::floor(y0 * 10) / 10;
  y1 = std::ceil(y1 * 10) / 10;
  if (!(y1 > y0)) y1 = y0 + 0.1;
  auto px = [&](double x) { return L + (std::log2(x) - x0) / (x1 - x0) * (W - L - R); };
  auto py = [&](double y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); };
  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) + "\" height=\"" + num(H) +
                  "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o += "<text x=\"" + num(W / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" + esc(title) + "</text>\n";
  for (double y = y0; y <= y1 + 1e-9; y += 0.1) {
    o += "<line x1=\"" + num(L) + "\" x2=\"" + num(W - R) + "\" y1=\"" + num(py(y)) + "\" y2=\"" + num(py(y)) +
         "\" stroke=\"#ddd\"/>\n<text x=\"" + num(L - 6) + "\" y=\"" + num(py(y) + 4) + "\" text-anchor=\"end\">" +
         num(y).substr(0, 4) + "</text>\n";
  }
  for (int e = static_cast<int>(std::ceil(x0)); e <= static_cast<int>(std::floor(x1)); ++e) {
    const double x = std::ldexp(1.0, e);
    const std::string lab = x >= 1024 ? std::to_string(static_cast<long long>(x / 1024)) + "k" : std::to_string(static_cast<long long>(x));
    o += "<line x1=\"" + num(px(x)) + "\" x2=\"" + num(px(x)) + "\" y1=\"" + num(T) + "\" y2=\"" + num(H - B) +
         "\" stroke=\"#eee\"/>\n<text x=\"" + num(px(x)) + "\" y=\"" + num(H - B + 16) + "\" text-anchor=\"middle\">" + lab +
         "</text>\n";
  }
  o += "<rect x=\"" + num(L) + "\" y=\"" + num(T) + "\" width=\"" + num(W - L - R) + "\" height=\"" + num(H - T - B) +
       "\" fill=\"none\" stroke=\"black\"/>\n";
  o += "<text x=\"" + num((L + W - R) / 2) + "\" y=\"" + num(H - 18) + "\" text-anchor=\"middle\">" + esc(x_label) + "</text>\n";
  o += "<text transform=\"translate(18," + num((T + H - B) / 2) + ") rotate(-90)\" text-anchor=\"middle\">" + esc(y_label) +
       "</text>\n";
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    const std::string col = kColours[k % std::size(kColours)];
    std::string pts;
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (std::isfinite(s.predicted[i])) pts += num(px(s.x[i])) + "," + num(py(s.predicted[i])) + " ";
    o += "<polyline fill=\"none\" stroke=\"" + col + "\" stroke-width=\"2\" points=\"" + pts + "\"/>\n";
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (std::isfinite(s.measured[i]))
        o += "<circle cx=\"" + num(px(s.x[i])) + "\" cy=\"" + num(py(s.measured[i])) + "\" r=\"4\" fill=\"" + col + "\"/>\n";
    const double ly = T + 10 + 18 * static_cast<double>(k);
    o += "<line x1=\"" + num(W - R + 12) + "\" x2=\"" + num(W - R + 36) + "\" y1=\"" + num(ly) + "\" y2=\"" + num(ly) +
         "\" stroke=\"" + col + "\" stroke-width=\"2\"/><circle cx=\"" + num(W - R + 24) + "\" cy=\"" + num(ly) +
         "\" r=\"4\" fill=\"" + col + "\"/><text x=\"" + num(W - R + 42) + "\" y=\"" + num(ly + 4) + "\">" + esc(s.label) +
         "</text>\n";
  }
  o += "<text x=\"" + num(W - R + 12) + "\" y=\"" + num(T + 30 + 18 * static_cast<double>(series.size())) +
       "\" font-size=\"10\">lines: predicted; points: published</text>\n</svg>\n";
  return o;
}

}  // namespace ringsim::calibration
