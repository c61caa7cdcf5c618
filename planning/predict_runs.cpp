#include "planning/predict_runs.hpp"

#include "models/analytic/analytic.hpp"
#include "models/implementations/strategy.hpp"

#include <algorithm>
#include <optional>

namespace ringsim::planning {

using models::InputError;

namespace {

// Whether the implementation's code trains in `precision` (empty: any).
bool trains_in(const models::Implementation& im, const std::string& precision) {
  return precision.empty() || std::find(im.precisions.begin(), im.precisions.end(), precision) != im.precisions.end();
}

// The most preferred implementation (by maturity, then preference; none less mature than
// `at_most`) that `fits` and offers strategy `cp`, the request's mask and its layouts (all given,
// or one of the defaults); empty if none. The choice a comparison's shared kernel and a precision
// asked for both make.
template <class Fits>
std::string most_preferred(const RunRequest& a, const models::Strategy& cp, const models::Catalog& catalog,
                           const models::Hardware& hw, models::Maturity at_most, Fits&& fits) {
  const auto mask = models::effective_mask(a.base);
  const auto rank = [](const models::Implementation& im) { return std::pair{static_cast<int>(im.maturity), im.preference}; };
  std::optional<models::Implementation> best;
  for (const auto& name : catalog.implementation_names()) {
    auto im = catalog.implementation(name);
    if (im.maturity > at_most || !fits(im)) continue;
    if (!im.runs_phase(a.base.phase) || !im.runs_on(hw.kind) || !im.offers_mask(mask) || !im.offers_strategy(cp)) continue;
    const auto offers = [&](const models::LayoutSpec& l) { return im.offers(hw.kind, l, mask, cp); };
    if (a.layouts_given ? !std::all_of(a.layouts.begin(), a.layouts.end(), offers)
                        : !std::any_of(a.layouts.begin(), a.layouts.end(), offers))
      continue;
    if (!best || rank(im) < rank(*best)) best = std::move(im);
  }
  return best ? best->name : std::string();
}

}  // namespace

void choose_implementation(RunRequest& a, const models::Catalog& catalog) {
  auto& s = a.base;
  const auto hw = s.hardware_file.empty() ? catalog.hardware(s.hardware) : models::Hardware::load_file(s.hardware_file);
  if (!a.precision.empty() && s.impl.empty() && s.profile.empty()) {
    // The catalog's choice, unless its code does not train in the precision asked for: then the
    // most preferred library of no lower maturity that does (none: the refusal names it).
    const auto current =
        catalog.implementation(catalog.choose_implementation(s, hw, a.layouts_given ? a.layouts : std::vector<models::LayoutSpec>{}));
    if (!trains_in(current, a.precision))
      if (const auto chosen = most_preferred(a, s.cp, catalog, hw, current.maturity,
                                             [&](const models::Implementation& im) { return trains_in(im, a.precision); });
          !chosen.empty())
        s.impl = chosen;
  }
  s.impl = catalog.choose_implementation(s, hw, a.layouts_given ? a.layouts : std::vector<models::LayoutSpec>{});
  const auto im = catalog.implementation(s.impl);
  im.check_phase(s.phase);  // a serving stack named for a training step: that, not its layouts
  if (!a.layouts_given) {
    // The default list shrinks to the layouts the implementation runs with this mask and
    // strategy (a ring library's varlen functions take only some layouts for packed documents).
    const auto mask = models::effective_mask(s);
    std::vector<models::LayoutSpec> offered;
    for (const auto& l : a.layouts)
      if (im.offers(hw.kind, l, mask, s.cp)) offered.push_back(l);
    // None: the implementation's own reason for the first default (hardware, mask, strategy)
    // when it has one, else that no default layout runs.
    if (offered.empty()) {
      im.check_offers(hw.kind, a.layouts.front(), mask, s.cp);
      throw InputError({}, 0, "layout", "implementation " + im.name + " offers none of the default layouts; name the layouts to compare");
    }
    a.layouts = std::move(offered);
  }
  s.layout = a.layouts.front();
}

std::string kernel_on(const models::Implementation& im, const models::Hardware& hw) {
  const auto* k = im.kernel_for(hw.compute_capability);
  return k ? k->name : im.kernel;
}

namespace {

// Per strategy, the most preferred implementation calling `kernel` that offers the strategy, the
// mask and the layouts, at no lower maturity than that strategy's default (`defaults`) and training
// in the precision asked for; empty where none does.
std::vector<std::string> on_kernel(const RunRequest& request, const models::Catalog& catalog, const models::Hardware& hw,
                                   const std::vector<models::Maturity>& defaults, const std::string& kernel) {
  std::vector<std::string> chosen(request.cps.size());
  for (std::size_t i = 0; i < request.cps.size(); ++i)
    chosen[i] = most_preferred(request, request.cps[i], catalog, hw, defaults[i], [&](const models::Implementation& im) {
      return kernel_on(im, hw) == kernel && trains_in(im, request.precision);
    });
  return chosen;
}

models::Hardware request_hardware(const RunRequest& request, const models::Catalog& catalog) {
  const auto& base = request.base;
  return base.hardware_file.empty() ? catalog.hardware(base.hardware) : models::Hardware::load_file(base.hardware_file);
}

// For a comparison of strategies with no implementation named: one attention kernel for every
// row when one can run them all, so the rows differ by strategy and not by kernel. The kernels
// tried: each strategy's own default's, in the request's order; per strategy, the most preferred
// implementation calling that kernel that offers the strategy, the mask and the layouts, at no
// lower maturity than its default. Empty: no kernel runs them all (each keeps its default) or
// they already share one.
std::vector<std::string> shared_kernel_choice(const RunRequest& request, const models::Catalog& catalog) {
  const auto& base = request.base;
  if (!base.impl.empty() || !request.impls.empty() || !base.profile.empty() || request.cps.size() < 2) return {};
  const auto hw = request_hardware(request, catalog);
  std::vector<std::string> kernels;
  std::vector<models::Maturity> maturity;
  for (const auto& cp : request.cps) {
    RunRequest one = request;
    one.base.cp = cp;
    try {
      choose_implementation(one, catalog);
    } catch (const InputError&) {
      return {};  // a strategy nothing runs here: shown as such, the others keep their defaults
    }
    const auto d = catalog.implementation(one.base.impl);
    maturity.push_back(d.maturity);
    if (const auto k = kernel_on(d, hw); std::find(kernels.begin(), kernels.end(), k) == kernels.end()) kernels.push_back(k);
  }
  if (kernels.size() == 1) return {};
  for (const auto& kernel : kernels) {
    auto chosen = on_kernel(request, catalog, hw, maturity, kernel);
    if (std::none_of(chosen.begin(), chosen.end(), [](const std::string& n) { return n.empty(); })) return chosen;
  }
  return {};
}

}  // namespace

std::vector<std::string> implementations_on_kernel(const RunRequest& request, const models::Catalog& catalog,
                                                   const std::string& kernel) {
  const auto hw = request_hardware(request, catalog);
  std::vector<models::Maturity> maturity;
  for (const auto& cp : request.cps) {
    RunRequest one = request;
    one.base.cp = cp;
    one.base.impl.clear();
    one.impls.clear();
    try {
      choose_implementation(one, catalog);
      maturity.push_back(catalog.implementation(one.base.impl).maturity);
    } catch (const InputError&) {
      maturity.push_back(models::Maturity::Production);  // nothing runs it by default: production libraries only
    }
  }
  return on_kernel(request, catalog, hw, maturity, kernel);
}

std::vector<models::ScenarioSpec> expand_runs(const RunRequest& request, const models::Catalog& catalog,
                                              std::vector<RefusedRun>* refused) {
  std::vector<models::ScenarioSpec> runs;
  const auto shared = shared_kernel_choice(request, catalog);
  for (std::size_t c = 0; c < request.cps.size(); ++c) {
    const auto& cp = request.cps[c];
    RunRequest one = request;
    one.base.cp = cp;
    if (!request.impls.empty()) one.base.impl = request.impls.at(c);
    else if (!shared.empty()) one.base.impl = shared[c];
    try {
      choose_implementation(one, catalog);
    } catch (const InputError& e) {
      if (!refused) throw;
      auto spec = one.base;
      spec.layout = one.layouts.front();
      refused->push_back({spec, e});
      continue;
    }
    std::size_t count = one.layouts.size();
    if (cp.kind == models::StrategyKind::Ulysses && !request.layouts_given) count = 1;
    for (std::size_t i = 0; i < count; ++i) {
      auto spec = one.base;
      spec.layout = one.layouts[i];
      runs.push_back(std::move(spec));
    }
  }
  return runs;
}

namespace {

// The analytic step of the scenario under another profile.
double analytic_step(models::ResolvedScenario& s, const models::Profile& p) {
  return models::under_profile(s, p, [](const models::ResolvedScenario& r) { return models::predict(r).step_s; });
}

}  // namespace

models::Interval speedup_interval(models::ResolvedScenario& first, models::ResolvedScenario& row, double value) {
  if (&first == &row) return {1.0, 1.0, !first.profile.uncertainty.empty()};
  if (row.profile.name != first.profile.name) return {};
  const double analytic = models::predict(first).step_s / models::predict(row).step_s;
  auto iv = models::prediction_interval(row.profile, "ratio", analytic, [&](const models::Profile& p) {
    return analytic_step(first, p) / analytic_step(row, p);
  });
  // The simulator's or the trained step moves the ratio; its relative width stays.
  if (iv.available) {
    iv.lo *= value / analytic;
    iv.hi *= value / analytic;
  }
  return iv;
}

}  // namespace ringsim::planning
