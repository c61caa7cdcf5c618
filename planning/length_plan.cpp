#include "planning/length_plan.hpp"
#include "planning/predict_runs.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>

#include "models/catalog/resolve.hpp"
#include "models/workload/document_work.hpp"
#include "models/workload/documents.hpp"
#include "models/io/error.hpp"
#include "models/implementations/implementation.hpp"
#include "models/analytic/gradient_sync.hpp"
#include "models/memory/memory.hpp"
#include "models/analytic/packed_model.hpp"
#include "models/implementations/strategy.hpp"
#include "planning/plan.hpp"

namespace ringsim::planning {

using models::InputError;

namespace {

const std::vector<models::LayoutSpec>& default_layouts() {
  static const std::vector<models::LayoutSpec> l =
      models::parse_layouts({"contiguous", "striped", "zigzag", "doc-zigzag", "doc-zigzag-docmajor", "ptrr"});
  return l;
}

// The fields of a prediction that add up over packed sequences (times, exposures, work).
void accumulate(models::Prediction& sum, const models::Prediction& p) {
  sum.attention_fwd_s += p.attention_fwd_s;
  sum.attention_bwd_s += p.attention_bwd_s;
  sum.other_compute_s += p.other_compute_s;
  sum.collective_s += p.collective_s;
  sum.exposed_transfer_s += p.exposed_transfer_s;
  sum.exposed_allgather_s += p.exposed_allgather_s;
  sum.exposed_reduce_scatter_s += p.exposed_reduce_scatter_s;
  sum.exposed_all_to_all_s += p.exposed_all_to_all_s;
  sum.attention_busiest_s += p.attention_busiest_s;
  sum.attention_mean_s += p.attention_mean_s;
  sum.step_s += p.step_s;
  sum.model_flops += p.model_flops;
}

void merge(BucketFigures& into, const BucketFigures& from) {
  into.packs += from.packs;
  into.documents += from.documents;
  into.real_tokens += from.real_tokens;
  accumulate(into.sum, from.sum);
  into.imbalance_sum += from.imbalance_sum;
  into.parts += from.parts;
}

}  // namespace

std::string BucketFigures::why() const {
  models::Prediction p = sum;
  p.imbalance = mean_imbalance();
  return models::why(p, parts);
}

void check_request(const LengthPlanRequest& r) {
  if (r.n_seq <= 0) throw InputError({}, 0, "seq", "expected a positive sequence length");
  if (r.n_seq > kMaxPlanTokens)
    throw InputError({}, 0, "seq",
                     "sequences of at most 2^25 tokens (a document layout's stand-in holds 16 bytes per token), got " +
                         std::to_string(r.n_seq));
  if (r.mp <= 0 || r.sp <= 0) throw InputError({}, 0, "mesh", "mp and sp must be positive");
  if (r.top <= 0) throw InputError({}, 0, "top", "expected a positive count of candidates per bucket");
  if (r.threads < 0) throw InputError({}, 0, "threads", "expected a non-negative thread count");
  std::int64_t previous = 0;
  for (const auto e : r.bucket_edges) {
    if (e <= previous)
      throw InputError({}, 0, "buckets", "bucket edges must be positive and ascending, got " + std::to_string(e) +
                                             " after " + std::to_string(previous));
    if (e >= r.n_seq)
      throw InputError({}, 0, "buckets",
                       "bucket edge " + std::to_string(e) + " is not below n_seq = " + std::to_string(r.n_seq) +
                           " (the last bucket ends at n_seq)");
    previous = e;
  }
}

namespace {

models::ScenarioParts parts_of(const LengthPlanRequest& r, const models::ScenarioSpec& spec, const models::Catalog& catalog) {
  auto p = models::resolve_parts(spec, catalog);
  // The time model knows full rematerialisation only (one more forward of every layer).
  models::apply_recompute(p.profile, r.recompute);
  models::apply_precision(p.profile, r.memory.precision);
  return p;
}

}  // namespace

std::vector<TileCheck> tile_check(const LengthPlan& plan, const models::Catalog& catalog, std::int64_t per_candidate) {
  std::vector<TileCheck> out;
  const auto& r = plan.request;
  for (std::size_t c = 0; c < plan.candidates.size(); ++c) {
    const auto& cand = plan.candidates[c];
    if (!cand.skipped.empty() || per_candidate <= 0) continue;
    const auto& packs = plan.packings[static_cast<std::size_t>(cand.packing)];
    if (packs.size() == 0) continue;
    const auto parts = parts_of(r, cand.spec, catalog);
    const models::PackedModel model(cand.spec, parts);
    models::PackedModel::Workspace ws;
    TileCheck t;
    t.candidate = c;
    t.min_ratio = 1e300;
    const std::int64_t n = std::min(per_candidate, packs.size());
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t p = i * packs.size() / n;
      auto docs = std::make_shared<models::Documents>();
      docs->spec = cand.spec.docs->text();
      const auto pack = packs.pack(p);
      docs->lengths.assign(pack.begin(), pack.end());
      if (const auto used = std::accumulate(pack.begin(), pack.end(), std::int64_t{0}); used < r.n_seq)
        docs->lengths.push_back(r.n_seq - used);
      const double element = model.predict(docs->lengths, ws).step_s;
      double tiled = 0;
      try {
        const auto full = models::resolve(cand.spec, parts, docs);
        t.tile = full.tile;
        tiled = models::predict(full).step_s;
      } catch (const models::InputError& e) {
        // The plan's candidates were already accepted; a tile count too large for the full
        // model (a document-major layout cuts every block into thousands of runs) is reported
        // for that candidate instead of ending the plan, with no ratios.
        t = TileCheck{};
        t.candidate = c;
        t.not_checked = e.what();
        break;
      }
      const double ratio = tiled / element;
      t.min_ratio = std::min(t.min_ratio, ratio);
      t.max_ratio = std::max(t.max_ratio, ratio);
      t.mean_ratio += ratio / static_cast<double>(n);
      ++t.sequences;
    }
    out.push_back(t);
  }
  return out;
}

std::vector<models::Strategy> strategies_of(std::int64_t sp) { return strategy_splits({sp}); }

std::size_t LengthPlan::bucket_of(std::int64_t longest) const noexcept {
  const auto it = std::lower_bound(buckets.begin(), buckets.end(), longest,
                                   [](const Bucket& b, std::int64_t x) { return b.hi < x; });
  return it == buckets.end() ? buckets.size() - 1 : static_cast<std::size_t>(it - buckets.begin());
}

LengthPlan plan_from_lengths(const LengthPlanRequest& r, const LengthSample& sample, const models::Catalog& catalog) {
  check_request(r);
  if (sample.lengths.empty()) throw InputError({}, 0, "lengths", "no documents");
  LengthPlan plan;
  plan.request = r;
  plan.source = sample.source;
  plan.documents = static_cast<std::int64_t>(sample.lengths.size());
  plan.tokens = sample.tokens();

  // Buckets: (0, e1], (e1, e2], ..., (ek, n_seq].
  std::vector<std::int64_t> edges = r.bucket_edges;
  if (edges.empty())
    for (std::int64_t e = 1024; e < r.n_seq; e *= 2) edges.push_back(e);
  edges.push_back(r.n_seq);
  std::int64_t lo = 0;
  for (const auto e : edges) {
    plan.buckets.push_back({lo, e});
    lo = e;
  }

  // Candidates and their models.
  const auto hw = r.hardware.ends_with(".json") ? models::Hardware::load_file(r.hardware) : catalog.hardware(r.hardware);
  const auto strategies = r.strategies.empty() ? strategies_of(r.sp) : r.strategies;
  const auto layouts = r.layouts.empty() ? default_layouts() : r.layouts;
  // A strategy the user named that cannot split the devices is bad input, as in predict (the
  // defaults are built for r.sp and always can).
  for (const auto& c : strategies) c.check_shape(r.sp);
  for (const auto& l : layouts) (void)models::DocLayout::of(l);
  for (const auto& i : r.impls) (void)catalog.implementation(i);
  std::map<std::string, models::ScenarioParts> parts;
  // Models are built once here to learn what each candidate needs (its quantum, its memory) and
  // again one at a time to evaluate it: a document layout's model holds its stand-in's token
  // permutation (16 bytes per token), too much to keep every candidate's at 10M tokens.
  std::vector<char> runs;
  const auto base_spec = [&](const models::Strategy& cp, const models::LayoutSpec& layout) {
    models::ScenarioSpec s;
    (r.hardware.ends_with(".json") ? s.hardware_file : s.hardware) = r.hardware;
    (r.model.ends_with(".json") ? s.model_file : s.model) = r.model;
    s.mp = r.mp;
    s.sp = r.sp;
    s.n_seq = r.n_seq;
    s.cp = cp;
    s.layout = layout;
    s.profile = r.profile;
    s.docs = models::DocumentsSpec::given("packed");
    return s;
  };
  const auto add_candidate = [&](models::ScenarioSpec spec, const std::string& impl) {
    LengthCandidate c;
    c.cp = spec.cp.text();
    c.layout = spec.layout.text();
    c.impl = impl;
    spec.impl = impl;
    c.spec = spec;
    try {
      auto it = parts.find(impl);
      if (it == parts.end()) it = parts.emplace(impl, parts_of(r, spec, catalog)).first;
      const models::PackedModel m(spec, it->second);
      c.quantum = m.document_quantum();
      models::MemoryOptions mo;
      mo.sharding = r.zero;
      mo.recompute = r.recompute;
      mo.settings = r.memory;
      const auto mem = models::estimate_memory(m.scenario(), mo);
      c.memory_bytes = mem.total_bytes;
      c.memory_capacity_bytes = mem.capacity_bytes;
      c.fits_memory = mem.fits;
      c.profile_calibrated = m.scenario().profile.provenance.calibrated;
      c.label = deployability_label(m.scenario().impl.maturity, profile_origin(m.scenario().profile));
      c.kernel = kernel_on(m.scenario().impl, m.scenario().hardware);
    } catch (const InputError& e) {
      c.skipped = e.field().empty() ? e.message() : e.field() + ": " + e.message();
    }
    runs.push_back(c.skipped.empty());
    plan.candidates.push_back(std::move(c));
  };
  for (const auto& cp : strategies)
    for (const auto& layout : layouts) {
      const auto spec = base_spec(cp, layout);
      if (r.impls.empty()) {
        std::string impl;
        try {
          impl = catalog.choose_implementation(spec, hw, {layout}, !r.include_research);
        } catch (const InputError&) {
          LengthCandidate c;
          c.cp = cp.text();
          c.layout = layout.text();
          c.impl = "-";
          c.skipped = std::string(r.include_research ? "no implementation" : "no production library") +
                      " offers strategy " + c.cp + " with layout " + c.layout + " and packed documents on " + hw.name +
                      (r.include_research ? "" : " (--include-research admits research and reference kernels)");
          plan.candidates.push_back(std::move(c));
          runs.push_back(false);
          continue;
        }
        add_candidate(spec, impl);
        continue;
      }
      bool any = false;
      for (const auto& name : r.impls) {
        const auto im = catalog.implementation(name);
        if (!im.offers(hw.kind, layout, models::MaskSpec::packed_documents(), cp)) continue;
        any = true;
        add_candidate(spec, name);
      }
      if (!any) {
        LengthCandidate c;
        c.cp = cp.text();
        c.layout = layout.text();
        c.impl = "-";
        c.skipped = "none of the implementations asked for offers strategy " + c.cp + " with layout " + c.layout +
                    " and packed documents on " + hw.name;
        plan.candidates.push_back(std::move(c));
        runs.push_back(false);
      }
    }

  // One packing per distinct document quantum.
  std::map<std::int64_t, std::int64_t> packing_of_quantum;
  for (std::size_t c = 0; c < plan.candidates.size(); ++c) {
    if (!runs[c]) continue;
    const std::int64_t q = plan.candidates[c].quantum;
    auto it = packing_of_quantum.find(q);
    if (it == packing_of_quantum.end()) {
      it = packing_of_quantum.emplace(q, static_cast<std::int64_t>(plan.packings.size())).first;
      try {
        plan.packings.push_back(pack_documents(sample.lengths, r.n_seq, q, r.packing));
      } catch (const models::InputError& e) {
        // A sample too large to pack is the lengths file's (or generator's) doing: name it.
        if (!e.file().empty() || e.field() != "lengths") throw;
        const bool generated = sample.source.starts_with("lognormal:");
        throw models::InputError(generated ? std::string() : sample.source, 0, "lengths",
                                 generated ? sample.source + ": " + e.message() : e.message());
      }
    }
    plan.candidates[c].packing = it->second;
  }

  // Each runnable candidate in turn: its model built, its packs in chunks on every thread, each
  // chunk summed on its own and merged in chunk order, so the figures are the same bytes for any
  // thread count.
  constexpr std::int64_t kChunk = 64;
  struct Chunk {
    std::int64_t first = 0, last = 0;
    std::vector<BucketFigures> figures;
    std::int64_t documents = 0;
  };
  const std::int64_t threads_asked =
      r.threads > 0 ? r.threads : static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  plan.figures.assign(plan.candidates.size(), std::vector<BucketFigures>(plan.buckets.size() + 1));
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t c = 0; c < plan.candidates.size(); ++c) {
    if (!runs[c]) continue;
    const auto& cand = plan.candidates[c];
    const models::PackedModel model(cand.spec, parts.at(cand.impl));
    // Each packed sequence is a step of one replica, its gradients synchronised over the sp ranks
    // as predict counts them (models::training_step: ZeRO-3's gathers and the reduction, hidden
    // behind that step's attention backward where they can be).
    const auto sync = models::gradient_sync(model.scenario(), 1, r.zero, 0.0);
    const auto& packs = plan.packings[static_cast<std::size_t>(cand.packing)];
    std::vector<Chunk> chunks;
    for (std::int64_t p = 0; p < packs.size(); p += kChunk) chunks.push_back({p, std::min(packs.size(), p + kChunk), {}, 0});
    std::atomic<std::size_t> next{0};
    std::exception_ptr error;
    std::mutex error_mutex;
    const auto worker = [&] {
      models::PackedModel::Workspace ws;
      for (;;) {
        const std::size_t i = next.fetch_add(1);
        if (i >= chunks.size()) return;
        Chunk& chunk = chunks[i];
        try {
          chunk.figures.assign(plan.buckets.size() + 1, BucketFigures{});
          for (std::int64_t p = chunk.first; p < chunk.last; ++p) {
            const auto docs = packs.pack(p);
            models::Prediction pred = model.predict(docs, ws);
            models::StepBreakdown step = models::pass_breakdown(pred);
            step[models::StepPart::GradientSync] = sync.exposed_with(pred.attention_bwd_s);
            pred.step_s = step.total();
            const auto pi = static_cast<std::size_t>(p);
            for (const std::size_t b : {plan.bucket_of(packs.longest[pi]), plan.buckets.size()}) {
              BucketFigures& f = chunk.figures[b];
              ++f.packs;
              f.documents += static_cast<std::int64_t>(docs.size());
              f.real_tokens += packs.real_tokens[pi];
              accumulate(f.sum, pred);
              f.parts += step;
              f.imbalance_sum += pred.imbalance;
            }
            chunk.documents += static_cast<std::int64_t>(docs.size());
          }
        } catch (...) {
          std::lock_guard lock(error_mutex);
          if (!error) error = std::current_exception();
          next = chunks.size();
          return;
        }
      }
    };
    const std::int64_t threads = std::max<std::int64_t>(1, std::min<std::int64_t>(threads_asked, static_cast<std::int64_t>(chunks.size())));
    std::vector<std::thread> pool;
    for (std::int64_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
    for (const auto& chunk : chunks) {
      for (std::size_t b = 0; b < chunk.figures.size(); ++b) merge(plan.figures[c][b], chunk.figures[b]);
      plan.predictions += chunk.last - chunk.first;
      plan.documents_counted += chunk.documents;
    }
  }
  plan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Rankings: tokens/s, then the candidates' order; exact ties of one strategy grouped.
  plan.ranking.resize(plan.buckets.size() + 1);
  for (std::size_t b = 0; b <= plan.buckets.size(); ++b) {
    std::vector<std::size_t> order;
    for (std::size_t c = 0; c < plan.candidates.size(); ++c)
      if (runs[c] && plan.candidates[c].fits_memory && plan.figures[c][b].packs > 0) order.push_back(c);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      return plan.figures[x][b].tokens_per_s() > plan.figures[y][b].tokens_per_s();
    });
    auto& rows = plan.ranking[b];
    for (const auto c : order) {
      const auto& f = plan.figures[c][b];
      const auto tie = std::find_if(rows.begin(), rows.end(), [&](const RankedCandidate& row) {
        const auto& g = plan.figures[row.candidate][b];
        return plan.candidates[row.candidate].cp == plan.candidates[c].cp && g.sum.step_s == f.sum.step_s &&
               g.real_tokens == f.real_tokens && g.packs == f.packs;
      });
      if (tie != rows.end())
        tie->ties.push_back(c);
      else
        rows.push_back({c, {}});
    }
  }
  return plan;
}

}  // namespace ringsim::planning
