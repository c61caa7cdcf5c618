// What the planner does differently for a prefill or a decode (models/inference/phase.hpp): the
// request's checks, the grid's axes, and why a smaller device count does not answer.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/implementations/strategy.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "planning/plan.hpp"

namespace ringsim::planning {

using models::InputError;
using models::RunPhase;

const char* latency_name(RunPhase phase) noexcept {
  switch (phase) {
    case RunPhase::Prefill: return "TTFT";
    case RunPhase::Decode: return "TPOT";
    case RunPhase::Train: return "step";
  }
  return "step";
}

void check_inference_request(const PlanRequest& r) {
  if (r.cached_tokens < 0) throw InputError({}, 0, "cached-tokens", "expected a non-negative number of cached tokens");
  if (r.target_latency_s < 0) throw InputError({}, 0, "ttft", "expected a positive latency target");
  if (r.phase == RunPhase::Train) {
    if (r.cached_tokens > 0) throw InputError({}, 0, "cached-tokens", "--cached-tokens is for --phase prefill or decode");
    if (r.target_latency_s > 0) throw InputError({}, 0, "ttft", "--ttft and --tpot are for --phase prefill and decode");
    if (r.formats.weights != models::WeightFormat::Bf16)
      throw InputError({}, 0, "weights", "--weights is for --phase prefill or decode (training: --precision)");
    if (r.formats.cache != models::CacheFormat::Bf16)
      throw InputError({}, 0, "kv-cache", "--kv-cache is for --phase prefill or decode");
    return;
  }
  const char* phase = models::to_string(r.phase);
  if (r.phase == RunPhase::Decode && r.cached_tokens <= 0)
    throw InputError({}, 0, "cached-tokens", "--phase decode needs --cached-tokens: the tokens in each sequence's cache");
  if (r.phase == RunPhase::Decode && r.goal == Goal::MaxContext)
    throw InputError({}, 0, "goal", "decode's context is --cached-tokens: max-context plans training and prefill");
  if (r.target_latency_s > 0 && r.goal != Goal::MinDevices)
    throw InputError({}, 0, "goal", "a latency target (--ttft, --tpot) is the min-devices goal");
  // What inference does not have: named, not ignored.
  const auto refuse = [&](bool given, const char* field, const char* what) {
    if (given) throw InputError({}, 0, field, fmt::format("--phase {} has no {}", phase, what));
  };
  refuse(!r.layouts.empty(), "layout", "layout to search (the inference code's sharding is its own)");
  refuse(!r.zero.empty(), "zero", "ZeRO stages (no optimizer state)");
  refuse(!r.recompute.empty(), "recompute", "recomputation (no backward)");
  refuse(!r.tiles.empty(), "tile", "tiles to search (each call is timed at the library's own kernel tiles)");
  refuse(r.global_batch > 0, "global-batch", "global batch (a training step's micro-batches)");
  refuse(!r.pps.empty(), "pp", "pipeline stages to search (a training step's)");
  for (const auto& s : r.strategies)
    if (s.kind != models::StrategyKind::Ring)
      throw InputError({}, 0, "cp", fmt::format("--phase {} is modelled on a ring (pass-KV and pass-Q): --cp ring", phase));
}

void apply_inference_axes(const PlanRequest& r, SweepGrid& g) {
  if (r.phase == RunPhase::Train) return;
  g.phase = {r.phase};
  g.cached_tokens = {r.cached_tokens};
  g.formats = r.formats;
  g.cp = {models::Strategy::parse("ring")};
  g.layout = {r.phase == RunPhase::Prefill ? models::LayoutSpec::parse("zigzag") : models::LayoutSpec{}};
  g.tile = {std::nullopt};
  g.zero = {models::Sharding::None};
  g.recompute = {std::nullopt};
  // Replicas serve other requests: they add throughput, never lower the latency a target asks.
  g.dp = {1};
  if (r.phase == RunPhase::Decode) g.n_seq = {r.cached_tokens};
}

bool read_inference_field(PlanRequest& r, const std::string& k, const nlohmann::json& v, const std::string& file) {
  if (k == "phase") {
    if (!v.is_string()) throw InputError(file, 0, k, "expected a string, got " + v.dump());
    try {
      r.phase = models::parse_phase(v.get<std::string>());
    } catch (const InputError& e) {
      throw InputError(file, 0, k, e.message());
    }
  } else if (k == "cached_tokens") {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > (std::int64_t{1} << 40))
      throw InputError(file, 0, k, "expected a number of cached tokens from 0 to 2^40, got " + v.dump());
    r.cached_tokens = v.get<std::int64_t>();
  } else if (r.formats.read_field(k, v, file)) {
  } else if (k == "ttft" || k == "tpot") {
    // A duration with its unit ("5s", "50ms"), or seconds as a number.
    double seconds = 0;
    if (v.is_string()) {
      try {
        seconds = models::parse_duration_s(v.get<std::string>(), k);
      } catch (const InputError& e) {
        throw InputError(file, 0, k, e.message());
      }
    } else if (v.is_number() && v.get<double>() >= models::kMinDurationS && v.get<double>() <= models::kMaxDurationS) {
      seconds = v.get<double>();
    } else {
      throw InputError(file, 0, k,
                       "expected a duration such as \"5s\" or \"50ms\", or seconds from 1e-6 (1 us) to 86400 (a day), got " +
                           v.dump());
    }
    if (r.target_latency_s > 0) throw InputError(file, 0, k, "give one latency target: ttft for prefill, tpot for decode");
    r.target_latency_s = seconds;
  } else {
    return false;
  }
  return true;
}

bool closer(const SweepResult& a, const SweepResult& b, const PlanRequest& r) {
  if (a.memory.fits != b.memory.fits) return a.memory.fits;
  if (!a.memory.fits) return a.memory.total_bytes < b.memory.total_bytes;
  // A latency target: the shorter step; a throughput target: the more tokens/s (a training
  // step's tokens grow with dp, so its step time alone does not say).
  if (r.target_latency_s > 0) {
    if (a.step_s != b.step_s) return a.step_s < b.step_s;
  } else if (a.tokens_per_s != b.tokens_per_s) {
    return a.tokens_per_s > b.tokens_per_s;
  }
  return a.point.index < b.point.index;
}

namespace {
// "7.25 s", "21.6 ms": three digits in the unit a latency target is written in.
std::string seconds_text(double s) { return s < 1 ? fmt::format("{:.3g} ms", s * 1e3) : fmt::format("{:.3g} s", s); }
}  // namespace

std::string shortfall(const SweepResult& row, const PlanRequest& r) {
  constexpr double gib = 1024.0 * 1024 * 1024;
  const auto& m = row.memory;
  if (!m.fits)
    return fmt::format("does not fit: {:.1f} GiB with {:.1f} GiB headroom on {:.1f} GiB ({:.1f} GiB over)",
                       m.total_bytes / gib, m.headroom_bytes / gib, m.capacity_bytes / gib,
                       (m.total_bytes + m.headroom_bytes - m.capacity_bytes) / gib);
  if (r.target_latency_s > 0) {
    const double over = row.step_s - r.target_latency_s;
    return fmt::format("too slow: {} {}, {} ({:.0f}%) over the {} target", latency_name(r.phase), seconds_text(row.step_s),
                       seconds_text(over), 100 * over / r.target_latency_s, seconds_text(r.target_latency_s));
  }
  return fmt::format("too slow: {:.4g} tokens/s, {:.0f}% below the {:.4g} tokens/s target", row.tokens_per_s,
                     100 * (1 - row.tokens_per_s / r.target_tokens_per_s), r.target_tokens_per_s);
}

}  // namespace ringsim::planning
