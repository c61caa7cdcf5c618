#include "planning/evaluate.hpp"
#include "planning/predict_runs.hpp"
#include "planning/parts_io.hpp"

#include <algorithm>

#include <fmt/compile.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/analytic/gradient_sync.hpp"
#include "models/analytic/training_step.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "sim/step.hpp"
#include "sim/step_size.hpp"

namespace ringsim::planning {

using models::InputError;

const char* SweepResult::bound() const noexcept {
  if (inference) {
    // Prefill and decode rows carry no step breakdown: their why-line names what bounds them
    // ("pass-KV, 1.5x faster than pass-Q: transfer-bound: ...", "cache-bound: ..."), the first named.
    const std::string_view why = inference->why;
    const char* first = nullptr;
    std::size_t at = std::string_view::npos;
    for (const char* kind : {"transfer", "latency", "cache", "weight", "compute"})
      if (const auto pos = why.find(std::string(kind) + "-bound"); pos < at) at = pos, first = kind;
    if (first) return first;
  }
  const double exposed = parts.exposed_s() + parts[models::StepPart::GradientSync];
  return exposed >= 0.05 * step_s ? "transfer" : "compute";
}

namespace {
// What the time model tells apart among recomputation policies (models::apply_recompute): the
// profile's own (0), none or selective (1: nothing repeated), full (2), attention only (3).
std::uint64_t time_class(const std::optional<models::Recompute>& recompute) {
  if (!recompute) return 0;
  switch (*recompute) {
    case models::Recompute::Full: return 2;
    case models::Recompute::Attention: return 3;
    case models::Recompute::None:
    case models::Recompute::Selective: return 1;
  }
  return 1;
}
}  // namespace

Evaluator::PartsMap::const_iterator Evaluator::parts(const models::ScenarioSpec& spec,
                                                     const std::optional<models::Recompute>& recompute) {
  const std::string hw_key = spec.hardware_file.empty() ? spec.hardware : "file:" + spec.hardware_file;
  auto hw = hardware_.find(hw_key);
  if (hw == hardware_.end())
    hw = hardware_
             .emplace(hw_key, spec.hardware_file.empty() ? catalog_.hardware(spec.hardware)
                                                         : models::Hardware::load_file(spec.hardware_file))
             .first;
  // The implementation depends on the point's mask, strategy and layout (what it offers).
  const std::string choice_key = hw_key + '\n' + spec.impl + '\n' + spec.profile + '\n' + spec.mask.text() + '\n' +
                                 spec.cp.text() + '\n' + spec.layout.text();
  auto choice = impl_choice_.find(choice_key);
  if (choice == impl_choice_.end()) {
    // predict's choice (planning::choose_implementation): the catalog's for the layout, or, where
    // its code does not train in the grid's precision (fp8), the most preferred library that does.
    RunRequest one;
    one.base = spec;
    one.layouts = {spec.layout};
    one.layouts_given = true;
    one.cps = {spec.cp};
    one.precision = std::string(models::to_string(grid_.memory.precision));
    choose_implementation(one, catalog_);
    choice = impl_choice_.emplace(choice_key, one.base.impl).first;
  }
  const std::string key = hw_key + '\n' + (spec.model_file.empty() ? spec.model : "file:" + spec.model_file) + '\n' +
                          choice->second + '\n' + spec.profile + '\n' + std::to_string(time_class(recompute));
  auto it = parts_.find(key);
  if (it == parts_.end()) {
    models::ScenarioSpec fixed = spec;
    fixed.impl = choice->second;
    auto p = models::resolve_parts(fixed, catalog_);
    // Every point copies these into its scenario; rows never print their citations, so the
    // copies go without them (the files keep them).
    p.hardware.sources.clear();
    p.model.sources.clear();
    p.impl.sources.clear();
    p.impl.description.clear();
    p.impl.notes.clear();
    p.profile.provenance.notes.clear();
    // The time model knows full rematerialisation only (one more forward of every layer);
    // selective recomputation repeats element-wise ops, whose time it leaves out.
    if (recompute) models::apply_recompute(p.profile, *recompute);
    models::apply_precision(p.profile, grid_.memory.precision);  // one precision for the whole grid
    it = parts_.emplace(key, std::move(p)).first;
  }
  return it;
}

Evaluator::Evaluator(const models::Catalog& catalog, const SweepGrid& grid)
    : catalog_(catalog), grid_(grid), sizes_(grid.axis_sizes()) {}

std::uint64_t Evaluator::axes_key(const SweepPoint& p, std::initializer_list<Axis> axes) const {
  // Mixed radix over the point's positions along `axes`, then the recompute class (the profile's,
  // none or selective, full, attention): below the grid's size times 4, so it fits.
  std::uint64_t k = 0;
  for (const Axis a : axes)
    k = k * static_cast<std::uint64_t>(sizes_[static_cast<std::size_t>(a)]) +
        static_cast<std::uint64_t>(p.axis[static_cast<std::size_t>(a)]);
  return k * 4 + time_class(p.recompute);
}

void Evaluator::resolve_point(const SweepPoint& p, Timed& t) {
  // The parts depend on hardware, model, implementation, strategy, mask and layout (which
  // implementation offers them).
  const std::uint64_t parts_key = axes_key(p, {kHardware, kModel, kImpl, kCp, kMask, kLayout});
  auto pk = parts_by_axes_.find(parts_key);
  if (pk == parts_by_axes_.end()) pk = parts_by_axes_.emplace(parts_key, &this->parts(p.spec, p.recompute)->second).first;
  t.scenario = models::resolve(p.spec, *pk->second);
  apply_topology(t.scenario, p.topology);
  t.prediction = models::predict(t.scenario);
  t.prediction.rounds_fwd = {};  // per-round detail: rows do not carry it
}

void Evaluator::compute_timed(const SweepPoint& p, Timed& t) {
  resolve_point(p, t);
  auto& s = t.scenario;
  // Relative bounds, so the simulator's step and the gradient synchronisation scale them.
  if (grid_.intervals) {
    const auto iv = models::time_intervals_around(s, t.prediction);
    t.step_interval = iv.step;
    t.attention_fwd_interval = iv.attention_fwd;
    t.attention_bwd_interval = iv.attention_bwd;
  }
  if (t.step_interval.available) {
    t.step_interval.lo /= t.prediction.step_s;
    t.step_interval.hi /= t.prediction.step_s;
  }
  if (grid_.engine == Engine::Des) {
    // As `predict --engine des`: step, tokens/s and MFU from the simulator, the breakdown from
    // the cost model.
    sim::StepOptions o;
    o.topology = p.topology;
    o.buffers = grid_.kv_buffers;
    // A point too large to simulate in reasonable time is a row that cannot run, not a stall.
    sim::check_step_size(s, o, sim::kDefaultMaxEvents, "this point", "ringsim simulate --max-events runs larger steps");
    const auto res = sim::simulate_step(s, o);
    t.prediction.step_s = res.step_s;
    t.prediction.tokens_per_s = res.tokens_per_s;
    t.prediction.mfu = res.mfu;
  }
}

std::optional<double> Evaluator::paired_step_log_sd(const SweepPoint& a, const SweepPoint& b) {
  try {
    // Resolved apart from the memo (which may let one entry go while the other is computed; the
    // perturbed predictions swap the scenarios' profiles), without the intervals or a simulation.
    Timed ta, tb;
    resolve_point(a, ta);
    resolve_point(b, tb);
    return models::paired_step_log_sd(ta.scenario, ta.prediction, tb.scenario, tb.prediction);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

const Evaluator::Timed& Evaluator::timed(const SweepPoint& p) {
  // Points are told apart by their positions on the grid's axes (cheaper than by their names).
  // The step time depends on hardware, model, implementation, strategy, mask, layout, mesh,
  // length, batch, tile and topology. dp, the ZeRO stage and a selective-vs-no recompute choice
  // change memory and gradient synchronisation only, so their points share one timing.
  const std::uint64_t key =
      axes_key(p, {kHardware, kModel, kImpl, kCp, kMask, kLayout, kMesh, kNSeq, kBatch, kTile, kTopology});
  auto it = timed_.find(key);
  if (it == timed_.end()) {
    auto t = std::make_unique<Timed>();
    try {
      compute_timed(p, *t);
    } catch (const InputError& e) {
      t->error = e;
    }
    // A bounded memo: the oldest entry leaves when a new one comes (points that share a timing
    // are near each other in a sweep), one at a time, so memory stays flat and no burst of frees.
    if (timed_order_.size() >= kTimedEntries) {
      timed_.erase(timed_order_.front());
      timed_order_.pop_front();
    }
    timed_order_.push_back(key);
    it = timed_.emplace(key, std::move(t)).first;
  }
  if (it->second->error) throw *it->second->error;
  return *it->second;
}

SweepResult Evaluator::evaluate(const SweepPoint& p) {
  SweepResult r;
  r.point = p;
  r.engine = grid_.engine;
  const auto& spec = p.spec;
  r.hardware = spec.hardware_file.empty() ? spec.hardware : spec.hardware_file;
  r.model = spec.model_file.empty() ? spec.model : spec.model_file;
  r.impl = spec.impl;
  r.profile = spec.profile;
  r.topology = p.topology.empty() ? "default" : p.topology;
  if (spec.tile) r.tile_q = spec.tile->q, r.tile_k = spec.tile->k;
  if (grid_.global_batch > 0 && p.phase == models::RunPhase::Train) {
    // A fixed global batch: this point's micro-batches follow from its replicas.
    const std::int64_t g = grid_.global_batch;
    if (!grid_.splits_global_batch(p.dp, spec.batch)) {
      r.note = "global_batch: " + std::to_string(g) + " sequences do not split into micro-batches of " +
               std::to_string(spec.batch) + " over dp " + std::to_string(p.dp);
      r.note_field = "global_batch";
      return r;
    }
    r.point.pipeline.micro_batches = g / p.dp / spec.batch;  // too many passes: training_step refuses it
  }
  if (p.phase != models::RunPhase::Train) {
    if (p.pipeline.pipelined() || p.pipeline.micro_batches > 1) {  // no inference row repeats another
      r.note = "pp: pipeline stages and micro-batches are a training step's (1 for prefill and decode)";
      r.note_field = "pp";
      return r;
    }
    evaluate_inference(p, r);
    return r;
  }
  if (p.cached_tokens > 0) {  // a sweep crossing phases with caches: no training row repeats another
    r.note = "cached_tokens: a training step has no KV cache (0 for the train phase)";
    r.note_field = "cached_tokens";
    return r;
  }
  try {
    const auto& t = timed(p);
    const auto& s = t.scenario;
    describe_scenario(r, s);
    r.prediction = t.prediction;
    // Memory, gradient synchronisation, throughput of every replica: as predict counts them.
    models::TrainingOptions o;
    o.dp = p.dp;
    o.zero = p.zero;
    o.recompute = p.recompute;
    o.kv_buffers = grid_.kv_buffers;
    o.memory = grid_.memory;
    o.pipeline = r.point.pipeline;  // with a global batch, its micro-batches
    const auto train = models::training_step(s, r.prediction, o);
    r.pipeline_bubble = o.pipeline.pipelined() ? train.passes.bubble_fraction() : 0.0;
    r.recompute = train.recompute;
    r.memory = train.memory;
    r.grad_sync_s = train.sync.total_s;
    r.grad_sync_exposed_s = train.sync.exposed_s;
    r.step_s = train.step_s;
    r.parts = train.parts;
    r.tokens_per_s = train.tokens_per_s;
    r.prediction.mfu = train.mfu;
    if (t.step_interval.available) r.step_interval = {r.step_s * t.step_interval.lo, r.step_s * t.step_interval.hi, true};
    r.attention_fwd_interval = t.attention_fwd_interval;
    r.attention_bwd_interval = t.attention_bwd_interval;
    r.ok = true;
  } catch (const InputError& e) {
    r.ok = false;
    r.note = e.field().empty() ? e.message() : e.field() + ": " + e.message();
    r.note_field = e.field();
  }
  return r;
}

const std::vector<std::string>& sweep_columns() {
  static const std::vector<std::string> c = {
      "index", "hardware", "model", "impl", "cp", "mp", "sp", "dp", "devices", "n_seq", "batch", "layout", "mask",
      "tile", "tile_q", "tile_k", "topology", "zero", "recompute", "engine", "status", "step_s", "step_s_lo", "step_s_hi",
      "tokens_per_s", "tokens_per_s_lo", "tokens_per_s_hi", "mfu",
      "attention_fwd_s", "attention_bwd_s", "other_compute_s", "collective_s", "exposed_transfer_s", "grad_sync_s",
      "grad_sync_exposed_s", "imbalance", "bound", "memory_bytes", "memory_capacity_bytes", "fits_memory",
      "memory_largest_term", "parameters_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes",
      "workspace_bytes", "strategy_buffers_bytes", "fixed_bytes", "host_bytes", "profile", "profile_calibrated", "note", "attention_fwd_s_lo",
      "attention_fwd_s_hi", "attention_bwd_s_lo", "attention_bwd_s_hi", "pp", "pp_schedule", "micro_batches", "pipeline_bubble"};
  static const std::vector<std::string> with_parts = with_part_columns(c);
  return with_parts;
}

namespace {
void field(std::string& out, const std::string& v);

// The inference columns of a row (after every other): empty figures for a training row or a
// skipped one, the phase and cached tokens always.
void append_inference_fields(const SweepResult& r, std::string& out) {
  auto it = std::back_inserter(out);
  const auto& p = r.point;
  fmt::format_to(it, FMT_COMPILE(",{},{},"), models::to_string(p.phase), p.cached_tokens);
  if (!r.inference) {
    out += ",,,,,,,";
    return;
  }
  const auto& x = *r.inference;
  const bool prefill = x.phase == models::RunPhase::Prefill;
  if (prefill) fmt::format_to(it, FMT_COMPILE("{:.6g},,{},{:.6g},{:.6g},"), x.latency_s, models::to_string(*x.variant),
                              x.pass_kv_s, x.pass_q_s);
  else fmt::format_to(it, FMT_COMPILE(",{:.6g},,,,"), x.latency_s);
  fmt::format_to(it, FMT_COMPILE("{:.6g},"), x.kv_cache_bytes);
  field(out, x.kernel);
  out += ',';
  field(out, x.why);
}

// One field of the row: quoted when it holds a comma or a quote; newlines become spaces so a
// row is one line (resume and merge read rows line by line).
void field(std::string& out, const std::string& v) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) {
    out += v;
    return;
  }
  out += '"';
  for (const char c : v) {
    if (c == '"') out += "\"\"";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  out += '"';
}
}  // namespace

const std::vector<std::string>& inference_columns() {
  static const std::vector<std::string> c = {"phase", "cached_tokens", "ttft_s", "tpot_s", "variant", "pass_kv_ttft_s",
                                             "pass_q_ttft_s", "kv_cache_bytes", "kernel", "why"};
  return c;
}

std::vector<std::string> sweep_columns(bool inference) {
  auto c = sweep_columns();
  if (inference) c.insert(c.end(), inference_columns().begin(), inference_columns().end());
  return c;
}

void append_csv_row(const SweepResult& r, std::string& out, bool inference) {
  const auto& p = r.point;
  const auto& s = p.spec;
  auto it = std::back_inserter(out);
  // Compiled format strings: a sweep formats some forty numbers per row.
  const auto g = [&](double v) { fmt::format_to(it, FMT_COMPILE("{:.6g},"), v); };
  fmt::format_to(it, FMT_COMPILE("{},"), p.index);
  field(out, r.hardware);
  out += ',';
  field(out, r.model);
  out += ',';
  field(out, r.impl);
  out += ',';
  field(out, s.cp.text());
  fmt::format_to(it, FMT_COMPILE(",{},{},{},{},{},{},"), s.mp, s.sp, p.dp, r.devices(), s.n_seq, s.batch);
  field(out, s.layout.text());
  out += ',';
  field(out, s.mask.text());
  // The tile as asked for ("default": the profile's, clamped to the block), then as run.
  if (s.tile) fmt::format_to(it, FMT_COMPILE(",{}x{},"), s.tile->q, s.tile->k);
  else out += ",default,";
  if (r.tile_q > 0) fmt::format_to(it, FMT_COMPILE("{},{},"), r.tile_q, r.tile_k);
  else out += ",,";
  field(out, r.topology);
  out += ',';
  out += models::to_string(p.zero);
  out += ',';
  out += r.ok ? models::to_string(r.recompute) : (p.recompute ? models::to_string(*p.recompute) : "profile");
  out += ',';
  out += to_string(r.engine);
  out += r.ok ? ",ok," : ",skipped,";
  if (r.ok) {
    const auto& q = r.prediction;
    const auto& m = r.memory;
    const auto& iv = r.step_interval;
    g(r.step_s);
    if (iv.available) {
      g(iv.lo);
      g(iv.hi);
    } else {
      out += ",,";
    }
    g(r.tokens_per_s);
    if (iv.available) {  // the throughput's bounds from the step's, swapped
      g(r.tokens_per_s * r.step_s / iv.hi);
      g(r.tokens_per_s * r.step_s / iv.lo);
    } else {
      out += ",,";
    }
    fmt::format_to(it, FMT_COMPILE("{:.4f},"), q.mfu);
    g(q.attention_fwd_s);
    g(q.attention_bwd_s);
    g(q.other_compute_s);
    g(q.collective_s);
    g(q.exposed_transfer_s);
    g(r.grad_sync_s);
    g(r.grad_sync_exposed_s);
    fmt::format_to(it, FMT_COMPILE("{:.4f},"), q.imbalance);
    out += r.bound();
    out += ',';
    g(m.total_bytes);
    g(m.capacity_bytes);
    out += m.fits ? "true," : "false,";
    out += m.largest_term().name;
    out += ',';
    g(m.parameters_bytes);
    g(m.gradients_bytes);
    g(m.optimizer_bytes);
    g(m.activations_bytes);
    g(m.workspace_bytes);
    g(m.strategy.bytes);
    g(m.fixed_bytes);
    g(m.host_bytes);
  } else {
    out.append(28, ',');
  }
  field(out, r.profile);
  out += ',';
  out += r.ok ? (r.profile_calibrated ? "true" : "false") : "";
  out += ',';
  field(out, r.note);
  // The attention times' intervals, after the note (columns added last keep older readers' order).
  for (const auto* iv : {&r.attention_fwd_interval, &r.attention_bwd_interval}) {
    if (r.ok && iv->available)
      fmt::format_to(it, FMT_COMPILE(",{:.6g},{:.6g}"), iv->lo, iv->hi);
    else
      out += ",,";
  }
  // The step's pipeline and micro-batches (docs/pipeline.md), after those.
  fmt::format_to(it, FMT_COMPILE(",{},{},{},"), p.pipeline.stages, p.pipeline.spec(), p.pipeline.micro_batches);
  if (r.ok) fmt::format_to(it, FMT_COMPILE("{:.4f}"), r.pipeline_bubble);
  // The step's parts (training rows), after those.
  const bool parts = r.ok && !r.inference;
  for (const double x : r.parts.s) {
    if (parts) fmt::format_to(it, FMT_COMPILE(",{:.6g}"), x);
    else out += ',';
  }
  if (inference) append_inference_fields(r, out);
  out += '\n';
}

models::ResolvedScenario resolve_point(const SweepPoint& p, const models::Catalog& catalog,
                                       models::TrainingPrecision precision) {
  auto parts = models::resolve_parts(p.spec, catalog);
  if (p.recompute) models::apply_recompute(parts.profile, *p.recompute);
  models::apply_precision(parts.profile, precision);
  auto s = models::resolve(p.spec, parts);
  apply_topology(s, p.topology);
  return s;
}

nlohmann::json result_json(const SweepResult& r) {
  const auto& p = r.point;
  const auto& s = p.spec;
  nlohmann::json j = {{"index", p.index}, {"hardware", r.hardware}, {"model", r.model}, {"impl", r.impl},
                      {"cp", s.cp.text()}, {"mp", s.mp}, {"sp", s.sp}, {"dp", p.dp}, {"devices", r.devices()},
                      {"n_seq", s.n_seq}, {"batch", s.batch}, {"layout", s.layout.text()}, {"mask", s.mask.text()},
                      {"tile", s.tile ? fmt::format("{}x{}", s.tile->q, s.tile->k) : std::string("default")},
                      {"tile_q", r.tile_q}, {"tile_k", r.tile_k}, {"topology", r.topology},
                      {"zero", models::to_string(p.zero)}, {"engine", to_string(r.engine)}, {"pp", p.pipeline.stages},
                      {"pp_schedule", p.pipeline.spec()}, {"micro_batches", p.pipeline.micro_batches},
                      {"status", r.ok ? "ok" : "skipped"}, {"profile", r.profile}, {"note", r.note}};
  if (p.phase != models::RunPhase::Train) j.update({{"phase", models::to_string(p.phase)}, {"cached_tokens", p.cached_tokens}});
  if (!r.ok) return j;
  if (r.inference) {
    const auto& x = *r.inference;
    const bool prefill = x.phase == models::RunPhase::Prefill;
    j.update({{prefill ? "ttft_s" : "tpot_s", x.latency_s}, {"kv_cache_bytes", x.kv_cache_bytes},
              {"weights_bytes", x.weights_bytes}, {"kernel", x.kernel}, {"why", x.why}});
    if (prefill)
      j.update({{"variant", models::to_string(*x.variant)}, {"pass_kv_ttft_s", x.pass_kv_s}, {"pass_q_ttft_s", x.pass_q_s}});
  }
  const auto& q = r.prediction;
  const auto& m = r.memory;
  const auto& iv = r.step_interval;
  if (iv.available)
    j.update({{"step_s_lo", iv.lo}, {"step_s_hi", iv.hi}, {"tokens_per_s_lo", r.tokens_per_s * r.step_s / iv.hi},
              {"tokens_per_s_hi", r.tokens_per_s * r.step_s / iv.lo}});
  else
    j.update({{"step_s_lo", nullptr}, {"step_s_hi", nullptr}, {"tokens_per_s_lo", nullptr}, {"tokens_per_s_hi", nullptr}});
  j.update({{"recompute", models::to_string(r.recompute)}, {"step_s", r.step_s}, {"tokens_per_s", r.tokens_per_s},
            {"mfu", q.mfu}, {"attention_fwd_s", q.attention_fwd_s}, {"attention_bwd_s", q.attention_bwd_s},
            {"other_compute_s", q.other_compute_s}, {"collective_s", q.collective_s},
            {"exposed_transfer_s", q.exposed_transfer_s}, {"grad_sync_s", r.grad_sync_s},
            {"grad_sync_exposed_s", r.grad_sync_exposed_s}, {"imbalance", q.imbalance}, {"bound", r.bound()},
            {"memory_bytes", m.total_bytes}, {"memory_capacity_bytes", m.capacity_bytes}, {"fits_memory", m.fits},
            {"memory_largest_term", m.largest_term().name}, {"parameters_bytes", m.parameters_bytes},
            {"gradients_bytes", m.gradients_bytes}, {"optimizer_bytes", m.optimizer_bytes},
            {"activations_bytes", m.activations_bytes}, {"workspace_bytes", m.workspace_bytes},
            {"strategy_buffers_bytes", m.strategy.bytes}, {"fixed_bytes", m.fixed_bytes}, {"host_bytes", m.host_bytes},
            {"memory_headroom_bytes", m.headroom_bytes}, {"profile_calibrated", r.profile_calibrated},
            {"pipeline_bubble", r.pipeline_bubble}});
  if (!r.inference) add_parts_json(j, r.parts);
  for (const auto& [name, interval] : {std::pair{"attention_fwd_s", &r.attention_fwd_interval},
                                       std::pair{"attention_bwd_s", &r.attention_bwd_interval}}) {
    j[std::string(name) + "_lo"] = interval->available ? nlohmann::json(interval->lo) : nlohmann::json(nullptr);
    j[std::string(name) + "_hi"] = interval->available ? nlohmann::json(interval->hi) : nlohmann::json(nullptr);
  }
  return j;
}

std::string profile_origin(const models::Profile& p) {
  if (p.provenance.calibrated) return "fitted";
  return p.provenance.method.starts_with("derived") ? "derived" : "spec defaults";
}

std::string deployability_label(models::Maturity maturity, const std::string& origin) {
  std::vector<std::string> parts;
  if (maturity != models::Maturity::Production) parts.emplace_back(models::to_string(maturity));
  if (!origin.empty() && origin != "fitted") parts.push_back(origin);
  return parts.empty() ? std::string() : "[" + parts.front() + (parts.size() > 1 ? "; " + parts.back() : "") + "]";
}

void describe_scenario(SweepResult& r, const models::ResolvedScenario& s) {
  r.impl = s.impl.name;
  r.profile = s.profile.name;
  r.profile_calibrated = s.profile.provenance.calibrated;
  r.maturity = s.impl.maturity;
  r.profile_origin = profile_origin(s.profile);
  r.tile_q = s.tile.q;
  r.tile_k = s.tile.k;
}

std::string SweepResult::deployability() const { return deployability_label(maturity, profile_origin); }

}  // namespace ringsim::planning
