#pragma once
// Scenario builders shared by the test executables: one resolve() call from the handful of
// fields a test varies, and the cost model rebuilt after a test edits hardware or profile.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "models/catalog/resolve.hpp"

namespace ringsim::test {

// The implementations timed as one tile loop per block (kernel family "blockwise"), in the order
// the tests of that cost model want them: the paper's JAX code where it offers the scenario, then
// SCFA's kernels, then ringsim's own. GPU scenarios default to a flash-attention library
// (ring-flash-attn), whose kernel-level timing has tests of its own.
inline std::string blockwise_impl(const models::Catalog& catalog, const std::string& hardware_kind,
                                  const std::string& layout, const std::string& mask) {
  for (const char* name : {"jax-blockwise", "scfa", "ringsim-tiles"}) {
    const auto im = catalog.implementation(name);
    if (im.runs_on(hardware_kind) && im.offers_layout(models::LayoutSpec::parse(layout)) &&
        im.offers_mask(models::MaskSpec::parse(mask)))
      return name;
  }
  return "ringsim-tiles";
}

inline models::ResolvedScenario resolve_scenario(const std::string& hardware, const std::string& model, std::int64_t mp,
                                                 std::int64_t sp, std::int64_t n_seq, const std::string& layout,
                                                 const std::string& mask = "causal",
                                                 std::optional<models::TileShape> tile = std::nullopt,
                                                 std::string impl = {}) {
  const models::Catalog catalog;
  if (impl.empty()) impl = blockwise_impl(catalog, catalog.hardware(hardware).kind, layout, mask);
  models::ScenarioSpec s;
  s.impl = impl;
  s.hardware = hardware;
  s.model = model;
  s.mp = mp;
  s.sp = sp;
  s.n_seq = n_seq;
  s.layout = models::LayoutSpec::parse(layout);
  s.mask = models::MaskSpec::parse(mask);
  s.tile = tile;
  return models::resolve(s, catalog);
}

// After a test changes s.hardware or s.profile: the cost model keeps numbers, not references.
inline void rebuild_cost(models::ResolvedScenario& s) { s.rebuild_cost(); }

}  // namespace ringsim::test
