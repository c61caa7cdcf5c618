#include "models/workload/documents.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>

#include "models/io/checked.hpp"
#include "models/io/error.hpp"
#include "models/io/input_file.hpp"
#include "models/io/parse.hpp"

namespace ringsim::models {

namespace {



// Lengths of a file: integers separated by commas, whitespace or newlines; '#' starts a
// comment; the first content line may be a header (is_lengths_header). Read through InputFile
// (a regular file of bounded size and line length).
Documents read_lengths(const std::string& path, std::int64_t n_seq) {
  InputFile in(path, "docs", "document lengths file", kMaxDataFileBytes);
  Documents d;
  d.spec = path;
  std::string line;
  std::int64_t sum = 0;
  bool content_seen = false;
  while (in.next_line(line)) {
    const std::int64_t line_no = in.line_number();
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    // Whitespace separates like a comma, but a comma with nothing before or after it is an
    // empty field ("4096," or "1,,2"): a truncated line, not a list.
    std::vector<std::string> words;
    bool empty_field = false;
    for (auto& field : split(line, ',')) {
      std::istringstream ls(field);
      std::size_t here = 0;
      for (std::string w; ls >> w; ++here) words.push_back(w);
      if (here == 0) empty_field = true;
    }
    if (words.empty()) continue;
    const bool header = !content_seen && is_lengths_header(words);
    content_seen = true;
    if (header) continue;
    if (empty_field)
      throw InputError(path, line_no, "docs", "document length: an empty field between commas (a truncated line?)");
    for (const auto& w : words) {
      std::int64_t v = 0;
      try {
        v = parse_positive_int(w, "docs");
      } catch (const InputError& e) {
        throw InputError(path, line_no, "docs", "document length: " + e.message());
      }
      if (v > n_seq - sum)
        throw InputError(path, line_no, "docs",
                         "document lengths exceed n_seq = " + std::to_string(n_seq) + " (sum so far " +
                             std::to_string(sum) + ", then " + std::to_string(v) + ")");
      if (static_cast<std::int64_t>(d.lengths.size()) >= kMaxDocuments)
        throw InputError(path, line_no, "docs", "more than " + std::to_string(kMaxDocuments) + " documents");
      sum += v;
      d.lengths.push_back(v);
    }
  }
  if (d.lengths.empty()) throw InputError(path, 0, "docs", "no document lengths in the file");
  if (sum != n_seq)
    throw InputError(path, in.line_number(), "docs",
                     "document lengths sum to " + std::to_string(sum) + ", expected n_seq = " + std::to_string(n_seq));
  return d;
}

// 64-bit uniform in (0, 1) from the standardised mt19937_64 (its output sequence is fixed by
// the standard; distributions are not), so a seed gives the same documents everywhere.
double uniform01(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

}  // namespace

bool is_lengths_header(const std::vector<std::string>& fields) {
  const auto lower = [](std::string w) {
    for (auto& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return w;
  };
  if (fields.empty() || fields.size() > 2) return false;
  const auto first = lower(fields[0]);
  if (first != "length" && first != "lengths" && first != "tokens") return false;
  if (fields.size() == 1) return true;
  const auto second = lower(fields[1]);
  return second == "count" || second == "documents";
}

std::int64_t Documents::total() const noexcept {
  return std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0});
}

std::vector<std::int64_t> Documents::starts() const {
  std::vector<std::int64_t> s;
  s.reserve(lengths.size());
  std::int64_t at = 0;
  for (const auto l : lengths) {
    s.push_back(at);
    at += l;
  }
  return s;
}

std::int64_t Documents::causal_pairs() const noexcept {
  std::int64_t p = 0;
  for (const auto l : lengths) p += l * (l + 1) / 2;
  return p;
}

LognormalDraws::LognormalDraws(double mean, double sigma, std::uint64_t seed)
    : mu_(0), sigma_(sigma), rng_(seed) {
  if (!(mean >= 1 && mean <= kMaxLognormalMean))
    throw InputError({}, 0, "docs", "lognormal MEAN must be in [1, 2^40] tokens, got " + short_number(mean, 4));
  if (!(sigma >= 0) || sigma > 10) throw InputError({}, 0, "docs", "lognormal SIGMA must be in [0, 10]");
  mu_ = std::log(mean) - sigma * sigma / 2;  // E[exp(N(mu, sigma^2))] = mean
}

double LognormalDraws::next() {
  // Box-Muller on the fixed uniform stream.
  const double z = std::sqrt(-2 * std::log(uniform01(rng_))) * std::cos(6.283185307179586 * uniform01(rng_));
  return std::exp(mu_ + sigma_ * z);
}

Documents Documents::lognormal(double mean, double sigma, std::uint64_t seed, std::int64_t quantum,
                               std::int64_t n_seq) {
  LognormalDraws draws(mean, sigma, seed);
  if (quantum < 1) throw InputError({}, 0, "docs", "lognormal Q must be a positive integer");
  if (n_seq % quantum != 0)
    throw InputError({}, 0, "docs",
                     "n_seq = " + std::to_string(n_seq) + " is not a multiple of the length quantum Q = " +
                         std::to_string(quantum));
  // Lengths are at least Q and about MEAN on average: a batch expected to hold more documents
  // than the limit is refused before any is drawn (the loop below also stops at the limit).
  if (static_cast<double>(n_seq) / std::max(mean, static_cast<double>(quantum)) > static_cast<double>(kMaxDocuments))
    throw InputError({}, 0, "docs",
                     "lognormal:" + short_number(mean, 4) + ":...:" + std::to_string(quantum) + " makes about " +
                         short_number(static_cast<double>(n_seq) / std::max(mean, static_cast<double>(quantum)), 3) +
                         " documents of " + std::to_string(n_seq) + " tokens, more than " +
                         std::to_string(kMaxDocuments) + "; use a larger MEAN or Q, or fewer tokens");
  Documents d;
  std::int64_t left = n_seq;
  while (left > 0) {
    if (static_cast<std::int64_t>(d.lengths.size()) >= kMaxDocuments)
      throw InputError({}, 0, "docs",
                       "lognormal:" + short_number(mean, 4) + ":" + short_number(sigma, 4) + " makes more than " +
                           std::to_string(kMaxDocuments) + " documents of " + std::to_string(n_seq) +
                           " tokens; use a larger MEAN or Q, or fewer tokens");
    const double x = draws.next();
    const double units = std::ceil(std::min(x, static_cast<double>(n_seq)) / static_cast<double>(quantum));
    const std::int64_t len = std::min(left, std::max<std::int64_t>(1, static_cast<std::int64_t>(units)) * quantum);
    d.lengths.push_back(len);
    left -= len;
  }
  return d;
}

Documents Documents::make(const DocumentsSpec& spec, std::int64_t n_seq) {
  if (n_seq <= 0) throw InputError({}, 0, "n_seq", "sequence length must be a positive integer");
  switch (spec.source()) {
    case DocumentsSource::Lognormal: {
      Documents d = lognormal(spec.mean(), spec.sigma(), spec.seed(), spec.quantum(), n_seq);
      d.spec = spec.text();
      return d;
    }
    case DocumentsSource::File: return read_lengths(spec.file(), n_seq);
    case DocumentsSource::Given: break;
  }
  throw InputError({}, 0, "docs", "documents '" + spec.text() + "' are built by the caller and were not given");
}

std::vector<std::vector<std::int64_t>> ptrr_groups(const std::vector<std::int64_t>& time, std::int64_t n_groups) {
  const auto n = static_cast<std::int64_t>(time.size());
  // torch.sort(descending=True, stable=True), then snake dealing by rows of n_groups.
  std::vector<std::int64_t> sorted(time.size());
  std::iota(sorted.begin(), sorted.end(), std::int64_t{0});
  std::stable_sort(sorted.begin(), sorted.end(), [&](std::int64_t x, std::int64_t y) {
    return time[static_cast<std::size_t>(x)] > time[static_cast<std::size_t>(y)];
  });
  std::vector<std::vector<std::int64_t>> group(static_cast<std::size_t>(n_groups));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t row = i / n_groups, col = i % n_groups;
    const std::int64_t g = row % 2 == 0 ? col : n_groups - 1 - col;
    group[static_cast<std::size_t>(g)].push_back(sorted[static_cast<std::size_t>(i)]);
  }
  for (auto& g : group) std::sort(g.begin(), g.end());
  return group;
}

Layout document_layout(const LayoutSpec& spec, const Documents& docs, std::int64_t n_dev) {
  const std::int64_t n_seq = docs.total();
  if (n_dev <= 0 || n_seq % n_dev != 0)
    throw InputError({}, 0, "layout",
                     "n_seq = " + std::to_string(n_seq) + " is not divisible by the ring size " + std::to_string(n_dev));
  const auto& family = spec.family_name();
  std::vector<std::int64_t> order;
  order.reserve(static_cast<std::size_t>(n_seq));
  if (spec.family() == LayoutFamily::DocZigzag || spec.family() == LayoutFamily::DocZigzagDocMajor) {
    const std::int64_t parts = 2 * n_dev;
    const auto starts = docs.starts();
    for (std::size_t i = 0; i < docs.lengths.size(); ++i)
      if (docs.lengths[i] % parts != 0)
        throw InputError({}, 0, "layout",
                         family + " cuts every document into 2 x " + std::to_string(n_dev) + " = " +
                             std::to_string(parts) + " chunks (TE and torch pad documents to that): document " +
                             std::to_string(i) + " has length " + std::to_string(docs.lengths[i]) +
                             "; make lengths multiples of it (lognormal:...:Q with Q = " + std::to_string(parts) +
                             ")");
    auto chunk = [&](std::size_t doc, std::int64_t k) {
      const std::int64_t w = docs.lengths[doc] / parts;
      for (std::int64_t t = 0; t < w; ++t) order.push_back(starts[doc] + k * w + t);
    };
    if (spec.family() == LayoutFamily::DocZigzag) {
      for (std::int64_t r = 0; r < n_dev; ++r)
        for (std::size_t doc = 0; doc < docs.lengths.size(); ++doc) {
          chunk(doc, r);
          chunk(doc, parts - 1 - r);
        }
    } else {
      for (std::size_t doc = 0; doc < docs.lengths.size(); ++doc)
        for (std::int64_t r = 0; r < n_dev; ++r) {
          chunk(doc, r);
          chunk(doc, parts - 1 - r);
        }
    }
    return Layout::permutation(std::move(order), n_dev, spec.text());
  }
  if (spec.family() == LayoutFamily::Ptrr) {
    const std::int64_t b = spec.block();
    std::int64_t dealt = 0;  // b x n_dev, which must divide n_seq
    if (!mul_fits(b, n_dev, dealt) || dealt > n_seq || n_seq % dealt != 0)
      throw InputError({}, 0, "layout",
                       "ptrr deals blocks of " + std::to_string(b) + " tokens to " + std::to_string(n_dev) +
                           " ranks: n_seq = " + std::to_string(n_seq) + " must be a multiple of " +
                           std::to_string(b) + " x " + std::to_string(n_dev));
    const std::int64_t blocks = n_seq / b;
    // Processing time of query block q: the key blocks it visits under the per-document causal
    // mask, [block of its first token's document start, q] (the union of its rows' ranges is
    // that interval: every earlier key of the first document is allowed for the first row,
    // every key of the block for its own row).
    const auto starts = docs.starts();
    std::vector<std::int64_t> time(static_cast<std::size_t>(blocks));
    for (std::int64_t q = 0; q < blocks; ++q) {
      const auto it = std::upper_bound(starts.begin(), starts.end(), q * b);
      time[static_cast<std::size_t>(q)] = q - *(it - 1) / b + 1;
    }
    for (const auto& g : ptrr_groups(time, n_dev)) {
      for (const auto blk : g)
        for (std::int64_t t = 0; t < b; ++t) order.push_back(blk * b + t);
    }
    return Layout::permutation(std::move(order), n_dev, spec.text());
  }
  throw InputError({}, 0, "layout", "layout '" + spec.text() + "' is not built from documents");
}

}  // namespace ringsim::models
