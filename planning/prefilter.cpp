#include "planning/prefilter.hpp"

#include <map>
#include <optional>

#include "models/error.hpp"
#include "models/implementation.hpp"
#include "models/strategy.hpp"

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

RunnablePoints runnable_points(const SweepGrid& grid, const models::Catalog& catalog) {
  const auto sizes = grid.axis_sizes();
  std::int64_t inner = 1;
  for (int a = kMesh + 1; a < kAxes; ++a) inner *= sizes[static_cast<std::size_t>(a)];
  std::int64_t outer = 1;
  for (int a = 0; a <= kMesh; ++a) outer *= sizes[static_cast<std::size_t>(a)];

  std::map<std::string, std::optional<models::Hardware>> hardware;
  std::map<std::string, std::optional<models::ModelConfig>> models;
  std::map<std::string, std::optional<models::Implementation>> impls;
  std::map<std::string, std::optional<models::Strategy>> strategies;
  RunnablePoints out;
  for (std::int64_t o = 0; o < outer; ++o) {
    // Mixed radix, the mesh fastest (grid.point's order).
    std::int64_t rest = o;
    const auto take = [&](Axis a) {
      const std::int64_t n = sizes[static_cast<std::size_t>(a)];
      const auto i = static_cast<std::size_t>(rest % n);
      rest /= n;
      return i;
    };
    const Mesh mesh = grid.mesh[take(kMesh)];
    const std::string& cp = grid.cp[take(kCp)];
    const std::string& impl = grid.impl[take(kImpl)];
    const std::string& model_name = grid.model[take(kModel)];
    const std::string& hw_name = grid.hardware[take(kHardware)];

    bool runs = true;
    const auto& hw = cached(hardware, hw_name, [&](const std::string& n) {
      return n.ends_with(".json") ? models::Hardware::load_file(n) : catalog.hardware(n);
    });
    const auto& model = cached(models, model_name, [&](const std::string& n) {
      return n.ends_with(".json") ? models::ModelConfig::load_file(n) : catalog.model(n);
    });
    const auto& strategy = cached(strategies, cp, [](const std::string& n) { return models::Strategy::parse(n); });
    if (hw && model && strategy) {
      try {
        model->check_parallelism(mesh.mp);
        bool replication = true;  // the catalog's choice might replicate KV heads
        if (!impl.empty()) {
          const auto& im = cached(impls, impl, [&](const std::string& n) { return catalog.implementation(n); });
          if (im) {
            if (!im->runs_on(hw->kind) || !im->offers_strategy(cp)) runs = false;
            replication = im->protocol.kv_head_replication;
          }
        }
        if (runs) strategy->check(*model, mesh.mp, mesh.sp, replication, impl);
      } catch (const models::InputError&) {
        runs = false;
      }
    }
    if (!runs) continue;
    if (!out.ranges.empty() && out.ranges.back().first + out.ranges.back().count == o * inner)
      out.ranges.back().count += inner;
    else
      out.ranges.push_back({o * inner, inner});
    out.points += inner;
  }
  out.excluded = outer * inner - out.points;
  return out;
}

}  // namespace ringsim::planning
