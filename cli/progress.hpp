#pragma once
// A progress bar with rate and ETA on stderr, drawn only when stderr is a terminal (a batch
// job's log stays clean), redrawn at most ten times a second. The one progress display of
// every long command (sweep, plan, workload, simulate, predict --engine des).
#include <chrono>
#include <cstdint>
#include <string>

namespace ringsim::cli {

class ProgressBar {
 public:
  // what: the unit counted ("rows", "plans"); label: what is running, before the bar.
  explicit ProgressBar(std::string what, std::string label = {});
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  // done of total; elapsed_s and done_this_run give the rate (resumed work excluded).
  void update(std::int64_t done, std::int64_t total, std::int64_t done_this_run, double elapsed_s);
  // done of total, all of it done by this run, timed from construction.
  void update(std::int64_t done, std::int64_t total);
  // Bytes read of a file of `total` bytes, counted in kB below 1 GiB and MB above (the unit given
  // at construction is replaced): a gzip of 2 MB that inflates to a gigabyte of text moves its
  // bar every few kB instead of sitting at 0 of 2 MB for the whole read.
  void update_bytes(std::int64_t read, std::int64_t total);
  void finish();
  [[nodiscard]] bool active() const noexcept { return tty_; }

 private:
  std::string what_, label_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  bool tty_ = false;
  bool drawn_ = false;
  double last_draw_s_ = -1;
};

}  // namespace ringsim::cli
