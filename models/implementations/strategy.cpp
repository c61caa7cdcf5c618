#include "models/implementations/strategy.hpp"

#include <algorithm>

#include "models/io/checked.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "models/workload/transformer.hpp"

namespace ringsim::models {

namespace {

[[noreturn]] void unknown(std::string_view spec, const std::string& why = {}) {
  std::string list;
  for (const auto& k : Strategy::known()) list += (list.empty() ? "" : ", ") + k;
  throw InputError({}, 0, "cp",
                   (why.empty() ? "unknown context-parallel strategy '" + std::string(spec) + "'" : why) +
                       " (known: " + list + ")");
}

}  // namespace

std::vector<std::string> Strategy::known() {
  return {"ring", "allgather", "ulysses", "usp:UxR[:ring-inner]", "double-ring:W"};
}

const std::vector<std::string>& Strategy::families() {
  static const std::vector<std::string> f = {"ring", "allgather", "ulysses", "usp", "double-ring"};
  return f;
}

const std::string& Strategy::family_name() const noexcept {
  const auto& f = families();
  switch (kind) {
    case StrategyKind::Ring: return f[0];
    case StrategyKind::AllGather: return f[1];
    case StrategyKind::Ulysses: return f[2];
    case StrategyKind::Hybrid: return f[3];
    case StrategyKind::DoubleRing: return f[4];
  }
  return f[0];
}

bool Strategy::family_has_ring(std::string_view family) noexcept {
  return family == "ring" || family == "usp" || family == "double-ring";
}

Strategy Strategy::parse(std::string_view spec) {
  Strategy s;
  s.spec = std::string(spec);
  if (spec == "ring") return s;
  if (spec == "allgather" || spec == "all-gather") {
    s.kind = StrategyKind::AllGather;
    return s;
  }
  if (spec == "ulysses") {
    s.kind = StrategyKind::Ulysses;
    return s;
  }
  const auto parts = split(spec, ':');
  if (parts.size() >= 2 && parts.size() <= 3 && (parts[0] == "usp" || parts[0] == "hybrid")) {
    s.kind = StrategyKind::Hybrid;
    try {
      const auto [u, r] = parse_pair(parts[1], "cp");
      s.ulysses = u;
      s.ring = r;
    } catch (const InputError&) {
      unknown(spec, "'" + std::string(spec) + "': expected usp:UxR with positive Ulysses degree U and ring degree R");
    }
    if (parts.size() == 3) {
      if (parts[2] == "ring-inner")
        s.placement = GroupPlacement::RingInner;
      else if (parts[2] != "ulysses-inner")
        unknown(spec, "'" + std::string(spec) + "': the placement after usp:UxR is ulysses-inner (default) or ring-inner");
    }
    return s;
  }
  if (parts.size() == 2 && parts[0] == "double-ring") {
    s.kind = StrategyKind::DoubleRing;
    try {
      s.window = parse_positive_int(parts[1], "cp");
    } catch (const InputError&) {
      unknown(spec, "'" + std::string(spec) + "': expected double-ring:W with a positive window W");
    }
    return s;
  }
  unknown(spec);
}

std::int64_t Strategy::ulysses_degree(std::int64_t sp) const noexcept {
  switch (kind) {
    case StrategyKind::Ulysses: return sp;
    case StrategyKind::Hybrid: return ulysses;
    default: return 1;
  }
}

std::int64_t Strategy::ring_degree(std::int64_t sp) const noexcept {
  switch (kind) {
    case StrategyKind::Ring:
    case StrategyKind::DoubleRing: return sp;
    case StrategyKind::Hybrid: return ring;
    default: return 1;
  }
}

RankGroups Strategy::ulysses_groups(std::int64_t sp) const noexcept {
  const std::int64_t u = ulysses_degree(sp);
  if (kind == StrategyKind::Hybrid && placement == GroupPlacement::RingInner) return {u, ring};
  return {u, 1};
}

RankGroups Strategy::ring_groups(std::int64_t sp) const noexcept {
  const std::int64_t r = ring_degree(sp);
  if (kind == StrategyKind::Hybrid && placement == GroupPlacement::UlyssesInner) return {r, ulysses};
  return {r, 1};
}

void Strategy::check_shape(std::int64_t sp) const {
  auto fail = [&](const std::string& what) { throw InputError({}, 0, "cp", spec + ": " + what); };
  std::int64_t ranks = 0;
  const bool fits = mul_fits(ulysses, ring, ranks);
  if (kind == StrategyKind::Hybrid && (!fits || ranks != sp))
    fail("U x R = " + std::to_string(ulysses) + " x " + std::to_string(ring) + " = " +
         (fits ? std::to_string(ranks) : "more than 2^63") + " differs from the context-parallel size sp = " +
         std::to_string(sp));
  if (kind == StrategyKind::DoubleRing && sp % window != 0)
    fail("the window W = " + std::to_string(window) + " does not divide the ring size sp = " + std::to_string(sp));
}

void Strategy::check(const ModelConfig& m, std::int64_t mp, std::int64_t sp, bool kv_head_replication,
                     const std::string& impl) const {
  auto fail = [&](const std::string& what) { throw InputError({}, 0, "cp", spec + ": " + what); };
  check_shape(sp);
  if (!has_ulysses()) return;
  const std::int64_t u = ulysses_degree(sp);
  const std::int64_t q_per_tp = m.heads / mp;
  if (q_per_tp % u != 0)
    fail("Ulysses degree " + std::to_string(u) + " does not divide the " + std::to_string(q_per_tp) +
         " query heads per tensor-parallel rank of " + m.name + " (" + std::to_string(m.heads) + " heads / mp " +
         std::to_string(mp) + ")");
  const std::int64_t kv_per_tp = std::max<std::int64_t>(1, m.kv_heads / mp);
  if (kv_per_tp % u == 0) return;
  if (!kv_head_replication)
    fail("Ulysses degree " + std::to_string(u) + " does not divide the " + std::to_string(kv_per_tp) +
         " KV heads per tensor-parallel rank of " + m.name + ", and implementation " + impl +
         " does not replicate KV heads (an implementation with \"kv_head_replication\", such as verl-ulysses, repeats "
         "them up to the degree at U / KV heads times the K/V all-to-all traffic)");
  if (u % kv_per_tp != 0)
    fail("KV-head replication needs the Ulysses degree " + std::to_string(u) + " to be a multiple of the " +
         std::to_string(kv_per_tp) + " KV heads per tensor-parallel rank");
}

UlyssesHeads Strategy::ulysses_heads(const ModelConfig& m, std::int64_t mp, std::int64_t sp) const {
  const std::int64_t u = ulysses_degree(sp);
  const std::int64_t kv_per_tp = std::max<std::int64_t>(1, m.kv_heads / mp);
  UlyssesHeads h;
  h.q_heads = m.heads / mp / u;
  if (kv_per_tp % u == 0) {
    h.kv_heads = kv_per_tp / u;
  } else {
    h.kv_heads = 1;
    h.kv_replication = u / kv_per_tp;
  }
  return h;
}

std::vector<Strategy> parse_strategies(const std::vector<std::string>& texts) {
  std::vector<Strategy> out;
  out.reserve(texts.size());
  for (const auto& t : texts) out.push_back(Strategy::parse(t));
  return out;
}

}  // namespace ringsim::models
