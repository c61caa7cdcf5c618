#include "models/workload/sparse_io.hpp"

#include <ostream>
#include <vector>

#include "models/io/error.hpp"
#include "models/io/input_file.hpp"
#include "models/io/limits.hpp"
#include "models/io/parse.hpp"
#include "models/workload/sparse_gen.hpp"

namespace ringsim::models {
namespace {

using Index = std::size_t;
Index idx(std::int64_t i) noexcept { return static_cast<Index>(i); }

constexpr std::string_view kKeptHeader = "head,kind,position";
constexpr std::string_view kBucketHeader = "head,position,q_bucket,k_bucket";

void check_args(std::int64_t n_seq, std::int64_t heads) {
  if (n_seq <= 0) throw InputError({}, 0, "mask", "sequence length must be positive, got " + std::to_string(n_seq));
  if (heads <= 0) throw InputError({}, 0, "mask", "the number of heads must be positive, got " + std::to_string(heads));
}

// Calls row(fields, line) for every data row of a CSV with the given header (optional in the
// file); blank lines and '#' comments are skipped, and InputErrors from `row` get the location.
template <class F>
std::int64_t read_csv(const std::string& path, std::string_view header, F&& row) {
  InputFile in(path, "path", "mask file", kMaxDataFileBytes);
  const auto columns = split(header, ',');
  std::string line;
  std::int64_t line_no = 0;
  bool first = true;
  while (in.next_line(line)) {
    line_no = in.line_number();
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    if (trim(line).empty()) continue;
    const auto fields = split(line, ',');
    const bool is_header = first && fields == columns;
    first = false;
    if (is_header) continue;
    if (fields.size() != columns.size())
      throw InputError(path, line_no, "row",
                       "expected " + std::to_string(columns.size()) + " comma-separated fields (" +
                           std::string(header) + "), got " + std::to_string(fields.size()));
    try {
      row(fields, line_no);
    } catch (const InputError& e) {
      throw e.located(path, line_no);
    }
  }
  return line_no;
}

std::int64_t parse_in_range(const std::string& text, std::string_view field, std::int64_t end,
                            std::string_view what) {
  const std::int64_t v = parse_int(text, field);
  if (v < 0 || v >= end)
    throw InputError({}, 0, std::string(field),
                     std::string(what) + " " + std::to_string(v) + " is outside [0, " + std::to_string(end) + ")");
  return v;
}

// Errors from a file named in a spec keep their file and line, and name the column in the text.
InputError as_mask_error(const InputError& e) {
  const std::string& f = e.field();
  if (f == "mask") return e;
  const bool column = f == "head" || f == "kind" || f == "position" || f == "q_bucket" || f == "k_bucket";
  return {e.file(), e.line(), "mask", column ? "column '" + f + "': " + e.message() : e.message()};
}

}  // namespace

KeptPositions load_kept_csv(const std::string& path, std::int64_t n_seq, std::int64_t heads) {
  check_args(n_seq, heads);
  KeptPositions kept;
  kept.q.resize(idx(heads));
  kept.k.resize(idx(heads));
  std::vector<bool> seen(idx(heads), false);
  read_csv(path, kKeptHeader, [&](const std::vector<std::string>& f, std::int64_t) {
    const std::int64_t h = parse_in_range(f[0], "head", heads, "head");
    if (f[1] != "q" && f[1] != "k") throw InputError({}, 0, "kind", "expected q or k, got '" + f[1] + "'");
    const std::int64_t p = parse_in_range(f[2], "position", n_seq, "position");
    auto& list = f[1] == "q" ? kept.q[idx(h)] : kept.k[idx(h)];
    if (!list.empty() && p <= list.back())
      throw InputError({}, 0, "position",
                       "kept " + f[1] + " positions of head " + std::to_string(h) +
                           " must be strictly increasing (" + std::to_string(list.back()) + " then " +
                           std::to_string(p) + ")");
    list.push_back(p);
    seen[idx(h)] = true;
  });
  for (std::int64_t h = 0; h < heads; ++h)
    if (!seen[idx(h)])
      throw InputError(path, 0, "head",
                       "head " + std::to_string(h) + " has no rows, but the mask needs " + std::to_string(heads) +
                           " heads (every head in [0, heads) must appear)");
  return kept;
}

BucketIds load_buckets_csv(const std::string& path, std::int64_t n_seq, std::int64_t heads) {
  check_args(n_seq, heads);
  if (heads > (std::int64_t{1} << 40) / n_seq)
    throw InputError({}, 0, "mask", "heads x n_seq is too large for a bucket file");
  BucketIds b;
  b.q.assign(idx(heads), std::vector<std::int64_t>(idx(n_seq), -1));
  b.k.assign(idx(heads), std::vector<std::int64_t>(idx(n_seq), -1));
  read_csv(path, kBucketHeader, [&](const std::vector<std::string>& f, std::int64_t) {
    const std::int64_t h = parse_in_range(f[0], "head", heads, "head");
    const std::int64_t p = parse_in_range(f[1], "position", n_seq, "position");
    const std::int64_t qb = parse_int(f[2], "q_bucket");
    const std::int64_t kb = parse_int(f[3], "k_bucket");
    if (qb < 0) throw InputError({}, 0, "q_bucket", "bucket ids must be >= 0, got " + std::to_string(qb));
    if (kb < 0) throw InputError({}, 0, "k_bucket", "bucket ids must be >= 0, got " + std::to_string(kb));
    if (b.q[idx(h)][idx(p)] >= 0)
      throw InputError({}, 0, "position",
                       "head " + std::to_string(h) + " position " + std::to_string(p) + " appears twice");
    b.q[idx(h)][idx(p)] = qb;
    b.k[idx(h)][idx(p)] = kb;
  });
  for (std::int64_t h = 0; h < heads; ++h) {
    const auto& q = b.q[idx(h)];
    std::int64_t missing = 0;
    std::int64_t first_missing = -1;
    for (std::int64_t p = 0; p < n_seq; ++p) {
      if (q[idx(p)] >= 0) continue;
      if (missing++ == 0) first_missing = p;
    }
    if (missing > 0)
      throw InputError(path, 0, "position",
                       "head " + std::to_string(h) + " has no row for position " + std::to_string(first_missing) +
                           " (" + std::to_string(missing) + " positions missing; every position of every head in [0, " +
                           std::to_string(heads) + ") needs one)");
  }
  return b;
}

void write_kept_csv(std::ostream& out, const KeptPositions& kept) {
  out << kKeptHeader << '\n';
  for (std::size_t h = 0; h < kept.q.size(); ++h) {
    for (const auto p : kept.q[h]) out << h << ",q," << p << '\n';
    if (h < kept.k.size())
      for (const auto p : kept.k[h]) out << h << ",k," << p << '\n';
  }
}

void write_buckets_csv(std::ostream& out, const BucketIds& buckets) {
  out << kBucketHeader << '\n';
  for (std::size_t h = 0; h < buckets.q.size() && h < buckets.k.size(); ++h)
    for (std::size_t p = 0; p < buckets.q[h].size() && p < buckets.k[h].size(); ++p)
      out << h << ',' << p << ',' << buckets.q[h][p] << ',' << buckets.k[h][p] << '\n';
}

std::unique_ptr<Mask> make_sparse_mask(const MaskSpec& spec, std::int64_t n_seq, std::int64_t heads, std::uint64_t seed) {
  const std::string& name = spec.text();
  try {
    check_args(n_seq, heads);
    switch (spec.family()) {
      case MaskFamily::QKDrop:
        return std::make_unique<QKDropMask>(random_kept(n_seq, heads, spec.drop_rate(), seed), n_seq, name);
      case MaskFamily::Hash: {
        const std::int64_t nb = spec.buckets();
        if (spec.zipf() > 0.0) {
          // The skewed draw keeps a table of every bucket's weight.
          const auto what = "a Zipf table of " + std::to_string(nb) + " buckets";
          check_memory(8.0 * static_cast<double>(nb), "mask", what);
          check_count_steps(static_cast<double>(nb), "mask", what);
        }
        return std::make_unique<HashMask>(random_buckets(n_seq, heads, nb, spec.zipf(), seed), n_seq, name);
      }
      case MaskFamily::Lsh: {
        const std::int64_t nb = spec.buckets(), dim = spec.dim();
        // Every query and key of every head is a random dim-vector projected on nb / 2 directions.
        const double d = static_cast<double>(dim), half = static_cast<double>(nb / 2);
        check_memory(8.0 * d * half + 8.0 * (d + half), "mask",
                     "LSH with " + std::to_string(nb) + " buckets of dimension " + std::to_string(dim));
        check_count_steps(2.0 * static_cast<double>(heads) * static_cast<double>(n_seq) * d * (half + 1), "mask",
                          "LSH of " + std::to_string(n_seq) + " tokens x " + std::to_string(heads) + " heads in " +
                              std::to_string(dim) + " dimensions");
        return std::make_unique<HashMask>(random_lsh_buckets(n_seq, heads, nb, dim, seed), n_seq, name);
      }
      case MaskFamily::QKFile: return std::make_unique<QKDropMask>(load_kept_csv(spec.file(), n_seq, heads), n_seq, name);
      case MaskFamily::HashFile: return std::make_unique<HashMask>(load_buckets_csv(spec.file(), n_seq, heads), n_seq, name);
      default: break;
    }
  } catch (const InputError& e) {
    throw as_mask_error(e);
  }
  throw InputError({}, 0, "mask", "mask " + name + " is not index-based (make_mask)");
}

}  // namespace ringsim::models
