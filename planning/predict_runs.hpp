#pragma once
// What `predict` compares for one scenario, and the scenario's defaults: the (strategy, layout)
// rows, each with the implementation that runs it. The command line's flags (cli/scenario_options)
// and the Python module's keywords (python/core.cpp, through planning/predict_grid) both come
// here, so both front-ends compare the same rows, run by the same libraries, from the same
// defaults.
#include <cstdint>
#include <vector>

#include "models/analytic/interval.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"

namespace ringsim::planning {

// The scenario's defaults where its user names nothing (the CLI's flags' defaults, the Python
// module's keywords left out). A sweep file keeps its own (grid.hpp: n_seq 65536, contiguous and
// striped), as `ringsim sweep` always had.
inline constexpr const char* kDefaultHardware = "a100-80gb";
inline constexpr const char* kDefaultModel = "ringattn-1b";
inline constexpr std::int64_t kDefaultMp = 1;
inline constexpr std::int64_t kDefaultSp = 8;
inline constexpr std::int64_t kDefaultSeq = 131072;
inline constexpr const char* kDefaultStrategy = "ring";
// The layouts predict compares when none are named (each strategy keeps those its library offers),
// and the one layout of the commands that show one scenario (workload; Python's simulate).
inline constexpr const char* kDefaultPredictLayouts = "contiguous,striped,zigzag";
inline constexpr const char* kDefaultLayout = "contiguous";

struct RunRequest {
  models::ScenarioSpec base;                // layout and strategy left as the first requested ones
  std::vector<models::LayoutSpec> layouts;  // as requested (`ring` kept as written)
  bool layouts_given = false;               // named by the user (else the command's default list)
  std::vector<models::Strategy> cps;        // the strategies to compare
  // The training precision asked for ("bf16", "fp8", ...; empty: any): without an implementation
  // named, one whose code trains in it is chosen.
  std::string precision;
  // One implementation per strategy, in the order of `cps` (`--impl A,B` with `--cp X,Y`); empty:
  // base.impl (when named) runs every strategy, else each is chosen as expand_runs says.
  std::vector<std::string> impls;
};

// Fixes base.impl for all the requested layouts (models::Catalog::choose_implementation: one
// library for every layout, so the layouts are compared on one kernel); when the layouts were not
// given, the default list keeps only the layouts that library offers.
void choose_implementation(RunRequest& request, const models::Catalog& catalog);

// The attention kernel an implementation calls on this hardware (its kernel model's name, or its
// kernel family where it has no model): what a comparison's rows name.
[[nodiscard]] std::string kernel_on(const models::Implementation& im, const models::Hardware& hw);

// Per strategy of the request, the most preferred implementation calling attention kernel `kernel`
// (kernel_on's name) on the request's hardware that offers the strategy, the mask and the layouts,
// at no lower maturity than the strategy's default library and training in the precision asked
// for; empty where none does. What a comparison anchored on one kernel runs (the GUI's Compare
// view anchors it on the form's implementation).
[[nodiscard]] std::vector<std::string> implementations_on_kernel(const RunRequest& request, const models::Catalog& catalog,
                                                                 const std::string& kernel);

// One scenario per (strategy, layout) to compare, in that order, each with its implementation:
// the strategy's entry of `impls` when given; base.impl when named (which must offer every
// strategy); else, where one attention kernel runs every strategy, per strategy the most preferred
// implementation calling it (the rows then differ by strategy, not by kernel); else per strategy
// the one choose_implementation picks. Without layouts given, each strategy keeps the default
// layouts its implementation offers (the first only for Ulysses, whose work does not depend on
// the layout).
// With `refused`, a strategy no implementation runs here is recorded there (its error, with the
// strategy as its spec's cp) instead of thrown, so a comparison can show it as not runnable.
struct RefusedRun {
  models::ScenarioSpec spec;  // the strategy (and first layout) that was asked for
  models::InputError error;
};
[[nodiscard]] std::vector<models::ScenarioSpec> expand_runs(const RunRequest& request, const models::Catalog& catalog,
                                                            std::vector<RefusedRun>* refused = nullptr);

// The 90 % interval of a row's speedup over the comparison's first row (`value`: first step /
// this step, as predicted): one profile's fitted uncertainty carries both steps, so rows of
// another profile (another strategy's library) have none. The first row over itself is exactly 1
// (available where its profile has an uncertainty).
[[nodiscard]] models::Interval speedup_interval(models::ResolvedScenario& first, models::ResolvedScenario& row,
                                                double value);

}  // namespace ringsim::planning
