#include "planning/sweep.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "io/output_file.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "models/io/input_file.hpp"
#include "models/io/parse.hpp"

namespace ringsim::planning {

using models::InputError;

Shard Shard::parse(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw InputError({}, 0, "shard", "expected K/N (e.g. 3/8), got '" + text + "'");
  Shard s;
  s.k = models::parse_positive_int(text.substr(0, slash), "shard");
  s.n = models::parse_positive_int(text.substr(slash + 1), "shard");
  if (s.k > s.n) throw InputError({}, 0, "shard", "K must be between 1 and N in K/N, got '" + text + "'");
  return s;
}

std::int64_t Shard::points(std::int64_t total) const noexcept {
  return total >= k ? (total - k) / n + 1 : 0;
}

std::string sweep_preamble(const SweepGrid& grid, const Shard& shard) {
  const std::int64_t total = grid.size();
  std::string s = fmt::format("# ringsim sweep: {} points, grid {}\n", total, grid.fingerprint());
  if (shard.n > 1) s += fmt::format("# shard {}/{}: {} points\n", shard.k, shard.n, shard.points(total));
  const auto cols = sweep_columns(grid.has_inference());
  for (std::size_t i = 0; i < cols.size(); ++i) s += (i ? "," : "") + cols[i];
  return s + "\n";
}

namespace {

// The ordered parallel loop behind every sweep: workers claim chunks of consecutive shard
// points, compute them with their own Evaluator, and park the chunk; the calling thread hands
// parked chunks on strictly in order. At most `window` chunks wait ahead of the next one, so
// memory stays bounded whatever the thread timing.
template <class Chunk, class IndexOf, class Compute, class Consume>
void ordered_loop(const SweepGrid& grid, const models::Catalog& catalog, const SweepOptions& options,
                  std::int64_t count, IndexOf index_of, Compute compute, Consume consume) {
  if (count <= 0) return;
  std::int64_t threads = options.threads > 0 ? options.threads
                                             : static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  // Simulator points take milliseconds: one per chunk keeps the cores busy and the bar moving;
  // analytic points take microseconds: chunks of up to 256 amortise the hand-over.
  const std::int64_t chunk = grid.engine == Engine::Des ? 1 : std::clamp<std::int64_t>(count / (threads * 16), 1, 256);
  const std::int64_t chunks = (count + chunk - 1) / chunk;
  threads = std::min(threads, chunks);
  const std::int64_t window = threads * 4;

  std::mutex mutex;
  std::condition_variable cv;
  std::map<std::int64_t, Chunk> parked;
  std::int64_t next_claim = 0, next_out = 0;
  std::exception_ptr error;
  bool stop = false;

  const auto worker = [&] {
    Evaluator ev(catalog, grid);
    for (;;) {
      std::int64_t c;
      {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return stop || next_claim >= chunks || next_claim < next_out + window; });
        if (stop || next_claim >= chunks) return;
        c = next_claim++;
      }
      Chunk out{};
      try {
        const std::int64_t begin = c * chunk, end = std::min(count, begin + chunk);
        for (std::int64_t j = begin; j < end; ++j)
          compute(ev, grid.point(index_of(j)), out);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        stop = true;
        cv.notify_all();
        return;
      }
      std::lock_guard lock(mutex);
      parked.emplace(c, std::move(out));
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (std::int64_t t = 0; t < threads; ++t) pool.emplace_back(worker);
  std::exception_ptr consume_error;
  for (std::int64_t c = 0; c < chunks; ++c) {
    Chunk ready;
    {
      std::unique_lock lock(mutex);
      cv.wait(lock, [&] { return stop || parked.count(c) > 0; });
      if (!parked.count(c)) break;  // a worker failed before this chunk was done
      ready = std::move(parked.at(c));
      parked.erase(c);
      next_out = c + 1;
      cv.notify_all();
    }
    const std::int64_t rows = std::min(count, (c + 1) * chunk) - c * chunk;
    try {
      consume(ready, rows);
    } catch (...) {
      consume_error = std::current_exception();
      std::lock_guard lock(mutex);
      stop = true;
      cv.notify_all();
      break;
    }
  }
  for (auto& t : pool) t.join();
  if (consume_error) std::rethrow_exception(consume_error);
  if (error) std::rethrow_exception(error);
}

struct TextChunk {
  std::string text;
  std::int64_t skipped = 0;
};

}  // namespace

SweepSummary run_points(const SweepGrid& grid, const models::Catalog& catalog, const SweepOptions& options,
                        std::int64_t first, const std::function<void(const std::string&)>& sink) {
  SweepSummary sum;
  sum.points = grid.size();
  sum.shard_points = options.shard.points(sum.points);
  sum.resumed = first;
  const auto start = std::chrono::steady_clock::now();
  ordered_loop<TextChunk>(
      grid, catalog, options, sum.shard_points - first, [&](std::int64_t j) { return options.shard.index(first + j); },
      [inference = grid.has_inference()](Evaluator& ev, const SweepPoint& p, TextChunk& out) {
        const auto r = ev.evaluate(p);
        if (!r.ok) ++out.skipped;
        append_csv_row(r, out.text, inference);
      },
      [&](TextChunk& c, std::int64_t rows) {
        sink(c.text);
        sum.written += rows;
        sum.skipped += c.skipped;
        if (options.progress) {
          SweepProgress pr;
          pr.done = first + sum.written;
          pr.total = sum.shard_points;
          pr.done_this_run = sum.written;
          pr.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          options.progress(pr);
        }
      });
  return sum;
}

void for_each_result(const SweepGrid& grid, const models::Catalog& catalog, const SweepOptions& options,
                     const std::function<void(SweepResult&&)>& consume, const std::vector<PointRange>* ranges) {
  // The points: the shard's, or those of the ranges (in order).
  std::int64_t total = options.shard.points(grid.size());
  std::vector<std::int64_t> range_end;  // points before the end of each range
  if (ranges) {
    total = 0;
    for (const auto& r : *ranges) range_end.push_back(total += r.count);
  }
  const auto index_of = [&](std::int64_t j) {
    if (!ranges) return options.shard.index(j);
    const auto k = static_cast<std::size_t>(std::upper_bound(range_end.begin(), range_end.end(), j) - range_end.begin());
    const auto& r = (*ranges)[k];
    return r.first + j - (range_end[k] - r.count);
  };
  std::int64_t done = 0;
  const auto start = std::chrono::steady_clock::now();
  ordered_loop<std::vector<SweepResult>>(
      grid, catalog, options, total, index_of,
      [](Evaluator& ev, const SweepPoint& p, std::vector<SweepResult>& out) { out.push_back(ev.evaluate(p)); },
      [&](std::vector<SweepResult>& c, std::int64_t) {
        for (auto& r : c) consume(std::move(r));
        done += static_cast<std::int64_t>(c.size());
        if (options.progress) {
          SweepProgress pr;
          pr.done = pr.done_this_run = done;
          pr.total = total;
          pr.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          options.progress(pr);
        }
      });
}

std::vector<SweepResult> evaluate_all(const SweepGrid& grid, const models::Catalog& catalog,
                                      const SweepOptions& options) {
  std::vector<SweepResult> all;
  all.reserve(static_cast<std::size_t>(std::min<std::int64_t>(options.shard.points(grid.size()), 1 << 20)));
  for_each_result(grid, catalog, options, [&](SweepResult&& r) { all.push_back(std::move(r)); });
  return all;
}

namespace {

// The sweep index a row line starts with, or -1.
std::int64_t row_index(const std::string& line) {
  const auto comma = line.find(',');
  if (comma == std::string::npos || comma == 0) return -1;
  std::int64_t v = 0;
  for (std::size_t i = 0; i < comma; ++i) {
    if (line[i] < '0' || line[i] > '9' || v > (std::int64_t{1} << 50)) return -1;
    v = v * 10 + (line[i] - '0');
  }
  return v;
}

// InputError naming the file, the row and the column of the first cell of `line` that is not a
// finite number where a number belongs: nan or inf (any case or sign) never comes out of a sweep,
// so it was written by hand or by another program. `columns` is the CSV header.
void check_finite_cells(const std::string& line, const std::string& columns, const std::string& path,
                        std::int64_t line_no) {
  std::size_t start = 0, column = 0;
  bool quoted = false;
  for (std::size_t i = 0; i <= line.size(); ++i) {
    if (i < line.size() && line[i] == '"') quoted = !quoted;
    if (i < line.size() && (quoted || line[i] != ',')) continue;
    std::string cell = line.substr(start, i - start);
    for (auto& ch : cell) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!cell.empty() && (cell[0] == '+' || cell[0] == '-')) cell.erase(0, 1);
    if (cell == "nan" || cell == "inf" || cell == "infinity") {
      const auto names = models::split(columns, ',');
      const std::string name = column < names.size() ? names[column] : "column " + std::to_string(column + 1);
      throw InputError(path, line_no, name,
                       "'" + line.substr(start, i - start) + "' is not a finite number: the file was changed; remove it or "
                       "write elsewhere");
    }
    start = i + 1;
    ++column;
  }
}

// A sweep output (to resume or merge): a regular file of bounded size (models/io/input_file.hpp).
std::string read_all(const std::string& path) {
  return models::InputFile(path, {}, "sweep output", models::kMaxDataFileBytes).read_all();
}

// How much of an existing sweep file is complete rows of this sweep: the byte length of the
// preamble plus every whole row in order, and those rows (views into `text`); rows beyond are
// dropped (cut by an interruption).
struct KeptRows {
  std::size_t bytes = 0;
  std::vector<std::string_view> lines;
};
KeptRows complete_prefix(const std::string& text, const std::string& preamble, const Shard& shard,
                         std::int64_t shard_points, const std::string& path) {
  if (text.size() < preamble.size() || text.compare(0, preamble.size(), preamble) != 0) {
    // A file cut inside its preamble holds no row yet: start again.
    if (preamble.compare(0, text.size(), text) == 0) return {};
    throw InputError(path, 1, "resume",
                     "the file is not this sweep's output (its first lines differ: another grid, shard or version); "
                     "remove it or write elsewhere");
  }
  // The column header is the preamble's last line (the preamble ends with a newline).
  const auto header_start = preamble.rfind('\n', preamble.size() - 2) + 1;
  const std::string columns = preamble.substr(header_start, preamble.size() - 1 - header_start);
  const auto preamble_lines = static_cast<std::int64_t>(std::count(preamble.begin(), preamble.end(), '\n'));
  KeptRows kept;
  std::size_t pos = preamble.size();
  while (pos < text.size()) {
    const auto nl = text.find('\n', pos);
    if (nl == std::string::npos) break;  // the row the interruption cut
    const std::string line = text.substr(pos, nl - pos);
    const auto rows = static_cast<std::int64_t>(kept.lines.size());
    if (rows >= shard_points || row_index(line) != shard.index(rows))
      throw InputError(path, 0, "index",
                       fmt::format("row {} of the file is not the sweep's point {}: the file was changed; remove it "
                                   "or write elsewhere",
                                   rows + 1, shard.index(rows)));
    check_finite_cells(line, columns, path, preamble_lines + rows + 1);
    kept.lines.emplace_back(text.data() + pos, nl - pos);
    pos = nl + 1;
  }
  kept.bytes = pos;
  return kept;
}

// The rows of a resumed file that are computed again and compared byte for byte: every row when
// they are cheap (analytic points, at most kRecomputeAllRows), else kRecomputeSample rows spread
// evenly over the file, the last one included (simulator points take milliseconds each).
constexpr std::int64_t kRecomputeAllRows = std::int64_t{1} << 16;
constexpr std::int64_t kRecomputeSample = 64;

std::vector<std::int64_t> rows_to_recompute(const SweepGrid& grid, std::int64_t rows) {
  std::vector<std::int64_t> out;
  if (rows <= 0) return out;
  const std::int64_t want = grid.engine == Engine::Des ? std::min<std::int64_t>(rows, 8)
                            : rows <= kRecomputeAllRows ? rows
                                                        : kRecomputeSample;
  for (std::int64_t i = 0; i < want; ++i) out.push_back(want == rows ? i : (rows - 1) * i / std::max<std::int64_t>(1, want - 1));
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// InputError naming the file and the row when a kept row differs from what the sweep computes for
// its point (an edited value): resuming would otherwise pass it on with exit 0.
void verify_resumed_rows(const SweepGrid& grid, const models::Catalog& catalog, const SweepOptions& options,
                         const std::vector<std::string_view>& lines, const std::string& path) {
  const auto pick = rows_to_recompute(grid, static_cast<std::int64_t>(lines.size()));
  if (pick.empty()) return;
  std::string computed;
  ordered_loop<TextChunk>(
      grid, catalog, options, static_cast<std::int64_t>(pick.size()),
      [&](std::int64_t j) { return options.shard.index(pick[static_cast<std::size_t>(j)]); },
      [inference = grid.has_inference()](Evaluator& ev, const SweepPoint& p, TextChunk& out) {
        append_csv_row(ev.evaluate(p), out.text, inference);
      },
      [&](TextChunk& c, std::int64_t) { computed += c.text; });
  std::size_t at = 0;
  for (const auto j : pick) {
    const auto nl = computed.find('\n', at);
    const std::string_view want(computed.data() + at, nl - at);
    at = nl + 1;
    if (lines[static_cast<std::size_t>(j)] != want)
      throw InputError(path, 0, "resume",
                       fmt::format("row {} (the sweep's point {}) differs from what the sweep computes for it: the file "
                                   "was changed; remove it or write elsewhere",
                                   j + 1, options.shard.index(j)));
  }
}

}  // namespace

SweepSummary run_sweep_to_file(const SweepGrid& grid, const models::Catalog& catalog, const std::string& path,
                               bool resume, const SweepOptions& options) {
  const std::string preamble = sweep_preamble(grid, options.shard);
  const std::int64_t shard_points = options.shard.points(grid.size());
  if (path.empty() || path == "-") {
    if (resume) throw InputError({}, 0, "resume", "--resume needs an output file (-o FILE)");
    std::fwrite(preamble.data(), 1, preamble.size(), stdout);
    auto sum = run_points(grid, catalog, options, 0, [](const std::string& s) {
      std::fwrite(s.data(), 1, s.size(), stdout);
      std::fflush(stdout);
    });
    return sum;
  }
  std::int64_t first = 0;
  std::size_t keep = 0;
  std::error_code ec;
  // A link at the output is refused before it is read, as the journal refuses to write through it.
  if (std::filesystem::is_symlink(path, ec))
    throw io::OutputError(path, ELOOP, "cannot write " + path + ": it is a symbolic link (not followed)");
  if (resume && std::filesystem::exists(path, ec)) {
    const std::string text = read_all(path);
    const auto kept = complete_prefix(text, preamble, options.shard, shard_points, path);
    keep = kept.bytes;
    first = static_cast<std::int64_t>(kept.lines.size());
    verify_resumed_rows(grid, catalog, options, kept.lines, path);
  }
  // Written in place, row by row: an interrupted sweep keeps every complete row for --resume.
  io::JournalFile f(path, keep);
  if (keep == 0) f.write(preamble);
  SweepSummary sum = run_points(grid, catalog, options, first, [&](const std::string& s) { f.write(s); });
  f.close();
  return sum;
}

std::string merge_shards(const std::vector<std::string>& paths) {
  if (paths.empty()) throw InputError({}, 0, "merge", "no shard files given");
  std::string head;  // the sweep line, common to all shards
  std::int64_t n = 0, total = 0;
  std::string columns;
  std::vector<std::vector<std::string>> rows_of;  // per shard k-1: its rows
  std::vector<std::string> file_of;
  for (const auto& path : paths) {
    const std::string text = read_all(path);
    std::istringstream in(text);
    std::string first, second, header;
    std::getline(in, first);
    std::int64_t points = 0;
    unsigned long long fp = 0;
    if (std::sscanf(first.c_str(), "# ringsim sweep: %lld points, grid %llx", reinterpret_cast<long long*>(&points), &fp) != 2)
      throw InputError(path, 1, "merge", "not a ringsim sweep output (no '# ringsim sweep' line)");
    long long k = 1, nn = 1, q = 0;
    std::getline(in, second);
    if (second.starts_with("# shard ")) {
      if (std::sscanf(second.c_str(), "# shard %lld/%lld: %lld points", &k, &nn, &q) != 3 || k < 1 || k > nn)
        throw InputError(path, 2, "merge", "malformed shard line '" + second + "'");
      std::getline(in, header);
    } else {
      header = second;
    }
    if (head.empty()) {
      head = first;
      n = nn;
      total = points;
      columns = header;
      rows_of.assign(static_cast<std::size_t>(n), {});
      file_of.assign(static_cast<std::size_t>(n), {});
    } else if (first != head || header != columns) {
      throw InputError(path, 1, "merge", "a shard of another sweep than " + paths.front());
    } else if (nn != n) {
      throw InputError(path, 2, "merge", fmt::format("a shard of {} shards, the others have {}", nn, n));
    }
    auto& slot = file_of[static_cast<std::size_t>(k - 1)];
    if (!slot.empty()) throw InputError(path, 2, "merge", fmt::format("shard {}/{} is also {}", k, n, slot));
    slot = path;
    const Shard shard{k, nn};
    auto& rows = rows_of[static_cast<std::size_t>(k - 1)];
    std::string line;
    while (std::getline(in, line)) {
      if (in.eof() && !text.ends_with('\n'))
        throw InputError(path, 0, "merge", "the last row is cut: finish the shard with --resume first");
      if (row_index(line) != shard.index(static_cast<std::int64_t>(rows.size())))
        throw InputError(path, 0, "index", fmt::format("row {} is not the shard's point {}", rows.size() + 1,
                                                       shard.index(static_cast<std::int64_t>(rows.size()))));
      check_finite_cells(line, header, path, static_cast<std::int64_t>(rows.size()) + (nn > 1 ? 4 : 3));
      rows.push_back(line);
    }
    if (static_cast<std::int64_t>(rows.size()) != shard.points(total))
      throw InputError(path, 0, "merge",
                       fmt::format("shard {}/{} has {} of its {} rows: finish it with --resume first", k, n, rows.size(),
                                   shard.points(total)));
  }
  for (std::int64_t k = 1; k <= n; ++k)
    if (file_of[static_cast<std::size_t>(k - 1)].empty())
      throw InputError(paths.front(), 0, "merge", fmt::format("shard {}/{} is missing", k, n));
  std::string out = head + "\n" + columns + "\n";
  for (std::int64_t i = 0; i < total; ++i)
    out += rows_of[static_cast<std::size_t>(i % n)][static_cast<std::size_t>(i / n)] + "\n";
  return out;
}

}  // namespace ringsim::planning
