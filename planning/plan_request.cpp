#include "planning/plan.hpp"

// The plan request: its goal's names, its checks, and a plan file's fields (ringsim plan --file).
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::planning {

using models::InputError;

namespace {
constexpr std::int64_t kMaxPlanTokens = std::int64_t{1} << 40;
constexpr std::int64_t kMaxPlans = std::int64_t{1} << 20;  // kept in memory while searching
}  // namespace

const char* to_string(Goal g) noexcept {
  switch (g) {
    case Goal::MinDevices: return "min-devices";
    case Goal::MaxThroughput: return "max-throughput";
    case Goal::MaxContext: return "max-context";
  }
  return "max-throughput";
}

Goal parse_goal(const std::string& t) {
  if (t == "min-devices") return Goal::MinDevices;
  if (t == "max-throughput") return Goal::MaxThroughput;
  if (t == "max-context") return Goal::MaxContext;
  throw InputError({}, 0, "goal", "expected min-devices, max-throughput or max-context, got '" + t + "'");
}

void check_request(const PlanRequest& r) {
  if (r.devices <= 0) throw InputError({}, 0, "devices", "expected a positive device count");
  if (r.devices > (1 << 20)) throw InputError({}, 0, "devices", "more than 2^20 devices");
  if (r.n_seq <= 0) throw InputError({}, 0, "seq", "expected a positive sequence length");
  if (r.batch <= 0) throw InputError({}, 0, "batch", "expected a positive batch");
  if (r.top <= 0) throw InputError({}, 0, "top", "expected a positive count of plans");
  if (r.top > kMaxPlans) throw InputError({}, 0, "top", fmt::format("at most {} plans, got {}", kMaxPlans, r.top));
  for (const auto pp : r.pps)
    if (pp <= 0 || pp > (1 << 16)) throw InputError({}, 0, "pp", fmt::format("expected pipeline stages from 1 to 65536, got {}", pp));
  check_inference_request(r);
  if (r.goal == Goal::MinDevices && !(r.target_tokens_per_s > 0) && !(r.target_latency_s > 0))
    throw InputError({}, 0, "target-tokens-per-s",
                     "min-devices needs a positive target throughput (or, for --phase prefill or decode, --ttft or --tpot)");
  if (r.goal == Goal::MaxContext && r.max_context < r.n_seq)
    throw InputError({}, 0, "max-context", "the longest context tried is below --seq");
  // Contexts are doubled from n_seq up to max_context: both stay far from 2^63.
  if (r.n_seq > kMaxPlanTokens) throw InputError({}, 0, "seq", fmt::format("more than 2^40 tokens ({})", r.n_seq));
  if (r.goal == Goal::MaxContext && r.max_context > kMaxPlanTokens)
    throw InputError({}, 0, "max-context", fmt::format("more than 2^40 tokens ({})", r.max_context));
}

PlanRequest plan_request_from_json(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object()) throw InputError(file, 0, "plan", "expected a JSON object");
  PlanRequest r;
  nlohmann::json axes = nlohmann::json::object();
  const auto str = [&](const std::string& k, const nlohmann::json& v) {
    if (!v.is_string()) throw InputError(file, 0, k, "expected a string, got " + v.dump());
    return v.get<std::string>();
  };
  const auto count = [&](const std::string& k, const nlohmann::json& v) {
    if (!v.is_number_integer() || v.get<std::int64_t>() <= 0)
      throw InputError(file, 0, k, "expected a positive integer, got " + v.dump());
    return v.get<std::int64_t>();
  };
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const auto& v = it.value();
    if (k == "hardware") r.hardware = str(k, v);
    else if (k == "model") r.model = str(k, v);
    else if (k == "mask") {
      try {
        r.mask = models::MaskSpec::parse(str(k, v));
      } catch (const InputError& e) {
        throw e.located(file, 0);
      }
    }
    else if (k == "goal") {
      try {
        r.goal = parse_goal(str(k, v));
      } catch (const InputError& e) {
        throw InputError(file, 0, k, e.message());
      }
    } else if (k == "n_seq") r.n_seq = count(k, v);
    else if (k == "max_context") r.max_context = count(k, v);
    else if (k == "devices") r.devices = count(k, v);
    else if (k == "batch") r.batch = count(k, v);
    else if (k == "mp") {
      if (!v.is_array() || v.empty()) throw InputError(file, 0, k, "expected a non-empty list of tensor-parallel degrees");
      for (const auto& x : v) r.mps.push_back(count(k, x));
    }
    else if (k == "global_batch") r.global_batch = count(k, v);
    else if (k == "pp") {
      if (!v.is_array() || v.empty()) throw InputError(file, 0, k, "expected a non-empty list of pipeline stage counts");
      for (const auto& x : v) r.pps.push_back(count(k, x));
    }
    else if (k == "top") r.top = count(k, v);
    else if (k == "per_implementation") {
      if (!v.is_boolean()) throw InputError(file, 0, k, "expected true or false, got " + v.dump());
      r.per_implementation = v.get<bool>();
    }
    else if (k == "fold") {
      if (!v.is_boolean()) throw InputError(file, 0, k, "expected true or false, got " + v.dump());
      r.fold = v.get<bool>();
    }
    else if (k == "include_research") {
      if (!v.is_boolean()) throw InputError(file, 0, k, "expected true or false, got " + v.dump());
      r.include_research = v.get<bool>();
    }
    else if (read_inference_field(r, k, v, file)) {
    } else if (k == "target_tokens_per_s") {
      if (!v.is_number() || !(v.get<double>() > 0)) throw InputError(file, 0, k, "expected a positive number, got " + v.dump());
      r.target_tokens_per_s = v.get<double>();
    } else if (k == "impl" || k == "cp" || k == "layout" || k == "tile" || k == "topology" || k == "zero" ||
               k == "recompute" || k == "engine" || k == "pp_schedule") {
      axes[k] = v;
    } else if (r.memory.read_field(k, v, file)) {
    } else {
      throw InputError(file, 0, k,
                       "unknown field (expected hardware, model, goal, n_seq, max_context, target_tokens_per_s, devices, "
                       "phase, cached_tokens, ttft, tpot, weights, kv_cache, "
                       "batch, global_batch, mp, pp, pp_schedule, mask, top, engine, include_research, per_implementation, fold, impl, cp, layout, tile, topology, zero, recompute, "
                       "precision, sequence_parallel, offload_optimizer, headroom_gib)");
    }
  }
  // The search axes read as a sweep file's, with the same messages.
  const auto g = SweepGrid::from_json(axes, file);
  if (axes.contains("impl")) r.impls = g.impl;
  if (axes.contains("cp")) r.strategies = g.cp;
  if (axes.contains("layout")) r.layouts = g.layout;
  if (axes.contains("tile")) r.tiles = g.tile;
  if (axes.contains("topology")) r.topologies = g.topology;
  if (axes.contains("zero")) r.zero = g.zero;
  if (axes.contains("recompute")) r.recompute = g.recompute;
  if (axes.contains("pp_schedule")) r.pp_schedules = g.pp_schedule;
  r.engine = g.engine;
  // A latency target is the min-devices goal; it must name the phase it is the latency of.
  if (r.target_latency_s > 0) {
    const std::string latency_field = j.contains("ttft") ? "ttft" : "tpot";
    if (!j.contains("goal")) r.goal = Goal::MinDevices;
    const auto wanted = latency_field == "ttft" ? models::RunPhase::Prefill : models::RunPhase::Decode;
    if (r.phase != wanted)
      throw InputError(file, 0, latency_field,
                       latency_field == "ttft" ? "ttft (time to first token) is a prefill target: phase prefill"
                                               : "tpot (time per output token) is a decode target: phase decode");
  }
  try {
    check_request(r);
  } catch (const InputError& e) {
    // Flags say --target-tokens-per-s, files target_tokens_per_s.
    std::string field = e.field() == "seq" ? "n_seq" : e.field();
    std::replace(field.begin(), field.end(), '-', '_');
    throw InputError(file, 0, field, e.message());
  }
  return r;
}

}  // namespace ringsim::planning
