#pragma once
// A progress bar with rate and ETA on stderr, drawn only when stderr is a terminal (a batch
// job's log stays clean), redrawn at most ten times a second.
#include <cstdint>
#include <string>

namespace ringsim::cli {

class ProgressBar {
 public:
  // what: the unit counted ("rows", "plans").
  explicit ProgressBar(std::string what);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  // done of total; elapsed_s and done_this_run give the rate (resumed work excluded).
  void update(std::int64_t done, std::int64_t total, std::int64_t done_this_run, double elapsed_s);
  void finish();
  [[nodiscard]] bool active() const noexcept { return tty_; }

 private:
  std::string what_;
  bool tty_ = false;
  bool drawn_ = false;
  double last_draw_s_ = -1;
};

}  // namespace ringsim::cli
