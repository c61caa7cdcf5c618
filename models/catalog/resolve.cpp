#include "models/catalog/resolve.hpp"

#include <algorithm>

#include "models/families/attention_cost.hpp"
#include "models/families/kernel_time.hpp"
#include "models/io/error.hpp"
#include "models/program/program.hpp"
#include "models/scenario/size_checks.hpp"
#include "models/workload/balanced_layout.hpp"
#include "models/workload/documents.hpp"
#include "models/workload/sparse_io.hpp"

namespace ringsim::models {

namespace {

// Before anything is read: an impossible count fails first, whatever the names.
void check_counts(const ScenarioSpec& spec) {
  if (spec.mp <= 0) throw InputError({}, 0, "mp", "tensor-parallel degree must be a positive integer");
  if (spec.sp <= 0) throw InputError({}, 0, "sp", "ring size must be a positive integer");
  if (spec.n_seq <= 0) throw InputError({}, 0, "n_seq", "sequence length must be a positive integer");
  if (spec.batch <= 0) throw InputError({}, 0, "batch", "batch must be a positive integer");
  if (spec.docs && spec.mask.family() != MaskFamily::Causal)
    throw InputError({}, 0, "docs", "--docs sets the mask (causal within each document); it cannot be combined with mask " +
                                        spec.mask.text());
}

// Layout, mask, tile, cost model and workload of a resolved scenario whose hardware, model,
// implementation and profile are set (a usp ring part reuses them with its own model and sp).
// `counted`: the solvers count this workload (a ring's); its sizes are checked first. A
// strategy without a ring times kernel calls instead (models/program/program.cpp), never these blocks.
void resolve_work(ResolvedScenario& r, bool counted) {
  const auto& spec = r.spec;
  if (r.documents) {
    r.mask = make_documents(r.documents->starts(), spec.n_seq);
  } else if (spec.mask.sparse()) {
    // Index-based sparse masks (SCFA) have one mask per attention head of the model.
    r.mask = make_sparse_mask(spec.mask, spec.n_seq, r.model.heads, spec.seed);
  } else {
    r.mask = make_mask(spec.mask, spec.n_seq);
    if (const auto* starts = r.mask->document_starts()) {
      // A docs:FILE mask is a packed batch too: its lengths feed the document layouts.
      auto d = std::make_shared<Documents>();
      d->spec = spec.mask.text();
      for (std::size_t i = 0; i < starts->size(); ++i)
        d->lengths.push_back((i + 1 < starts->size() ? (*starts)[i + 1] : spec.n_seq) - (*starts)[i]);
      r.documents = std::move(d);
    }
  }
  if (spec.layout.from_documents()) {
    if (!r.documents)
      throw InputError({}, 0, "layout",
                       "layout " + spec.layout.text() + " balances packed documents: give them with --docs (or a docs:FILE mask)");
    r.layout = std::make_unique<Layout>(document_layout(spec.layout, *r.documents, spec.sp));
  } else if (spec.layout.from_mask()) {
    std::unique_ptr<Mask> other;
    if (spec.layout_mask && *spec.layout_mask != spec.mask)
      other = spec.layout_mask->sparse() ? make_sparse_mask(*spec.layout_mask, spec.n_seq, r.model.heads, spec.seed)
                                         : make_mask(*spec.layout_mask, spec.n_seq);
    r.layout = std::make_unique<Layout>(mask_layout(spec.layout, other ? *other : *r.mask, spec.n_seq, spec.sp));
  } else {
    r.layout = std::make_unique<Layout>(Layout::make(spec.layout, spec.n_seq, spec.sp));
  }
  const std::int64_t c = r.layout->block();
  if (spec.tile) {
    r.tile = *spec.tile;
    check_tile(r.tile, c);
  } else {
    r.tile = {std::min(r.profile.default_tile.q, c), std::min(r.profile.default_tile.k, c)};
    r.tile_clamped = r.tile != r.profile.default_tile;
  }
  r.cost = std::make_unique<CostModel>(r.hardware, r.profile, r.model, spec.mp, spec.batch, r.mask->heads(),
                                       r.mask->kind());
  if (counted) check_workload_sizes(r);
  const std::int64_t kv_bytes =
      kv_block_bytes(c, r.cost->kv_heads_per_device(), r.model.head_dim, r.profile.kv_wire_bytes) * spec.batch;
  r.workload = std::make_unique<Workload>(*r.layout, *r.mask, r.tile, kv_bytes);
}

// One round of the program's ring as transfers between devices (rank j of tensor-parallel rank k
// is device j * mp + k): every position sends to the next of its ring, or inside its window and,
// for a double ring, across to the next window at the same time.
std::vector<transport::Transfer> ring_round_transfers(const Program& prog, std::int64_t sp, std::int64_t mp) {
  std::vector<transport::Transfer> ts;
  if (!prog.has_ring() || prog.rings.size <= 1) return ts;
  const auto& g = prog.rings;
  const std::int64_t w = prog.window > 0 ? prog.window : g.size;
  const std::int64_t windows = g.size / w;
  for (std::int64_t j = 0; j < sp; ++j) {
    const std::int64_t p = g.member(j);
    for (std::int64_t k = 0; k < mp; ++k) {
      if (w > 1) ts.push_back({j * mp + k, g.rank(j, (p / w) * w + (p % w + 1) % w) * mp + k, 1.0});
      if (windows > 1) ts.push_back({j * mp + k, g.rank(j, ((p / w + 1) % windows) * w + p % w) * mp + k, 1.0});
    }
  }
  return ts;
}

}  // namespace

ScenarioParts resolve_parts(const ScenarioSpec& spec, const Catalog& catalog) {
  ScenarioParts p;
  p.hardware = spec.hardware_file.empty() ? catalog.hardware(spec.hardware) : Hardware::load_file(spec.hardware_file);
  p.model = spec.model_file.empty() ? catalog.model(spec.model) : ModelConfig::load_file(spec.model_file);
  // The kernel the library calls on this GPU (TransformerEngine's backend choice, say) is what the
  // scenario times: every kernel timing reads impl.kernel_model.
  p.impl = catalog.implementation(catalog.choose_implementation(spec, p.hardware, {spec.layout}));
  p.impl.select_kernel_for(p.hardware.compute_capability);
  p.profile = catalog.profile(spec.profile, p.hardware, p.impl.name);
  p.attention = make_attention_cost(p.impl.kernel);
  return p;
}

ResolvedScenario resolve(const ScenarioSpec& spec, const Catalog& catalog) {
  check_counts(spec);
  return resolve(spec, resolve_parts(spec, catalog));
}

ResolvedScenario resolve(const ScenarioSpec& spec, const ScenarioParts& parts) { return resolve(spec, parts, nullptr); }

ResolvedScenario resolve(const ScenarioSpec& spec, const ScenarioParts& parts, std::shared_ptr<const Documents> documents) {
  check_counts(spec);
  if (documents && !spec.docs)
    throw InputError({}, 0, "docs", "packed documents given without a docs name in the scenario");
  ResolvedScenario r;
  r.spec = spec;
  r.hardware = parts.hardware;
  r.model = parts.model;
  r.model.check_parallelism(spec.mp);
  check_scenario_sizes(spec, r.model);
  r.strategy = spec.cp;
  r.impl = parts.impl;
  r.impl.check_phase(spec.phase);
  r.impl.check_offers(r.hardware.kind, spec.layout, effective_mask(spec), spec.cp);
  r.strategy.check(r.model, spec.mp, spec.sp, r.impl.protocol.kv_head_replication, r.impl.name);
  if (r.impl.kernel == "flash") (void)KernelRates::of(parts.hardware, parts.profile);  // compute units present
  r.profile = parts.profile;
  r.attention = parts.attention;
  // Sizes are checked before any mask is generated or file read.
  (void)Layout::contiguous(spec.n_seq, spec.sp);
  if (documents) {
    if (documents->total() != spec.n_seq)
      throw InputError({}, 0, "docs",
                       "document lengths sum to " + std::to_string(documents->total()) + ", expected n_seq = " +
                           std::to_string(spec.n_seq));
    r.documents = std::move(documents);
  } else if (spec.docs) {
    r.documents = std::make_shared<const Documents>(Documents::make(*spec.docs, spec.n_seq));
  }
  if (r.strategy.kind == StrategyKind::Hybrid) {
    // The ring of usp:UxR: R ranks over the whole sequence, each attending heads / U of the
    // model (KV heads replicated to one per rank when the implementation does that).
    const auto heads = r.strategy.ulysses_heads(r.model, spec.mp, spec.sp);
    auto part = std::make_shared<ResolvedScenario>();
    part->spec = spec;
    part->spec.sp = r.strategy.ring;
    part->spec.cp = Strategy{};
    part->hardware = r.hardware;
    part->model = r.model;
    part->model.heads = heads.q_heads * spec.mp;
    part->model.kv_heads = heads.kv_heads * spec.mp;
    part->impl = r.impl;
    part->strategy = Strategy{};
    part->profile = r.profile;
    part->attention = r.attention;
    part->documents = r.documents;
    resolve_work(*part, true);
    r.ring_part = std::move(part);
  }
  resolve_work(r, r.strategy.kind == StrategyKind::Ring || r.strategy.kind == StrategyKind::DoubleRing);
  r.program = std::make_shared<const Program>(build_program(r));
  // GPUs move data with NCCL (RCCL on AMD) over their machine's resources; TPU chips keep the
  // hop figures of their torus links (XLA's collectives over ICI are not NCCL's).
  if (r.hardware.kind != "tpu") {
    r.ring_transfers = ring_round_transfers(*r.program, spec.sp, spec.mp);
    r.attach_transport();
  }
  return r;
}

}  // namespace ringsim::models
