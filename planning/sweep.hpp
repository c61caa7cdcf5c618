#pragma once
// Running a sweep on every core: points are evaluated by worker threads (one Evaluator each) in
// chunks, and rows are handed on in the sweep's order whatever the thread timing, so the output
// is the same bytes for any thread count. A shard K/N takes the points i with i % N == K - 1.
//
// The output file is the one output of ringsim written in place rather than atomically: rows are
// appended as they finish so an interrupted sweep keeps them, and --resume continues after the
// last complete row (a row cut by the interruption is dropped and computed again). It starts
// with comment lines that name the grid's fingerprint (and the shard), so resume and merge
// refuse another sweep's file.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "planning/evaluate.hpp"
#include "planning/grid.hpp"
#include "models/catalog/resolve.hpp"

namespace ringsim::planning {

struct Shard {
  std::int64_t k = 1;  // 1-based
  std::int64_t n = 1;
  // "K/N" with 1 <= K <= N; InputError (field "shard") otherwise.
  [[nodiscard]] static Shard parse(const std::string& text);
  // Points of a sweep of `total` that belong to this shard.
  [[nodiscard]] std::int64_t points(std::int64_t total) const noexcept;
  // The sweep index of the shard's j-th point.
  [[nodiscard]] std::int64_t index(std::int64_t j) const noexcept { return k - 1 + j * n; }
};

// The lines before the CSV rows: "# ringsim sweep: P points, grid FINGERPRINT", then for a shard
// of several "# shard K/N: Q points", then the column header.
[[nodiscard]] std::string sweep_preamble(const SweepGrid& grid, const Shard& shard);

struct SweepProgress {
  std::int64_t done = 0;   // rows of this run and of the resumed file
  std::int64_t total = 0;  // rows of the shard
  double elapsed_s = 0;    // of this run
  std::int64_t done_this_run = 0;
};

struct SweepOptions {
  Shard shard;
  std::int64_t threads = 0;  // 0: every core (std::thread::hardware_concurrency)
  std::function<void(const SweepProgress&)> progress;  // called from the calling thread
};

struct SweepSummary {
  std::int64_t points = 0;   // of the whole sweep
  std::int64_t shard_points = 0;
  std::int64_t resumed = 0;  // rows found complete in the file
  std::int64_t written = 0;  // rows this run wrote
  std::int64_t skipped = 0;  // of those, rows whose axes do not go together
};

// Evaluates the shard's points from `first` (its j-th point) on and hands rows, in order, to
// `sink` (a few rows at a time, whole lines). Exceptions other than InputError (which become
// skipped rows) stop the sweep and are rethrown after the rows before them were handed on.
SweepSummary run_points(const SweepGrid& grid, const models::Catalog& catalog, const SweepOptions& options,
                        std::int64_t first, const std::function<void(const std::string&)>& sink);

// The sweep into `path` ("-": stdout, no resume). resume: continue the file if it exists (its
// preamble must be this sweep's and shard's), else start it; without resume an existing file is
// replaced. InputError names the file for another sweep's file or a row out of place.
SweepSummary run_sweep_to_file(const SweepGrid& grid, const models::Catalog& catalog, const std::string& path,
                               bool resume, const SweepOptions& options);

// Joins the shards 1..N of one sweep (any order of files) into the unsharded sweep's bytes.
// InputError for files of different sweeps, a missing or repeated shard, or an incomplete one.
[[nodiscard]] std::string merge_shards(const std::vector<std::string>& paths);

// Consecutive sweep indices [first, first + count).
struct PointRange {
  std::int64_t first = 0;
  std::int64_t count = 0;
  friend bool operator==(const PointRange&, const PointRange&) = default;
};

// Evaluates every point of the shard, or with `ranges` only their points (ascending, disjoint;
// the shard is then ignored), and hands each result to `consume`, in the sweep's order, on the
// calling thread (the planner's path; no file). Same threads and evaluator as the file sweep.
void for_each_result(const SweepGrid& grid, const models::Catalog& catalog, const SweepOptions& options,
                     const std::function<void(SweepResult&&)>& consume, const std::vector<PointRange>* ranges = nullptr);
// All results in the sweep's order (small sweeps; tests).
[[nodiscard]] std::vector<SweepResult> evaluate_all(const SweepGrid& grid, const models::Catalog& catalog,
                                                    const SweepOptions& options);

}  // namespace ringsim::planning
