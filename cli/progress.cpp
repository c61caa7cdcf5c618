#include "cli/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <unistd.h>

#include <fmt/format.h>

namespace ringsim::cli {

ProgressBar::ProgressBar(std::string what, std::string label)
    : what_(std::move(what)), label_(std::move(label)), tty_(isatty(fileno(stderr)) != 0) {
  if (!label_.empty()) label_ += ' ';
}

ProgressBar::~ProgressBar() { finish(); }

namespace {
std::string clock_text(double s) {
  const auto t = static_cast<long long>(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60) : fmt::format("{}:{:02}", t / 60, t % 60);
}
std::string rate_text(double r) {
  if (r >= 1e6) return fmt::format("{:.2f} M", r / 1e6);
  if (r >= 1e3) return fmt::format("{:.1f} k", r / 1e3);
  return fmt::format("{:.1f} ", r);
}
}  // namespace

void ProgressBar::update(std::int64_t done, std::int64_t total, std::int64_t done_this_run, double elapsed_s) {
  if (!tty_ || total <= 0) return;
  if (done < total && last_draw_s_ >= 0 && elapsed_s - last_draw_s_ < 0.1) return;
  last_draw_s_ = elapsed_s;
  const double frac = static_cast<double>(done) / static_cast<double>(total);
  constexpr int width = 30;
  const int filled = static_cast<int>(frac * width);
  std::string bar(static_cast<std::size_t>(filled), '=');
  if (filled < width) bar += '>' + std::string(static_cast<std::size_t>(width - filled - 1), ' ');
  const double rate = elapsed_s > 0 ? static_cast<double>(done_this_run) / elapsed_s : 0;
  const std::string eta = rate > 0 ? clock_text(static_cast<double>(total - done) / rate) : "?";
  std::fprintf(stderr, "\r%s[%s] %5.1f%%  %lld/%lld %s  %s%s/s  ETA %s   ", label_.c_str(), bar.c_str(), 100 * frac,
               static_cast<long long>(done), static_cast<long long>(total), what_.c_str(), rate_text(rate).c_str(),
               what_.c_str(), eta.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::update(std::int64_t done, std::int64_t total) {
  if (!tty_) return;
  update(done, total, done, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
}

void ProgressBar::update_bytes(std::int64_t read, std::int64_t total) {
  if (!tty_) return;
  const int shift = total < (std::int64_t{1} << 30) ? 10 : 20;
  what_ = shift == 10 ? "kB" : "MB";
  update(read >> shift, std::max<std::int64_t>(1, total >> shift));
}

void ProgressBar::finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

}  // namespace ringsim::cli
