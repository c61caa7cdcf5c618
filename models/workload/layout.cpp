#include "models/workload/layout.hpp"

#include <algorithm>
#include <charconv>

#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::models {
namespace {

void check_sizes(std::int64_t n_seq, std::int64_t n_dev) {
  if (n_dev <= 0) throw InputError({}, 0, "sp", "ring size must be a positive integer, got " + std::to_string(n_dev));
  if (n_seq <= 0) throw InputError({}, 0, "n_seq", "sequence length must be a positive integer, got " + std::to_string(n_seq));
  if (n_seq % n_dev != 0)
    throw InputError({}, 0, "n_seq",
                     "n_seq " + std::to_string(n_seq) + " is not divisible by the ring size sp = " + std::to_string(n_dev));
}

}  // namespace

Layout Layout::contiguous(std::int64_t n_seq, std::int64_t n_dev) {
  check_sizes(n_seq, n_dev);
  Layout l;
  l.kind_ = LayoutKind::Contiguous;
  l.name_ = "contiguous";
  l.n_seq_ = n_seq;
  l.n_dev_ = n_dev;
  l.block_ = n_seq / n_dev;
  l.width_ = l.block_;
  return l;
}

Layout Layout::striped(std::int64_t n_seq, std::int64_t n_dev) {
  Layout l = contiguous(n_seq, n_dev);
  l.kind_ = LayoutKind::Striped;
  l.name_ = "striped";
  l.width_ = 1;
  return l;
}

Layout Layout::zigzag(std::int64_t n_seq, std::int64_t n_dev) {
  check_sizes(n_seq, n_dev);
  if ((n_seq / n_dev) % 2 != 0)
    throw InputError({}, 0, "n_seq",
                     "zigzag needs an even block: n_seq / sp = " + std::to_string(n_seq / n_dev) + " is odd");
  Layout l = contiguous(n_seq, n_dev);
  l.kind_ = LayoutKind::Zigzag;
  l.name_ = "zigzag";
  l.width_ = l.block_ / 2;
  return l;
}

Layout Layout::block_cyclic(std::int64_t n_seq, std::int64_t n_dev, std::int64_t width) {
  check_sizes(n_seq, n_dev);
  if (width <= 0) throw InputError({}, 0, "layout", "cyclic stripe width must be positive, got " + std::to_string(width));
  const std::int64_t c = n_seq / n_dev;
  if (c % width != 0)
    throw InputError({}, 0, "layout",
                     "cyclic:" + std::to_string(width) + " needs the block n_seq / sp = " + std::to_string(c) +
                         " to be a multiple of the stripe width");
  Layout l = contiguous(n_seq, n_dev);
  l.kind_ = LayoutKind::BlockCyclic;
  l.name_ = "cyclic:" + std::to_string(width);
  l.width_ = width;
  return l;
}

Layout Layout::permutation(std::vector<std::int64_t> tokens, std::int64_t n_dev, std::string name) {
  const auto n_seq = static_cast<std::int64_t>(tokens.size());
  check_sizes(n_seq, n_dev);
  std::vector<std::int64_t> inverse(tokens.size(), -1);
  for (std::size_t s = 0; s < tokens.size(); ++s) {
    const std::int64_t t = tokens[s];
    if (t < 0 || t >= n_seq)
      throw InputError({}, static_cast<std::int64_t>(s) + 1, "layout",
                       "token " + std::to_string(t) + " is outside [0, " + std::to_string(n_seq) + ")");
    if (inverse[static_cast<std::size_t>(t)] >= 0)
      throw InputError({}, static_cast<std::int64_t>(s) + 1, "layout",
                       "token " + std::to_string(t) + " appears twice: a permutation must list each token once");
    inverse[static_cast<std::size_t>(t)] = static_cast<std::int64_t>(s);
  }
  Layout l = contiguous(n_seq, n_dev);
  l.kind_ = LayoutKind::Permutation;
  l.name_ = std::move(name);
  l.width_ = 1;
  l.slot_to_token_ = std::move(tokens);
  l.token_to_slot_ = std::move(inverse);
  const std::int64_t c = l.block_;
  l.monotone_devices_.assign(static_cast<std::size_t>(n_dev), 1);
  for (std::int64_t d = 0; d < n_dev; ++d)
    for (std::int64_t i = 1; i < c; ++i)
      if (l.slot_to_token_[static_cast<std::size_t>(d * c + i)] < l.slot_to_token_[static_cast<std::size_t>(d * c + i - 1)]) {
        l.monotone_devices_[static_cast<std::size_t>(d)] = 0;
        break;
      }
  l.instance_tag_ = std::make_shared<const char>('p');
  return l;
}

Layout Layout::make(const LayoutSpec& spec, std::int64_t n_seq, std::int64_t n_dev) {
  switch (spec.family()) {
    case LayoutFamily::Contiguous: return contiguous(n_seq, n_dev);
    case LayoutFamily::Striped: return striped(n_seq, n_dev);
    case LayoutFamily::Zigzag: return zigzag(n_seq, n_dev);
    case LayoutFamily::Cyclic: return block_cyclic(n_seq, n_dev, spec.width());
    case LayoutFamily::Permutation: {
      const std::string& file = spec.file();
      // One token per position: a longer file is refused before it is read to the end.
      const auto items = read_int_list(file, "token", "permutation file", n_seq);
      if (static_cast<std::int64_t>(items.size()) != n_seq)
        throw InputError(file, items.empty() ? 0 : items.back().line, "layout",
                         "permutation lists " + std::to_string(items.size()) + " tokens, expected n_seq = " +
                             std::to_string(n_seq));
      std::vector<std::int64_t> tokens;
      tokens.reserve(items.size());
      for (const auto& it : items) tokens.push_back(it.value);
      try {
        return permutation(std::move(tokens), n_dev, "perm:" + file);
      } catch (const InputError& e) {
        // permutation() numbers slots from 1; name the file line the slot's token stands on.
        const auto slot = static_cast<std::size_t>(e.line());
        throw InputError(file, slot >= 1 && slot <= items.size() ? items[slot - 1].line : 0, e.field(), e.message());
      }
    }
    default: break;
  }
  throw InputError({}, 0, "layout",
                   "layout " + spec.text() + " is built from the scenario's " +
                       (spec.from_mask() ? "sparse mask" : "packed documents") + ", not from n_seq alone");
}

Placement Layout::place(std::int64_t t) const noexcept {
  const std::int64_t c = block_;
  const std::int64_t n = n_dev_;
  switch (kind_) {
    case LayoutKind::Contiguous: return {t / c, t % c};
    case LayoutKind::Striped: return {t % n, t / n};
    case LayoutKind::Zigzag: {
      const std::int64_t h = c / 2;
      const std::int64_t chunk = t / h;
      if (chunk < n) return {chunk, t % h};
      return {2 * n - 1 - chunk, h + t % h};
    }
    case LayoutKind::BlockCyclic: {
      const std::int64_t w = width_;
      return {(t / w) % n, (t / (w * n)) * w + t % w};
    }
    case LayoutKind::Permutation: {
      const std::int64_t s = token_to_slot_[static_cast<std::size_t>(t)];
      return {s / c, s % c};
    }
  }
  return {};
}

std::int64_t Layout::token(std::int64_t d, std::int64_t l) const noexcept {
  const std::int64_t c = block_;
  const std::int64_t n = n_dev_;
  switch (kind_) {
    case LayoutKind::Contiguous: return d * c + l;
    case LayoutKind::Striped: return l * n + d;
    case LayoutKind::Zigzag: {
      const std::int64_t h = c / 2;
      return l < h ? d * h + l : (2 * n - 1 - d) * h + (l - h);
    }
    case LayoutKind::BlockCyclic: {
      const std::int64_t w = width_;
      return ((l / w) * n + d) * w + l % w;
    }
    case LayoutKind::Permutation: return slot_to_token_[static_cast<std::size_t>(d * c + l)];
  }
  return 0;
}

std::optional<Progression> Layout::affine(std::int64_t d) const noexcept {
  switch (kind_) {
    case LayoutKind::Contiguous: return Progression{d * block_, 1, block_};
    case LayoutKind::Striped: return Progression{d, n_dev_, block_};
    case LayoutKind::BlockCyclic:
      if (width_ == 1) return Progression{d, n_dev_, block_};
      return std::nullopt;
    default: return std::nullopt;
  }
}

void Layout::segments(std::int64_t d, std::int64_t lo, std::int64_t hi, std::vector<Progression>& out) const {
  if (hi <= lo) return;
  const std::int64_t c = block_;
  const std::int64_t n = n_dev_;
  switch (kind_) {
    case LayoutKind::Contiguous: out.push_back({d * c + lo, 1, hi - lo}); return;
    case LayoutKind::Striped: out.push_back({lo * n + d, n, hi - lo}); return;
    case LayoutKind::Zigzag: {
      const std::int64_t h = c / 2;
      if (lo < h) out.push_back({d * h + lo, 1, std::min(hi, h) - lo});
      if (hi > h) {
        const std::int64_t a = std::max(lo, h);
        out.push_back({(2 * n - 1 - d) * h + (a - h), 1, hi - a});
      }
      return;
    }
    case LayoutKind::BlockCyclic: {
      const std::int64_t w = width_;
      const std::int64_t period = w * n;
      // Partial first stripe, whole stripes, partial last stripe. Whole stripes are emitted
      // either as one progression per stripe (stride 1) or one per column (stride w * N),
      // whichever gives fewer progressions.
      std::int64_t a = lo;
      const std::int64_t first_full = (lo + w - 1) / w;
      const std::int64_t last_full = hi / w;  // stripes [first_full, last_full) are whole
      if (first_full >= last_full) {
        // No whole stripe: at most two partial pieces.
        while (a < hi) {
          const std::int64_t end = std::min(hi, (a / w + 1) * w);
          out.push_back({token(d, a), 1, end - a});
          a = end;
        }
        return;
      }
      if (lo % w != 0) out.push_back({token(d, lo), 1, first_full * w - lo});
      const std::int64_t stripes = last_full - first_full;
      if (stripes <= w) {
        for (std::int64_t s = first_full; s < last_full; ++s) out.push_back({(s * n + d) * w, 1, w});
      } else {
        for (std::int64_t col = 0; col < w; ++col) out.push_back({(first_full * n + d) * w + col, period, stripes});
      }
      if (hi % w != 0) out.push_back({(last_full * n + d) * w, 1, hi - last_full * w});
      return;
    }
    case LayoutKind::Permutation: {
      // Merge runs of consecutive tokens; an arbitrary permutation may give one per token.
      std::int64_t l = lo;
      while (l < hi) {
        const std::int64_t start = token(d, l);
        std::int64_t len = 1;
        while (l + len < hi && token(d, l + len) == start + len) ++len;
        out.push_back({start, 1, len});
        l += len;
      }
      return;
    }
  }
}

std::vector<std::int64_t> Layout::positions(std::int64_t d) const {
  std::vector<std::int64_t> p(static_cast<std::size_t>(block_));
  for (std::int64_t l = 0; l < block_; ++l) p[static_cast<std::size_t>(l)] = token(d, l);
  return p;
}

std::int64_t Layout::max_segments(std::int64_t len) const noexcept {
  switch (kind_) {
    case LayoutKind::Contiguous:
    case LayoutKind::Striped: return 1;
    case LayoutKind::Zigzag: return 2;
    // Two partial stripes, and whole stripes as stripes or as columns, whichever is fewer.
    case LayoutKind::BlockCyclic: return std::min(len / width_ + 1, width_) + 2;
    case LayoutKind::Permutation: return std::max<std::int64_t>(len, 1);
  }
  return len;
}

std::int64_t Layout::max_span(std::int64_t len) const noexcept {
  switch (kind_) {
    case LayoutKind::Contiguous: return len;
    case LayoutKind::Striped: return (len - 1) * n_dev_ + 1;
    case LayoutKind::BlockCyclic: return (len / width_ + 1) * width_ * n_dev_;
    // A zigzag range may hold both chunks of a device; a permutation anything.
    case LayoutKind::Zigzag:
    case LayoutKind::Permutation: return n_seq_;
  }
  return n_seq_;
}

std::optional<std::int64_t> Layout::device_shift() const noexcept {
  switch (kind_) {
    case LayoutKind::Contiguous: return block_;
    case LayoutKind::Striped: return 1;
    case LayoutKind::BlockCyclic: return width_;
    default: return std::nullopt;
  }
}

}  // namespace ringsim::models
