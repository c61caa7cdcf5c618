#pragma once
// Scenarios saved by the GUI: one JSON object with the ScenarioSpec fields and the two layouts
// to compare. Reading throws models::InputError naming the file and field.
#include <string>
#include <vector>

#include "models/catalog/resolve.hpp"

namespace ringsim::gui {

struct GuiScenario {
  models::ScenarioSpec spec;
  std::vector<models::LayoutSpec> layouts{models::LayoutSpec{}, models::LayoutSpec::parse("striped")};
};

// What the window opens on: a scenario a user plans (Llama-3-8B on 8 x H100 at 128k tokens, the
// production ring library) comparing contiguous blocks with zigzag, where the causal imbalance and
// its fix are both visible and the "why" says what bounds each.
[[nodiscard]] GuiScenario opening_scenario();

[[nodiscard]] std::string scenario_to_json(const GuiScenario& s);
[[nodiscard]] GuiScenario scenario_from_json(const std::string& text, const std::string& file);
[[nodiscard]] GuiScenario load_scenario(const std::string& path);
// Writes to a temporary beside `path`, then renames: never a partial file.
void save_scenario(const GuiScenario& s, const std::string& path);

}  // namespace ringsim::gui
