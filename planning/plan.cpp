#include "planning/plan.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "models/implementations/strategy.hpp"
#include "planning/prefilter.hpp"

namespace ringsim::planning {

using models::InputError;

namespace {

// Powers of two up to n, and n's divisors.
std::vector<std::int64_t> counts_up_to(std::int64_t n) {
  std::set<std::int64_t> s;
  for (std::int64_t p = 1; p <= n; p *= 2) s.insert(p);
  for (std::int64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) s.insert(d), s.insert(n / d);
  return {s.begin(), s.end()};
}

}  // namespace

SweepGrid plan_grid(const PlanRequest& r, const models::Catalog& catalog) {
  check_request(r);
  const auto hw = r.hardware.ends_with(".json") ? models::Hardware::load_file(r.hardware) : catalog.hardware(r.hardware);
  const auto model = r.model.ends_with(".json") ? models::ModelConfig::load_file(r.model) : catalog.model(r.model);
  SweepGrid g;
  g.hardware = {r.hardware};
  g.model = {r.model};
  g.engine = r.engine;
  g.batch = {r.batch};
  g.mask = {r.mask};
  if (!r.impls.empty()) {
    // A named implementation that does not run the plan's phase (a serving stack for a training
    // plan) is refused with its reason, not searched to "no configuration answers".
    for (const auto& name : r.impls)
      if (!name.empty()) catalog.implementation(name).check_phase(r.phase);  // "": the catalog's choice per point
    g.impl = r.impls;
  } else {
    // By default only production libraries (what a user can deploy; include_research adds the
    // research and reference kernels) with a profile for this hardware (fitted, or derived from
    // a fit): one on spec defaults assumes generic efficiencies and would win on optimism, not
    // on merit. --impl names any. When none has a profile, all that run on the hardware compete
    // on spec defaults alike.
    // Where no production library runs (TPUs: only the papers' JAX code and the reference kernels
    // are modelled), the others compete, each row labelled with its maturity.
    g.impl.clear();
    std::vector<std::string> runs, production;
    for (const auto& name : catalog.implementation_names()) {
      const auto im = catalog.implementation(name);
      // What runs the plan's phase: a serving stack competes for prefill and decode, not training.
      if (!im.runs_on(hw.kind) || !im.runs_phase(r.phase)) continue;
      runs.push_back(name);
      if (im.maturity == models::Maturity::Production) production.push_back(name);
    }
    if (runs.empty()) throw InputError({}, 0, "impl", "no implementation runs on " + hw.name);
    if (!r.include_research && !production.empty()) runs = production;
    for (const auto& name : runs)
      if (catalog.has_profile(hw, name)) g.impl.push_back(name);
    if (g.impl.empty()) g.impl = runs;
  }
  g.layout = r.layouts.empty() ? models::parse_layouts({"contiguous", "striped", "zigzag"}) : r.layouts;
  g.tile = r.tiles.empty() ? std::vector<std::optional<models::TileShape>>{std::nullopt, models::TileShape{128, 128},
                                                                           models::TileShape{512, 512},
                                                                           models::TileShape{2048, 4096}}
                           : r.tiles;
  g.memory = r.memory;
  g.topology = r.topologies.empty() ? std::vector<std::string>{""} : r.topologies;
  g.zero = r.zero.empty() ? std::vector<models::Sharding>{models::Sharding::None, models::Sharding::Zero1,
                                                          models::Sharding::Zero2, models::Sharding::Zero3}
                          : r.zero;
  g.recompute = r.recompute.empty()
                    ? std::vector<std::optional<models::Recompute>>{models::Recompute::None, models::Recompute::Selective,
                                                                    models::Recompute::Full}
                    : r.recompute;
  // Tensor parallelism stays inside a node and splits the heads evenly.
  const auto counts = counts_up_to(r.devices);
  g.mesh.clear();
  for (std::int64_t mp = 1; mp <= std::min(r.devices, hw.devices_per_node); mp *= 2) {
    if (model.heads % mp != 0) continue;
    if (!r.mps.empty() && std::find(r.mps.begin(), r.mps.end(), mp) == r.mps.end()) continue;
    for (const auto sp : counts)
      if (mp * sp <= r.devices) g.mesh.push_back({mp, sp});
  }
  if (g.mesh.empty())
    throw InputError({}, 0, "mp",
                     fmt::format("no tensor-parallel degree to search: mp must be a power of two up to {} (the node, "
                                 "the budget) that divides the model's {} heads",
                                 std::min(r.devices, hw.devices_per_node), model.heads));
  // Replicas: the fewest devices may be any count (7 replicas of a 16-GPU mesh: 112), so
  // min-devices tries every replica count within the budget; the other goals use all the budget
  // they can, which the powers of two and the budget's divisors reach. Points over the budget are
  // dropped before evaluation (planning/prefilter.hpp).
  if (r.goal == Goal::MinDevices) {
    g.dp.clear();
    for (std::int64_t dp = 1; dp <= r.devices; ++dp) g.dp.push_back(dp);
  } else {
    g.dp = counts;
  }
  // Pipeline stages: searched with a global batch (micro-batches to fill the pipeline), each a
  // power of two within the budget that splits the layers evenly (Megatron's requirement).
  g.global_batch = r.global_batch;
  if (!r.pps.empty()) {
    g.pp = r.pps;
  } else if (r.global_batch > 0) {
    g.pp.clear();
    for (const auto pp : counts)
      if (model.attention_only ? pp == 1 : model.layers % pp == 0) g.pp.push_back(pp);
  }
  if (!r.pp_schedules.empty()) g.pp_schedule = r.pp_schedules;
  std::set<std::int64_t> sps;
  for (const auto& m : g.mesh) sps.insert(m.sp);
  g.cp = r.strategies.empty() ? strategy_splits(sps) : r.strategies;
  if (r.goal == Goal::MaxContext) {
    g.n_seq.clear();
    for (std::int64_t n = r.n_seq; n <= r.max_context; n *= 2) g.n_seq.push_back(n);
  } else {
    g.n_seq = {r.n_seq};
  }
  apply_inference_axes(r, g);
  (void)g.size();
  return g;
}

bool feasible(const SweepResult& row, const PlanRequest& r) {
  if (!row.ok || !row.memory.fits || row.devices() > r.devices) return false;
  if (r.goal == Goal::MinDevices && r.target_latency_s > 0) return row.step_s <= r.target_latency_s;
  if (r.goal == Goal::MinDevices && row.tokens_per_s < r.target_tokens_per_s) return false;
  return true;
}

bool better(const SweepResult& a, const SweepResult& b, Goal goal) {
  const auto tie = [&] {
    if (a.memory.total_bytes != b.memory.total_bytes) return a.memory.total_bytes < b.memory.total_bytes;
    return a.point.index < b.point.index;
  };
  switch (goal) {
    case Goal::MinDevices:
      if (a.devices() != b.devices()) return a.devices() < b.devices();
      if (a.tokens_per_s != b.tokens_per_s) return a.tokens_per_s > b.tokens_per_s;
      return tie();
    case Goal::MaxThroughput:
      if (a.tokens_per_s != b.tokens_per_s) return a.tokens_per_s > b.tokens_per_s;
      if (a.devices() != b.devices()) return a.devices() < b.devices();
      return tie();
    case Goal::MaxContext:
      if (a.point.spec.n_seq != b.point.spec.n_seq) return a.point.spec.n_seq > b.point.spec.n_seq;
      if (a.tokens_per_s != b.tokens_per_s) return a.tokens_per_s > b.tokens_per_s;
      return tie();
  }
  return tie();
}

bool own_tile_once(const PlanRequest& r) noexcept { return r.tiles.empty(); }

std::string plan_identity(const SweepResult& row) {
  const auto& p = row.point;
  return fmt::format("{}|{}|{}|{}|{}x{}x{}|{}|{}|{}|{}|{}x{}|{}|{}|{}", row.hardware, row.model, row.impl, p.spec.cp.text(),
                     p.dp, p.spec.mp, p.spec.sp, p.spec.n_seq, p.spec.batch, p.spec.layout.text(), p.spec.mask.text(), row.tile_q,
                     row.tile_k, row.topology, models::to_string(p.zero), models::to_string(row.recompute));
}

std::string tie_key(const SweepResult& row) {
  const auto& p = row.point;
  // Neither the tile nor the layout is in the key: a library with a fixed kernel (flash-attn's
  // own tiles) predicts the same step for every tile asked, which then changes only the
  // workspace (memory); without a ring (Ulysses, all-gather of balanced work) the layout only
  // renames tokens. Rows that differ in them and predict the same step are one choice.
  return fmt::format("{}|{}|{}|{}x{}x{}|{}|{}|{}|{}|{:a}|{:a}", row.hardware, row.model, p.spec.cp.text(), p.dp, p.spec.mp,
                     p.spec.sp, p.spec.n_seq, p.spec.batch, p.spec.mask.text(), row.topology, row.step_s, row.tokens_per_s);
}

namespace {

// Feasible rows, ranked, one per plan identity.
void rank_unique(std::vector<SweepResult>& rows, const PlanRequest& r) {
  std::erase_if(rows, [&](const SweepResult& x) { return !feasible(x, r); });
  // Rank, then keep the first of rows that are the same plan: they have the same figures, so the
  // ranking put the earliest in the sweep first.
  std::sort(rows.begin(), rows.end(), [&](const SweepResult& a, const SweepResult& b) { return better(a, b, r.goal); });
  std::unordered_set<std::string> seen;
  std::erase_if(rows, [&](const SweepResult& x) { return !seen.insert(plan_identity(x)).second; });
}

// Ranked rows grouped into at most `top` plans with their ties (later rows join the groups).
std::vector<PlanChoice> group(std::vector<SweepResult>&& rows, std::int64_t top) {
  std::vector<PlanChoice> out;
  std::unordered_map<std::string, std::size_t> index;
  for (auto& x : rows) {
    const auto key = tie_key(x);
    const auto it = index.find(key);
    if (it != index.end()) {
      out[it->second].ties.push_back(std::move(x));
    } else if (static_cast<std::int64_t>(out.size()) < top) {
      index.emplace(key, out.size());
      out.push_back({std::move(x), {}, std::nullopt});
    }
  }
  return out;
}

// a's goal figures (the goal's and the second one) are strictly worse than b's.
bool strictly_worse(const SweepResult& a, const SweepResult& b, Goal goal) {
  switch (goal) {
    case Goal::MinDevices:
      return a.devices() != b.devices() ? a.devices() > b.devices() : a.tokens_per_s < b.tokens_per_s;
    case Goal::MaxThroughput:
      return a.tokens_per_s != b.tokens_per_s ? a.tokens_per_s < b.tokens_per_s : a.devices() > b.devices();
    case Goal::MaxContext:
      return a.point.spec.n_seq != b.point.spec.n_seq ? a.point.spec.n_seq < b.point.spec.n_seq
                                                      : a.tokens_per_s < b.tokens_per_s;
  }
  return false;
}

}  // namespace

std::vector<PlanChoice> best_plans(std::vector<SweepResult> rows, const PlanRequest& r) {
  rank_unique(rows, r);
  return group(std::move(rows), r.top);
}

PlanSearch search_plans(const SweepGrid& grid, const models::Catalog& catalog, const PlanRequest& r,
                        const SweepOptions& options, std::size_t compact_at, const RunnablePoints* runnable) {
  PlanSearch out;
  std::vector<SweepResult> kept;
  std::size_t limit =
      std::max(compact_at > 0 ? compact_at : static_cast<std::size_t>(std::max<std::int64_t>(4 * r.top, 4096)),
               static_cast<std::size_t>(r.top) + 1);
  // Compacting drops the rows strictly worse in the goal's figures than the top-th plan: every
  // row that ties with a dropped row has its figures, so its plan ranks below `top` plans
  // already kept, and plans only get better.
  const auto compact = [&] {
    rank_unique(kept, r);
    std::unordered_set<std::string> keys;
    const SweepResult* cutoff = nullptr;
    for (const auto& x : kept)
      if (keys.insert(tie_key(x)).second && static_cast<std::int64_t>(keys.size()) == r.top) {
        cutoff = &x;
        break;
      }
    if (cutoff) {
      const SweepResult bound = *cutoff;
      std::erase_if(kept, [&](const SweepResult& x) { return strictly_worse(x, bound, r.goal); });
    }
    if (kept.size() * 2 > limit) limit *= 2;  // rows equal in the figures to the top plans stay
  };
  // The search ranks on step times alone; intervals (2 predictions per fitted parameter) are
  // computed after, for the rows listed.
  SweepGrid search = grid;
  search.intervals = false;
  // Which points are runnable does not depend on intervals.
  RunnablePoints counted;
  if (!runnable) counted = runnable_points(search, catalog, r.devices, own_tile_once(r));
  const RunnablePoints& ranges = runnable ? *runnable : counted;
  out.excluded = ranges.excluded;
  out.same_step = ranges.same_step;
  std::map<std::string, SweepResult> family_best, impl_best;
  std::map<std::int64_t, SweepResult> closest;  // min-devices: per device count
  // Refusal reasons by count (bounded: notes that carry numbers differ point by point).
  std::map<std::string, std::pair<std::int64_t, std::string>> refusals;
  for_each_result(
      search, catalog, options,
      [&](SweepResult&& x) {
        ++out.searched;
        out.evaluated += x.ok;
        if (!x.ok && !x.note.empty()) {
          if (auto it = refusals.find(x.note); it != refusals.end()) ++it->second.first;
          else if (refusals.size() < 256) refusals.emplace(x.note, std::pair<std::int64_t, std::string>{1, x.note_field});
        }
        out.fit_memory += x.ok && x.memory.fits;
        if (r.goal == Goal::MinDevices && x.ok && x.devices() <= r.devices)
          if (const auto it = closest.find(x.devices()); it == closest.end() || closer(x, it->second, r))
            closest.insert_or_assign(x.devices(), x);
        if (!feasible(x, r)) return;
        ++out.feasible;
        const auto family = x.strategy_family();
        if (const auto it = family_best.find(family); it == family_best.end() || better(x, it->second, r.goal))
          family_best.insert_or_assign(family, x);
        if (const auto it = impl_best.find(x.impl); it == impl_best.end() || better(x, it->second, r.goal))
          impl_best.insert_or_assign(x.impl, x);
        kept.push_back(std::move(x));
        if (kept.size() >= limit) compact();
      },
      &ranges.ranges);
  for (const auto& [note, seen] : refusals)
    if (seen.first > out.refusal_count) {
      out.refusal = note;
      out.refusal_field = seen.second;
      out.refusal_count = seen.first;
    }
  out.plans = best_plans(std::move(kept), r);
  for (auto& [devices, x] : closest)
    if (out.plans.empty() || devices < out.plans.front().plan.devices()) out.smaller.push_back(std::move(x));
  const auto best_first = [&](std::map<std::string, SweepResult>& by, std::vector<SweepResult>& into) {
    for (auto& [_, x] : by) into.push_back(std::move(x));
    std::sort(into.begin(), into.end(), [&](const SweepResult& a, const SweepResult& b) { return better(a, b, r.goal); });
  };
  best_first(family_best, out.best_per_strategy);
  best_first(impl_best, out.best_per_implementation);
  if (grid.intervals) {
    Evaluator ev(catalog, grid);
    for (auto& choice : out.plans) {
      choice.plan.step_interval = ev.evaluate(choice.plan.point).step_interval;
      for (auto& t : choice.ties) t.step_interval = ev.evaluate(t.point).step_interval;
    }
    for (auto& x : out.best_per_strategy) x.step_interval = ev.evaluate(x.point).step_interval;
    for (auto& x : out.best_per_implementation) x.step_interval = ev.evaluate(x.point).step_interval;
    fold_plans(out.plans, r, ev);
  }
  return out;
}

std::string ties_text(const PlanChoice& c) {
  std::vector<std::string> impls, layouts, tiles, zeros, recomputes;
  const auto add = [](std::vector<std::string>& v, const std::string& x, const std::string& own) {
    if (x != own && std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  };
  const auto stage = [](models::Sharding z) { return std::to_string(static_cast<int>(z)); };
  for (const auto& t : c.ties) {
    add(impls, t.impl, c.plan.impl);
    add(layouts, t.point.spec.layout.text(), c.plan.point.spec.layout.text());
    add(tiles, fmt::format("{}x{}", t.tile_q, t.tile_k), fmt::format("{}x{}", c.plan.tile_q, c.plan.tile_k));
    add(zeros, stage(t.point.zero), stage(c.plan.point.zero));
    add(recomputes, std::string(models::to_string(t.recompute)), std::string(models::to_string(c.plan.recompute)));
  }
  std::string s;
  const auto part = [&](const char* name, const std::vector<std::string>& v) {
    if (v.empty()) return;
    s += (s.empty() ? "" : "; ") + std::string(name);
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : " ") + v[i];
  };
  part("impl", impls);
  part("layout", layouts);
  part("tile", tiles);
  part("ZeRO stage", zeros);
  part("recompute", recomputes);
  return s;
}

std::vector<models::Strategy> strategy_splits(const std::set<std::int64_t>& sps) {
  std::vector<std::string> out = {"ring", "allgather", "ulysses"};
  for (const auto sp : sps)
    for (std::int64_t u = 2; u < sp; ++u)
      if (sp % u == 0) out.push_back(fmt::format("usp:{}x{}", u, sp / u));
  for (const auto sp : sps)
    for (std::int64_t w = 2; w < sp; ++w)
      if (sp % w == 0) out.push_back(fmt::format("double-ring:{}", w));
  std::vector<models::Strategy> unique;
  for (const auto& s : out) {
    auto st = models::Strategy::parse(s);
    if (std::find(unique.begin(), unique.end(), st) == unique.end()) unique.push_back(std::move(st));
  }
  return unique;
}

std::string deployability_legend(const std::vector<PlanChoice>& plans) {
  static const std::pair<const char*, const char*> meaning[] = {
      {"research", "a research kernel published with a paper (its ring may be ringsim's extension)"},
      {"reference", "ringsim's own what-if kernels, which no one runs"},
      {"derived", "no measurement of this library on this GPU: parameters copied from a fitted GPU"},
      {"spec defaults", "nothing measured: the GPU's specs at generic efficiencies"}};
  std::string out;
  for (const auto& m : meaning) {
    const std::string word = m.first;  // named, not bound: lambdas cannot capture structured bindings in clang's C++20
    const bool used = std::any_of(plans.begin(), plans.end(), [&](const PlanChoice& c) {
      return c.plan.deployability().find(word) != std::string::npos;
    });
    if (used) out += std::string(out.empty() ? "\n" : "; ") + word + ": " + m.second;
  }
  return out.empty() ? out : out + "\n";
}

std::string explain(const SweepResult& row) {
  if (row.inference) {
    constexpr double gib = 1024.0 * 1024 * 1024;
    const auto& m = row.memory;
    return fmt::format("{}; memory {:.1f} of {:.1f} GiB (KV cache {:.1f} GiB), {}", row.inference->why, m.total_bytes / gib,
                       m.capacity_bytes / gib, row.inference->kv_cache_bytes / gib, models::fit_phrase(m));
  }
  const auto& q = row.prediction;
  // The step's parts (every micro-batch, the busiest pipeline rank, the exposed synchronisation):
  // the cause they name, then each part's share (those of at least 0.5 %).
  const auto& b = row.parts;
  const double step = b.total();
  std::string s = models::why(q, b) + "; parts:";
  for (std::size_t i = 0; i < models::kStepParts; ++i)
    if (step > 0 && b.s[i] >= 0.005 * step)
      s += fmt::format(" {} {:.0f}%,", models::part_info(models::step_part(i)).label, 100 * b.s[i] / step);
  s.pop_back();
  if (row.point.pipeline.pipelined())
    s += fmt::format(" ({} micro-batches over {} stages)", row.point.pipeline.micro_batches, row.point.pipeline.stages);
  s += fmt::format("; imbalance {:.2f}{}", q.imbalance,
                   q.imbalance > 1.1 ? " (the busiest device sets each round)" : "");
  const auto& m = row.memory;
  constexpr double gib = 1024.0 * 1024 * 1024;
  s += fmt::format("; memory {:.1f} of {:.1f} GiB, {} (largest term {})", m.total_bytes / gib, m.capacity_bytes / gib,
                   models::fit_phrase(m), m.largest_term().name);
  return s;
}

}  // namespace ringsim::planning
