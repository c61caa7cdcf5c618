#include "calibration/link_probes.hpp"

#include <cmath>

#include <fmt/format.h>

#include "models/io/error.hpp"

namespace ringsim::calibration {

using models::InputError;

namespace {

struct Line {
  double latency = 0, inverse_bandwidth = 0;
  double cov_ll = 0, cov_lc = 0, cov_cc = 0;  // covariance of (latency, inverse bandwidth)
};

// Least squares of (latency + c x bytes - t) / t over the rows (skipping `skip`): minimising
// relative error, the weighted normal equations of x = (1/t, bytes/t) against 1.
Line fit_line(const std::vector<double>& bytes, const std::vector<double>& t, std::size_t skip) {
  double a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i == skip) continue;
    const double x1 = 1 / t[i], x2 = bytes[i] / t[i];
    a11 += x1 * x1, a12 += x1 * x2, a22 += x2 * x2, b1 += x1, b2 += x2;
    ++n;
  }
  const double det = a11 * a22 - a12 * a12;
  Line l;
  if (!(std::abs(det) > 0)) return l;
  l.latency = (a22 * b1 - a12 * b2) / det;
  l.inverse_bandwidth = (a11 * b2 - a12 * b1) / det;
  double rss = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i == skip) continue;
    const double r = (l.latency + l.inverse_bandwidth * bytes[i] - t[i]) / t[i];
    rss += r * r;
  }
  const double s2 = n > 2 ? rss / static_cast<double>(n - 2) : 0;
  l.cov_ll = s2 * a22 / det, l.cov_lc = -s2 * a12 / det, l.cov_cc = s2 * a11 / det;
  return l;
}

}  // namespace

HopFit fit_hop(const std::vector<ProbeRow>& rows, const std::string& file, double min_bytes) {
  HopFit f;
  for (const auto& r : rows) {
    if (r.bytes < min_bytes) continue;
    f.bytes.push_back(r.bytes);
    f.measured_s.push_back(r.seconds);
  }
  if (f.bytes.size() < 3)
    throw InputError(file, 0, "size_bytes",
                     fmt::format("{} sizes of at least {:.0f} bytes for a hop of {} ({}): a line needs 3", f.bytes.size(),
                                 min_bytes, rows.empty() ? "?" : rows.front().hardware,
                                 rows.empty() ? "?" : rows.front().pattern));
  const auto all = fit_line(f.bytes, f.measured_s, f.bytes.size());
  if (!(all.inverse_bandwidth > 0))
    throw InputError(file, 0, "size_bytes", "the probes' time does not grow with the size: no bandwidth to fit");
  double abs_rel = 0;
  for (std::size_t i = 0; i < f.bytes.size(); ++i) {
    f.fitted_s.push_back(all.latency + all.inverse_bandwidth * f.bytes[i]);
    const auto out = fit_line(f.bytes, f.measured_s, i);  // the size left out is predicted, never fitted
    f.held_out_s.push_back(out.latency + out.inverse_bandwidth * f.bytes[i]);
    abs_rel += std::abs(f.held_out_s.back() / f.measured_s[i] - 1);
  }
  auto& h = f.hop;
  h.bandwidth_bytes_per_s = 1 / all.inverse_bandwidth;
  h.latency_s = std::max(0.0, all.latency);  // a negative intercept within its error is a zero floor
  h.latency_se = std::sqrt(std::max(0.0, all.cov_ll));
  h.bandwidth_se = std::sqrt(std::max(0.0, all.cov_cc)) * h.bandwidth_bytes_per_s * h.bandwidth_bytes_per_s;
  h.held_out_mape = abs_rel / static_cast<double>(f.bytes.size());
  h.rows = static_cast<std::int64_t>(f.bytes.size());
  h.pattern = rows.front().pattern;
  return f;
}

HardwareFit fit_hardware(const std::vector<ProbeRow>& rows, const std::string& probe_prefix,
                         const std::string& catalog_name, const std::string& file) {
  std::vector<ProbeRow> ring, pair, inter;
  for (const auto& r : rows) {
    if (!r.hardware.starts_with(probe_prefix)) continue;
    (r.inter_node ? inter : r.ring ? ring : pair).push_back(r);
  }
  if (ring.empty() && pair.empty() && inter.empty())
    throw InputError(file, 0, "hardware", "no probe of a GPU named " + probe_prefix + "...");
  HardwareFit out;
  out.links.hardware = catalog_name;
  out.links.probe_name = probe_prefix;
  if (!ring.empty() || !pair.empty()) {
    out.intra = fit_hop(ring.empty() ? pair : ring, file);
    out.links.intra_node = out.intra.hop;
  }
  if (!inter.empty()) {
    out.inter = fit_hop(inter, file);
    out.links.inter_node = out.inter.hop;
  }
  return out;
}

}  // namespace ringsim::calibration
