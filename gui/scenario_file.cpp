#include "gui/scenario_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/error.hpp"

namespace ringsim::gui {

using models::InputError;
using nlohmann::json;

std::string scenario_to_json(const GuiScenario& s) {
  json j;
  j["hardware"] = s.spec.hardware;
  j["model"] = s.spec.model;
  j["mp"] = s.spec.mp;
  j["sp"] = s.spec.sp;
  j["n_seq"] = s.spec.n_seq;
  j["batch"] = s.spec.batch;
  j["layouts"] = s.layouts;
  j["mask"] = s.spec.mask;
  if (s.spec.tile) j["tile"] = {{"q", s.spec.tile->q}, {"k", s.spec.tile->k}};
  j["profile"] = s.spec.profile;
  if (!s.spec.impl.empty()) j["impl"] = s.spec.impl;
  j["cp"] = s.spec.cp;
  if (!s.spec.docs.empty()) j["docs"] = s.spec.docs;
  return j.dump(2) + "\n";
}

GuiScenario scenario_from_json(const std::string& text, const std::string& file) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(file, 0, {}, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object()) throw InputError(file, 0, {}, "expected a JSON object");
  GuiScenario s;
  auto str = [&](const char* key, std::string& out) {
    if (!j.contains(key)) return;
    if (!j[key].is_string()) throw InputError(file, 0, key, "expected a string");
    out = j[key].get<std::string>();
  };
  auto integer = [&](const char* key, std::int64_t& out) {
    if (!j.contains(key)) return;
    if (!j[key].is_number_integer()) throw InputError(file, 0, key, "expected an integer");
    out = j[key].get<std::int64_t>();
  };
  str("hardware", s.spec.hardware);
  str("model", s.spec.model);
  integer("mp", s.spec.mp);
  integer("sp", s.spec.sp);
  integer("n_seq", s.spec.n_seq);
  integer("batch", s.spec.batch);
  str("mask", s.spec.mask);
  str("profile", s.spec.profile);
  str("impl", s.spec.impl);
  str("cp", s.spec.cp);
  str("docs", s.spec.docs);
  if (!j.contains("n_seq")) throw InputError(file, 0, "n_seq", "missing");
  if (j.contains("layouts")) {
    const auto& l = j["layouts"];
    if (!l.is_array() || l.size() != 2 || !l[0].is_string() || !l[1].is_string())
      throw InputError(file, 0, "layouts", "expected an array of two layout names");
    s.layouts = {l[0].get<std::string>(), l[1].get<std::string>()};
  }
  if (j.contains("tile") && !j["tile"].is_null()) {
    const auto& t = j["tile"];
    if (!t.is_object() || !t.contains("q") || !t.contains("k") || !t["q"].is_number_integer() ||
        !t["k"].is_number_integer())
      throw InputError(file, 0, "tile", "expected {\"q\": int, \"k\": int}");
    s.spec.tile = models::TileShape{t["q"].get<std::int64_t>(), t["k"].get<std::int64_t>()};
  }
  return s;
}

GuiScenario load_scenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, {}, "cannot open the scenario file");
  std::stringstream ss;
  ss << in.rdbuf();
  return scenario_from_json(ss.str(), path);
}

void save_scenario(const GuiScenario& s, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw InputError(path, 0, {}, "cannot write the scenario file");
    out << scenario_to_json(s);
    if (!out.flush()) throw InputError(path, 0, {}, "cannot write the scenario file");
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace ringsim::gui
