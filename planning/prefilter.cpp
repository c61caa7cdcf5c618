#include "planning/prefilter.hpp"

#include <array>
#include <map>
#include <optional>

#include "models/catalog/resolve.hpp"
#include "models/families/attention_cost.hpp"
#include "models/io/error.hpp"
#include "models/implementations/implementation.hpp"
#include "models/implementations/strategy.hpp"

namespace ringsim::planning {

namespace {

// A name's object, read once; nullopt when it cannot be read (the evaluator reports that).
template <class T, class Load>
const std::optional<T>& cached(std::map<std::string, std::optional<T>>& cache, const std::string& name, Load load) {
  auto it = cache.find(name);
  if (it == cache.end()) {
    std::optional<T> v;
    try {
      v = load(name);
    } catch (const models::InputError&) {
    }
    it = cache.emplace(name, std::move(v)).first;
  }
  return it->second;
}

}  // namespace

RunnablePoints runnable_points(const SweepGrid& grid, const models::Catalog& catalog, std::int64_t max_devices,
                               bool own_tile_once) {
  const auto sizes = grid.axis_sizes();
  const auto size = [&](Axis a) { return sizes[static_cast<std::size_t>(a)]; };
  // Outer: phase .. mesh; middle: dp .. mask; inner: tile .. recomputation (never checked).
  std::int64_t inner = 1, middle = 1, outer = 1;
  for (int a = kTile; a < kAxes; ++a) inner *= size(static_cast<Axis>(a));
  for (int a = kDp; a < kTile; ++a) middle *= size(static_cast<Axis>(a));
  for (int a = 0; a <= kMesh; ++a) outer *= size(static_cast<Axis>(a));

  std::map<std::string, std::optional<models::Hardware>> hardware;
  std::map<std::string, std::optional<models::ModelConfig>> models;
  std::map<std::string, std::optional<models::Implementation>> impls;
  // Keyed by the kernel family's name: libraries sharing a kernel share its cost model.
  std::map<std::string, std::optional<std::shared_ptr<const models::AttentionCost>>> families;
  // The tile axis's own-tile entry (no tile asked), whose block of inner points is what a kernel
  // that picks its own tiles is timed at; -1 when the grid asks tiles only.
  std::int64_t own_tile = -1;
  if (own_tile_once)
    for (std::size_t t = 0; t < grid.tile.size(); ++t)
      if (!grid.tile[t]) own_tile = static_cast<std::int64_t>(t);
  const std::int64_t per_tile = inner / std::max<std::int64_t>(1, size(kTile));
  RunnablePoints out;
  const auto keep = [&](std::int64_t first, std::int64_t count) {
    if (!out.ranges.empty() && out.ranges.back().first + out.ranges.back().count == first)
      out.ranges.back().count += count;
    else
      out.ranges.push_back({first, count});
    out.points += count;
  };
  for (std::int64_t o = 0; o < outer; ++o) {
    // Mixed radix, the last axis fastest (grid.point's order).
    std::int64_t rest = o;
    const auto take = [&](Axis a) {
      const auto i = static_cast<std::size_t>(rest % size(a));
      rest /= size(a);
      return i;
    };
    const Mesh mesh = grid.mesh[take(kMesh)];
    const models::Strategy& strategy = grid.cp[take(kCp)];
    const std::string& impl = grid.impl[take(kImpl)];
    const std::string& model_name = grid.model[take(kModel)];
    const std::string& hw_name = grid.hardware[take(kHardware)];
    // Decode runs on the first layout the implementation offers (models::inference_spec: the new
    // token attends to the whole cache wherever its shards sit), so the layout axis rules none out.
    const models::RunPhase phase = grid.phase[take(kPhase)];
    const bool decode = phase == models::RunPhase::Decode;

    const auto& hw = cached(hardware, hw_name, [&](const std::string& n) {
      return n.ends_with(".json") ? models::Hardware::load_file(n) : catalog.hardware(n);
    });
    const auto& model = cached(models, model_name, [&](const std::string& n) {
      return n.ends_with(".json") ? models::ModelConfig::load_file(n) : catalog.model(n);
    });
    const models::Implementation* im = nullptr;
    if (!impl.empty()) {
      const auto& found = cached(impls, impl, [&](const std::string& n) { return catalog.implementation(n); });
      if (found) im = &*found;
    }
    if (!hw || !model) {  // the evaluator reports what cannot be read
      keep(o * middle * inner, middle * inner);
      continue;
    }
    bool runs = true;
    try {
      model->check_parallelism(mesh.mp);
      if (im && (!im->runs_on(hw->kind) || !im->offers_strategy(strategy))) runs = false;
      // With the catalog's choice of implementation, one that replicates KV heads may be chosen.
      if (runs) strategy.check(*model, mesh.mp, mesh.sp, im ? im->protocol.kv_head_replication : true, impl);
    } catch (const models::InputError&) {
      runs = false;
    }
    if (!runs) continue;
    const models::AttentionCost* family = nullptr;
    if (im && own_tile >= 0 && size(kTile) > 1) {
      const auto& f = cached(families, im->kernel, models::make_attention_cost);
      if (f) family = f->get();
    }
    // The middle axes: a named implementation offers the layout and the mask; n_seq splits over sp.
    for (std::int64_t m = 0; m < middle; ++m) {
      std::int64_t r = m;
      const auto pick = [&](Axis a) {
        const auto i = static_cast<std::size_t>(r % size(a));
        r /= size(a);
        return i;
      };
      // Every middle axis decoded, last first (grid.point's order), whether checked or not.
      std::array<std::size_t, kAxes> at{};
      for (int a = kTile - 1; a >= kDp; --a) at[static_cast<std::size_t>(a)] = pick(static_cast<Axis>(a));
      const models::MaskSpec& mask = grid.mask[at[kMask]];
      const models::LayoutSpec& layout = grid.layout[at[kLayout]];
      const std::int64_t n_seq = grid.n_seq[at[kNSeq]];
      bool ok = n_seq % mesh.sp == 0;
      // Each count is at most 2^20 (pp 2^16): the product fits 64 bits.
      if (ok && max_devices > 0) ok = grid.pp[at[kPp]] * grid.dp[at[kDp]] * mesh.mp * mesh.sp <= max_devices;
      if (ok && im) ok = (decode || im->offers_layout(layout)) && im->offers_mask(mask);
      // A global batch splits into each replica's micro-batches of `batch` sequences, or the point
      // is refused unevaluated (the evaluator's rule: Evaluator::evaluate).
      if (ok && grid.global_batch > 0 && phase == models::RunPhase::Train)
        ok = grid.splits_global_batch(grid.dp[at[kDp]], grid.batch[at[kBatch]]);
      if (!ok) continue;
      // The tile axis is the slowest of the inner ones: each tile's points are one block.
      if (family && family->kernel_picks_tiles(*im, strategy, mask.family_name(), layout.family_name())) {
        keep((o * middle + m) * inner + own_tile * per_tile, per_tile);
        out.same_step += inner - per_tile;
      } else {
        keep((o * middle + m) * inner, inner);
      }
    }
  }
  out.excluded = outer * middle * inner - out.points - out.same_step;
  return out;
}

}  // namespace ringsim::planning
