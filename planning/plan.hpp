#pragma once
// The planner: from hardware, model, a target context and a goal, the sweep of every mesh,
// strategy, layout, tile, implementation, topology, ZeRO stage and recomputation policy that
// could serve it (plan_grid: the "equivalent sweep"), evaluated by the sweep's evaluator, and
// its feasible rows ranked by the goal. The planner is the sweep plus a ranking, so its answer
// is by construction the best rows of that sweep (a CLI test checks it from the outside).
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "planning/evaluate.hpp"
#include "planning/grid.hpp"
#include "planning/prefilter.hpp"
#include "planning/sweep.hpp"
#include "models/catalog/resolve.hpp"

namespace ringsim::planning {

enum class Goal {
  MinDevices,     // the fewest devices that reach target_tokens_per_s (or, inference, target_latency_s) at n_seq
  MaxThroughput,  // the most tokens/s at n_seq on at most `devices`
  MaxContext,     // the longest context (n_seq .. max_context, doubling) on at most `devices`
};
[[nodiscard]] const char* to_string(Goal g) noexcept;
// "min-devices", "max-throughput", "max-context"; InputError (field "goal") otherwise.
[[nodiscard]] Goal parse_goal(const std::string& text);

struct PlanRequest {
  std::string hardware = "h100-sxm";
  std::string model = "llama3-8b";
  Goal goal = Goal::MaxThroughput;
  std::int64_t n_seq = 131072;          // target context; max-context: the shortest tried
  std::int64_t max_context = 1 << 24;   // max-context: the longest tried
  double target_tokens_per_s = 0;       // min-devices
  std::int64_t devices = 8;             // the budget; min-devices: the most considered
  std::int64_t batch = 1;
  models::MaskSpec mask;
  // Search axes; empty: every implementation that runs on the hardware, every strategy ringsim
  // knows, contiguous/striped/zigzag, the profile's tile and 128x128, 512x512, 2048x4096, the
  // hardware's default topology, ZeRO 0-3, and no, selective and full recomputation.
  std::vector<std::string> impls, topologies;
  // Tensor-parallel degrees to search; empty: powers of two up to the node size that split the
  // heads.
  std::vector<std::int64_t> mps;
  // Sequences per step over all replicas (0: one micro-batch of `batch` per replica and step).
  // With a global batch the plan also searches pipeline stages (`pps`; empty: powers of two up to
  // the budget that split the layers), each replica running global_batch / (dp x batch)
  // micro-batches through Megatron's 1F1B (docs/pipeline.md); without one it plans pp 1, where a
  // pipeline would be all bubble.
  std::int64_t global_batch = 0;
  std::vector<std::int64_t> pps;
  // Pipeline schedules to search ("1f1b", "interleaved:V"; empty: 1F1B alone). An interleaved
  // schedule runs only where the stages split the layers into V chunks each and the micro-batches
  // fill them (models::PipelineSchedule's checks: other points are refused as incompatible).
  std::vector<std::string> pp_schedules;
  std::vector<models::Strategy> strategies;
  std::vector<models::LayoutSpec> layouts;
  std::vector<std::optional<models::TileShape>> tiles;
  std::vector<models::Sharding> zero;
  std::vector<std::optional<models::Recompute>> recompute;
  Engine engine = Engine::Analytic;
  std::int64_t top = 10;
  // With no impls named, research kernels and ringsim's reference kernels compete too (by
  // default only production libraries do: what a user can deploy).
  bool include_research = false;
  // The table also lists the best plan of each implementation (JSON always carries it).
  bool per_implementation = false;
  // Fold the listed plans the model cannot tell apart (fold_plans); false: the goal's ranking alone.
  bool fold = true;
  models::MemorySettings memory;
  // The phase planned (models/inference/phase.hpp), the tokens already in the KV cache (prefill:
  // attended by the n_seq new ones; decode: each cache's context), and the latency target
  // (prefill: TTFT, decode: TPOT; seconds, 0: none). A latency target is the min-devices goal:
  // the fewest devices whose latency is at most it.
  models::RunPhase phase = models::RunPhase::Train;
  std::int64_t cached_tokens = 0;
  models::InferenceFormats formats;  // prefill and decode: weights and K/V cache (flags --weights, --kv-cache)
  double target_latency_s = 0;
};

// InputError naming the field for impossible requests (no budget, no target, ...).
void check_request(const PlanRequest& r);
// The inference part of check_request (planning/plan_inference.cpp): targets that go with the
// phase (ttft with prefill, tpot with decode), a cache for decode, no training-only axes.
void check_inference_request(const PlanRequest& r);
// An inference plan's axes: rings only (pass-KV and pass-Q are both predicted per point), the
// phase's own sharding, no data parallelism, ZeRO or recomputation; decode's context as n_seq.
void apply_inference_axes(const PlanRequest& r, SweepGrid& g);
// A plan file's phase, cached_tokens, ttft or tpot into `r`; false for another field.
// InputError naming `file` and the field for a wrong value.
bool read_inference_field(PlanRequest& r, const std::string& key, const nlohmann::json& value, const std::string& file);
// "TTFT" or "TPOT": the latency a phase's plan is judged by ("step" for training).
[[nodiscard]] const char* latency_name(models::RunPhase phase) noexcept;
// A plan file (JSON): hardware, model, goal, n_seq, max_context, target_tokens_per_s, devices,
// batch, mask, engine, top, include_research, phase, cached_tokens, ttft and tpot (durations
// such as "5s" or "50ms", or seconds as a number), and the search axes impl, cp, layout, tile, topology, zero,
// recompute as in a sweep file. Unknown fields and wrong types name the file and the field.
[[nodiscard]] PlanRequest plan_request_from_json(const nlohmann::json& j, const std::string& file);

// Meshes (mp x sp, mp a power of two up to the node size and the model's heads; sp and dp
// powers of two and divisors of the budget) and every other axis of the request.
[[nodiscard]] SweepGrid plan_grid(const PlanRequest& r, const models::Catalog& catalog);
// Whether the search times a library whose kernel picks its own tiles at that tile only
// (runnable_points' own_tile_once): where no tiles were asked, so the grid's tiles are plan's own.
[[nodiscard]] bool own_tile_once(const PlanRequest& r) noexcept;

// A row that answers the request: evaluated, fits in memory, within the device budget, and for
// min-devices at or above the target throughput.
[[nodiscard]] bool feasible(const SweepResult& row, const PlanRequest& r);
// Best first: the goal's figure, then its second figure (devices or tokens/s), then less
// memory, then the sweep's order.
[[nodiscard]] bool better(const SweepResult& a, const SweepResult& b, Goal goal);
// A plan and the rows that tie with it: the same configuration but for the implementation and
// the memory options (ZeRO stage, recomputation), with the same step time and throughput (two
// implementations of one kernel family, ZeRO stages that all fit). The plan is the best of them
// (least memory, then the first in the sweep); a top-N counts plans, not ties.
// Listed plans the model cannot tell apart (fold_plans): consecutive plans of one goal figure
// (device count for min-devices, length for max-context) whose throughput lies within the 90 %
// interval of its ratio to the fastest of them, which then rank by memory spare.
struct PlanFold {
  std::int64_t first_rank = 0, last_rank = 0;  // the folded plans' ranks, 1-based, after the fold
  double ratio = 1;                            // this plan's tokens/s over the fastest folded one's
  double lo = 1, hi = 1;                       // the 90 % interval of that ratio (1, 1 for the fastest)
  // true: both run on one fit, the shared uncertainty cancelled (models::paired_step_log_sd);
  // false: different fits, their step intervals combined as independent errors.
  bool paired = true;
  bool fastest = false;  // the fold's fastest (ratio 1)
};
struct PlanChoice {
  SweepResult plan;
  std::vector<SweepResult> ties;  // best first
  std::optional<PlanFold> fold;   // set for every plan of a fold of two or more
};
// The top `r.top` feasible plans, best first, each with its ties; of rows that resolve to the
// same plan (a default tile that equals an explicit one), the first in the sweep's order.
[[nodiscard]] std::vector<PlanChoice> best_plans(std::vector<SweepResult> rows, const PlanRequest& r);
// The planner's search: the equivalent sweep's runnable points (planning/prefilter.hpp: the
// (strategy, mesh, implementation) combinations that cannot run are skipped without being
// evaluated) evaluated on every core, its feasible rows kept as they come (a bounded set: rows
// strictly worse in the goal's figures than the top-th plan are dropped at each compaction,
// which can lose no plan nor tie), then best_plans of them. Equal to best_plans(evaluate_all(grid))
// (tests/planning).
struct PlanSearch {
  std::vector<PlanChoice> plans;  // best first
  // The best feasible row of each strategy family (ring, allgather, ulysses, usp, double-ring),
  // best first: how the strategies compare at a glance, whatever the top plans are.
  std::vector<SweepResult> best_per_strategy;
  // The same per implementation (the library a row runs), best first.
  std::vector<SweepResult> best_per_implementation;
  std::int64_t searched = 0, evaluated = 0, fit_memory = 0, feasible = 0;
  // Points of the grid skipped without evaluation: those that cannot run or exceed the budget, and
  // (same_step) a FlashAttention library's tiles other than its own, which predict the kept own
  // tile's step or are refused (runnable_points' own_tile_once). searched + excluded + same_step
  // is the grid's size.
  std::int64_t excluded = 0;
  std::int64_t same_step = 0;
  // Min-devices (training, prefill or decode): for each device count below the first plan's (every count without a plan), the
  // row that came closest (fits in memory and fastest; else the least memory): why that many
  // devices are not enough (shortfall).
  std::vector<SweepResult> smaller;
  // Why the evaluated configurations that could not run were refused: the most frequent reason
  // (the evaluator's note, naming its field) and how many it refused; empty when none was.
  std::string refusal, refusal_field;
  std::int64_t refusal_count = 0;
};
// compact_at: kept rows that trigger a compaction (0: max(4 top, 4096)). runnable: the grid's
// runnable_points(grid, catalog, r.devices, own_tile_once(r)) where the caller has counted them
// already (plan's --max-points check), so both read one count; null: counted here.
[[nodiscard]] PlanSearch search_plans(const SweepGrid& grid, const models::Catalog& catalog, const PlanRequest& r,
                                      const SweepOptions& options, std::size_t compact_at = 0,
                                      const RunnablePoints* runnable = nullptr);
// Folds the listed plans (best first) that the model cannot tell apart, each fold reordered by
// memory spare (most first; equal spare keeps the order): from the best, each next plan of the same
// goal figure (devices for min-devices, length for max-context) joins while its tokens/s over the
// fold's fastest has a 90 % interval that contains 1. The interval is paired where both run on one
// fitted profile (Evaluator::paired_step_log_sd), else the two step intervals as independent
// errors; a plan without either ends the fold. Training plans only.
void fold_plans(std::vector<PlanChoice>& plans, const PlanRequest& r, Evaluator& ev);
// The fold's note for a plan: which ranks fold and where this one sits among them; empty unfolded.
[[nodiscard]] std::string fold_text(const PlanChoice& c);
// What ties share: every resolved axis but the implementation, the layout, the tile, the ZeRO
// stage and the recomputation, and the step time and throughput.
[[nodiscard]] std::string tie_key(const SweepResult& row);
// The ties' implementations, layouts, tiles, ZeRO stages and recomputation policies that differ
// from the plan's ("impl scfa; layout striped; tile 512x512; ZeRO stage 2"); empty without ties.
[[nodiscard]] std::string ties_text(const PlanChoice& choice);
// The same identity best_plans deduplicates on: every resolved axis of the row.
[[nodiscard]] std::string plan_identity(const SweepResult& row);

// ring, allgather, ulysses, then every usp:UxR and every double-ring:W split (1 < U, W < sp) of
// each of the group sizes, each once.
[[nodiscard]] std::vector<models::Strategy> strategy_splits(const std::set<std::int64_t>& sps);

// The planner's answer as JSON (`ringsim plan --format json`, ringsim.plan in Python): the
// request's goal, hardware and model, the search's counts, the ranked plans (each row's fields,
// rank, why, maturity, profile origin and ties) and the best row of each strategy family and of
// each implementation.
[[nodiscard]] nlohmann::json plan_json(const PlanRequest& r, const PlanSearch& found);
// The ranked plans as CSV (`ringsim plan --format csv`, the GUI's export): rank, the sweep's
// columns, why and ties, one row per plan.
[[nodiscard]] std::string plan_csv(const PlanRequest& r, const PlanSearch& found);

// What the labels of the plans' rows mean (SweepResult::deployability), one line naming only
// those that occur; empty when every plan is a production library on a fitted profile.
[[nodiscard]] std::string deployability_legend(const std::vector<PlanChoice>& plans);

// Why the plan performs as it does, in words: bound, exposed communication, imbalance, memory.
[[nodiscard]] std::string explain(const SweepResult& row);
// Why a row of PlanSearch::smaller does not answer the request: "does not fit: 95.3 GiB with
// 2.0 GiB headroom on 79.6 GiB (17.7 GiB over)" or "too slow: TTFT 7.21 s, 2.21 s (44%) over the
// 5 s target" (tokens/s below the target for training).
[[nodiscard]] std::string shortfall(const SweepResult& row, const PlanRequest& r);
// Of two rows with the same device count, whether a came closer to answering (smaller).
[[nodiscard]] bool closer(const SweepResult& a, const SweepResult& b, const PlanRequest& r);

}  // namespace ringsim::planning
