#include "calibration/nccl_tests.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "models/io/error.hpp"
#include "models/io/input_file.hpp"
#include "models/io/parse.hpp"

namespace ringsim::calibration {

using models::InputError;

namespace {

constexpr std::array<std::string_view, 5> kNames = {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"};
// Tests nccl-tests also ships whose bus bandwidth is not a ring link's: named so the message says so.
constexpr std::array<std::string_view, 7> kOtherTests = {"broadcast", "reduce", "gather", "scatter",
                                                         "hypercube", "alltoallv", "bisection"};

std::vector<std::string_view> tokens(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const auto b = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

bool all_digits(std::string_view t) {
  return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A results row starts with its size: digits, or anything a number could be written as (a sign,
// a fraction, an exponent: "1e308", "-8", "1.5"), refused below as a size rather than skipped.
// NCCL INFO lines start with "host:pid:tid" or "[rank]" (a ':' or '[' in the first word) and
// are skipped, also where a host's name starts with digits.
bool is_row(const std::vector<std::string_view>& tok) {
  if (tok.empty()) return false;
  const auto t = tok[0];
  const bool starts_like_number = (t.front() >= '0' && t.front() <= '9') || t.front() == '-' || t.front() == '+' || t.front() == '.';
  return starts_like_number && std::any_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
         std::all_of(t.begin(), t.end(), [](char c) {
           return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
         });
}

// The table's header row, e.g. "#  size count type redop root time algbw busbw #wrong time ...":
// older versions lack root or redop, or print "error" for "#wrong"; the columns are found by name.
struct Columns {
  std::vector<std::string> names;
  std::size_t count = 0, time = 0, algbw = 0, busbw = 0, ip_busbw = 0, redop = 0;  // 0: absent (size is 0)
  std::int64_t line = 0;
};

std::optional<Columns> header_columns(std::vector<std::string_view> tok, std::int64_t line) {
  if (tok.empty() || tok[0].front() != '#') return std::nullopt;
  tok[0].remove_prefix(tok[0].find_first_not_of('#') == std::string_view::npos ? tok[0].size() : tok[0].find_first_not_of('#'));
  if (tok[0].empty()) tok.erase(tok.begin());
  if (tok.empty() || tok[0] != "size") return std::nullopt;
  Columns c;
  c.line = line;
  for (std::size_t i = 0; i < tok.size(); ++i) {
    c.names.emplace_back(tok[i]);
    auto first = [&](std::size_t& slot) { if (slot == 0) slot = i; };
    if (tok[i] == "count") first(c.count);
    if (tok[i] == "time") first(c.time);
    if (tok[i] == "algbw") first(c.algbw);
    if (tok[i] == "redop") first(c.redop);
    if (tok[i] == "busbw") (c.busbw == 0 ? c.busbw : c.ip_busbw) = i;
  }
  if (c.time == 0 || c.algbw == 0 || c.busbw == 0) return std::nullopt;
  return c;
}

// "name_perf" anywhere in a line (a command echo, "# Collective test starting: name_perf", a
// loader warning that quotes the binary's path): the word before "_perf".
std::vector<std::string> tests_named(std::string_view line) {
  std::vector<std::string> out;
  for (auto p = line.find("_perf"); p != std::string_view::npos; p = line.find("_perf", p + 1)) {
    const auto after = p + 5;
    if (after < line.size() && (std::isalnum(static_cast<unsigned char>(line[after])) != 0)) continue;
    auto b = p;
    while (b > 0 && ((std::isalnum(static_cast<unsigned char>(line[b - 1])) != 0) || line[b - 1] == '_')) --b;
    const auto word = line.substr(b, p - b);
    // Only nccl-tests' own binaries: a script's "run_perf" names no test.
    if (std::find(kNames.begin(), kNames.end(), word) != kNames.end() ||
        std::find(kOtherTests.begin(), kOtherTests.end(), word) != kOtherTests.end())
      out.emplace_back(word);
  }
  return out;
}

double number_at(const std::vector<std::string_view>& tok, const Columns& c, std::size_t i, const std::string& file,
                 std::int64_t line) {
  double v = 0;
  try {
    v = models::parse_double(tok[i], c.names[i]);
  } catch (const InputError& e) {
    throw e.located(file, line);
  }
  if (v < 0) throw InputError(file, line, c.names[i], "expected a number >= 0, got '" + std::string(tok[i]) + "'");
  return v;
}

NcclTestsRow read_row(const std::vector<std::string_view>& tok, const Columns& c, const std::string& file,
                      std::int64_t line) {
  if (tok.size() != c.names.size())
    throw InputError(file, line, tok.size() < c.names.size() ? c.names[tok.size()] : "columns",
                     fmt::format("expected {} columns as the header row (line {}) names, found {}", c.names.size(),
                                 c.line, tok.size()));
  NcclTestsRow r;
  std::uint64_t size = 0;
  const auto s = tok[0];
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), size);
  if (!all_digits(s) || ec != std::errc() || p != s.data() + s.size() || static_cast<double>(size) > kMaxNcclTestsSizeBytes)
    throw InputError(file, line, "size",
                     fmt::format("expected a size in bytes from 0 to {:.0f} (1 PiB), got '{}'", kMaxNcclTestsSizeBytes, s));
  r.size_bytes = static_cast<double>(size);
  // The element count nccl-tests prints beside the size (repository NVIDIA/nccl-tests,
  // src/common.cu @ a0b82b2260cf: writeBenchmarkLinePreamble(max(sendBytes, expectedBytes),
  // nbytes / wordSize(type), ...)): a whole number of elements of at least a byte each, so at most
  // the size. Not used by the fit, but a row whose count is not one is not the program's output.
  if (c.count != 0) {
    std::uint64_t count = 0;
    const auto n = tok[c.count];
    const auto [q, e] = std::from_chars(n.data(), n.data() + n.size(), count);
    if (!all_digits(n) || e != std::errc() || q != n.data() + n.size() || count > size)
      throw InputError(file, line, "count",
                       fmt::format("expected the element count, a whole number from 0 to the size ({}), got '{}'", size, n));
  }
  r.time_us = number_at(tok, c, c.time, file, line);
  if (!(r.time_us > 0)) throw InputError(file, line, "time", "expected a positive time (us), got '" + std::string(tok[c.time]) + "'");
  r.algbw = number_at(tok, c, c.algbw, file, line);
  r.busbw = number_at(tok, c, c.busbw, file, line);
  if (c.ip_busbw != 0) {
    double v = 0;
    const auto t = tok[c.ip_busbw];
    const auto [q, e2] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (e2 == std::errc() && q == t.data() + t.size() && std::isfinite(v) && v >= 0) r.in_place_busbw = v;
  }
  r.line = line;
  return r;
}

}  // namespace

std::string_view collective_name(NcclCollective c) noexcept { return kNames[static_cast<std::size_t>(c)]; }

std::optional<NcclCollective> collective_from_name(std::string_view name) noexcept {
  if (name.ends_with("_perf")) name.remove_suffix(5);
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (name == kNames[i]) return static_cast<NcclCollective>(i);
  return std::nullopt;
}

NcclRing nccl_ring(NcclCollective c, int ranks) noexcept {
  const double n = ranks;
  switch (c) {
    case NcclCollective::all_reduce: return {2 * (n - 1) / n, 2 * (ranks - 1)};
    case NcclCollective::all_gather:
    case NcclCollective::reduce_scatter: return {(n - 1) / n, ranks - 1};
    case NcclCollective::alltoall: return {(n - 1) / n, 1};
    case NcclCollective::sendrecv: return {1, 1};
  }
  return {};
}

NcclTestsFile parse_nccl_tests(std::string_view text, const std::string& file, const std::string& collective_option) {
  NcclTestsFile f;
  f.file = file;
  std::optional<Columns> cols;
  std::set<std::string> hosts;
  std::string named;  // the test the file names, and its line
  std::int64_t named_line = 0, line = 0;
  std::int64_t none_line = 0;  // the first row whose redop is 'none'
  for (std::size_t pos = 0; pos < text.size();) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    auto raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    // The program prints text: a NUL would split a row's word where no space is (and drop the row).
    if (const auto nul = raw.find('\0'); nul != std::string_view::npos)
      throw InputError(file, line, "text",
                       fmt::format("a NUL byte at column {}: expected nccl-tests' text output", nul + 1));
    const auto tok = tokens(raw);
    if (tok.empty()) continue;
    if (cols && is_row(tok)) {
      f.rows.push_back(read_row(tok, *cols, file, line));
      if (cols->redop != 0 && tok[cols->redop] == "none" && none_line == 0) none_line = line;
      continue;
    }
    if (auto h = header_columns(tok, line)) {
      cols = std::move(h);
      continue;
    }
    const auto t = models::trim(raw);
    if (tok.size() >= 2 && (tok[0] == "#" ? tok[1] == "Rank" : tok[0] == "#Rank")) {
      // "#  Rank  0 Group  0 Pid 1234 on HOST device  0 [0x1b] NVIDIA H100 80GB HBM3" (older: no Group).
      const auto on = std::find(tok.begin(), tok.end(), "on");
      if (on != tok.end() && on + 1 != tok.end()) hosts.emplace(*(on + 1));
      if (f.ranks == 0) {
        const auto br = std::find_if(tok.begin(), tok.end(), [](std::string_view x) { return x.front() == '['; });
        for (auto i = br == tok.end() ? tok.end() : br + 1; i != tok.end(); ++i) {
          if (!f.gpu.empty()) f.gpu += ' ';
          f.gpu.append(*i);
        }
      }
      if (++f.ranks > (1 << 24)) throw InputError(file, line, "ranks", "more than 16M '# Rank' lines");
      continue;
    }
    if (t.starts_with("#") && t.find("Avg bus bandwidth") != std::string_view::npos) {
      const auto colon = t.find(':');
      try {
        f.avg_busbw = models::parse_double(colon == std::string_view::npos ? std::string_view{} : t.substr(colon + 1), "avg_busbw");
      } catch (const InputError& e) {
        throw e.located(file, line);
      }
      continue;
    }
    for (auto& n : tests_named(t)) {
      if (named.empty()) {
        named = n, named_line = line;
      } else if (n != named) {
        throw InputError(file, line, "collective",
                         fmt::format("the file names two tests, {}_perf (line {}) and {}_perf: give one test's output per file",
                                     named, named_line, n));
      }
    }
  }
  if (!cols)
    throw InputError(file, line, "table",
                     "expected nccl-tests output: no results table (a header row '#  size  count  type ... time  algbw  busbw ...')");
  if (f.rows.empty()) throw InputError(file, cols->line, "table", "expected rows of sizes under the table header row");

  // Which test: the file's own words, else --collective; both must agree.
  if (!named.empty()) {
    const auto c = collective_from_name(named);
    if (!c) {
      const bool known = std::find(kOtherTests.begin(), kOtherTests.end(), named) != kOtherTests.end();
      throw InputError(file, named_line, "collective",
                       fmt::format("{}_perf{}: expected all_reduce, all_gather, reduce_scatter, alltoall or sendrecv", named,
                                   known ? " has no ring link's bus bandwidth" : ""));
    }
    f.collective = *c, f.collective_from = fmt::format("line {}", named_line);
  }
  if (!collective_option.empty()) {
    const auto c = collective_from_name(collective_option);
    if (!c)
      throw InputError({}, 0, "collective",
                       "expected all_reduce, all_gather, reduce_scatter, alltoall or sendrecv, got '" + collective_option + "'");
    if (!named.empty() && *c != f.collective)
      throw InputError(file, named_line, "collective",
                       fmt::format("the file ran {}_perf, --collective says {}", named, collective_option));
    if (named.empty()) f.collective = *c, f.collective_from = "--collective";
  }
  if (f.collective_from.empty())
    throw InputError(file, 0, "collective",
                     "the file does not name its test (no 'X_perf' command line or '# Collective test starting' line): "
                     "give --collective all_reduce|all_gather|reduce_scatter|alltoall|sendrecv");
  f.hosts = static_cast<int>(hosts.size());
  // A reduction prints its operation; "none" is a gather, all-to-all or copy's output.
  const bool reduction = f.collective == NcclCollective::all_reduce || f.collective == NcclCollective::reduce_scatter;
  if (reduction && none_line != 0)
    throw InputError(file, none_line, "redop",
                     fmt::format("{} reduces, but the row's redop is 'none': the output is another test's",
                                 collective_name(f.collective)));
  const bool needs_n = f.collective != NcclCollective::sendrecv;
  if (f.ranks > 0) {
    f.ranks_from = "Rank lines";
  } else if (needs_n) {
    // No "# Using devices" block (trimmed when pasted): n from busbw / algbw of the row with the
    // largest algbw, whose two printed decimals fix the ratio well enough to round n.
    const auto big = std::max_element(f.rows.begin(), f.rows.end(), [](auto& a, auto& b) { return a.algbw < b.algbw; });
    const double ratio = big->busbw / big->algbw;
    const double per = f.collective == NcclCollective::all_reduce ? ratio / 2 : ratio;  // (n-1)/n
    const double n = 1 / (1 - per);
    if (!(big->algbw >= 1) || !(per > 0 && per < 1) || !(std::abs(n - std::round(n)) < 0.1) || n > (1 << 24))
      throw InputError(file, big->line, "ranks",
                       fmt::format("no '#  Rank' lines, and busbw / algbw ({} / {}) gives no whole number of ranks for {}",
                                   big->busbw, big->algbw, collective_name(f.collective)));
    f.ranks = static_cast<int>(std::round(n));
    f.ranks_from = "busbw/algbw ratio";
  }
  if (needs_n && f.ranks < 2)
    throw InputError(file, 0, "ranks", fmt::format("{} over {} rank moves no data between GPUs: expected 2 or more", collective_name(f.collective), f.ranks));
  const auto ring = nccl_ring(f.collective, std::max(f.ranks, 2));
  for (auto& r : f.rows) {
    r.collective = f.collective;
    r.ranks = f.ranks;
    // The printed busbw must be size / time x the factor for this collective and n: else the test
    // or the rank count read here is not the one that ran.
    const double expect = r.size_bytes / (r.time_us * 1e-6) / 1e9 * ring.factor;
    if (!(std::abs(r.busbw - expect) <= 0.011 + 0.005 * expect))
      throw InputError(file, r.line, "busbw",
                       fmt::format("printed {} GB/s, but size / time x {:.4g} ({} over {} ranks) is {:.4g}: the file is "
                                   "not {} output over {} ranks",
                                   r.busbw, ring.factor, collective_name(f.collective), f.ranks, expect,
                                   collective_name(f.collective), f.ranks));
  }
  return f;
}

NcclTestsFile read_nccl_tests(const std::string& path, const std::string& collective_option) {
  models::InputFile in(path, "from-nccl-tests", "nccl-tests output", kMaxNcclTestsFileBytes);
  const auto text = in.read_all();
  return parse_nccl_tests(text, path, collective_option);
}

std::vector<ProbeRow> nccl_hop_rows(const NcclTestsFile& f, const std::string& hardware, const std::string& pattern) {
  const auto ring = nccl_ring(f.collective, std::max(f.ranks, 2));
  std::vector<ProbeRow> out;
  for (const auto& r : f.rows) {
    if (r.size_bytes < kRingMessageBytes) continue;  // the collective's size, as the user swept it
    ProbeRow p;
    p.hardware = hardware;
    p.pattern = pattern;
    p.bytes = r.size_bytes * ring.factor / ring.steps;
    p.seconds = r.time_us * 1e-6 / ring.steps;
    p.line = r.line;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace ringsim::calibration
