#include "gui/scenario_file.hpp"

#include <nlohmann/json.hpp>

#include "io/output_file.hpp"
#include "models/io/error.hpp"
#include "models/io/input_file.hpp"
#include "models/io/json_fields.hpp"

namespace ringsim::gui {

using models::InputError;
using nlohmann::json;

GuiScenario opening_scenario() {
  GuiScenario s;
  s.spec.hardware = "h100-sxm";
  s.spec.model = "llama3-8b";
  s.spec.mp = 1;
  s.spec.sp = 8;
  s.spec.n_seq = 131072;
  s.layouts = {models::LayoutSpec{}, models::LayoutSpec::parse("zigzag")};
  return s;
}

std::string scenario_to_json(const GuiScenario& s) {
  json j;
  j["hardware"] = s.spec.hardware;
  j["model"] = s.spec.model;
  j["mp"] = s.spec.mp;
  j["sp"] = s.spec.sp;
  j["n_seq"] = s.spec.n_seq;
  j["batch"] = s.spec.batch;
  j["layouts"] = {s.layouts.at(0).text(), s.layouts.at(1).text()};
  j["mask"] = s.spec.mask.text();
  if (s.spec.tile) j["tile"] = {{"q", s.spec.tile->q}, {"k", s.spec.tile->k}};
  j["profile"] = s.spec.profile;
  if (!s.spec.impl.empty()) j["impl"] = s.spec.impl;
  j["cp"] = s.spec.cp.text();
  if (s.spec.docs) j["docs"] = s.spec.docs->text();
  return j.dump(2) + "\n";
}

GuiScenario scenario_from_json(const std::string& text, const std::string& file) {
  const json j = models::parse_json_text(text, file);
  if (!j.is_object()) throw InputError(file, 0, {}, "expected a JSON object");
  GuiScenario s;
  auto str = [&](const char* key, std::string& out) {
    if (!j.contains(key)) return;
    if (!j[key].is_string()) throw InputError(file, 0, key, "expected a string");
    out = j[key].get<std::string>();
  };
  // A string field parsed into its typed value; an error names the file and the field.
  auto typed = [&](const char* key, auto parse, auto& out) {
    std::string value;
    str(key, value);
    if (!j.contains(key)) return;
    try {
      out = parse(value);
    } catch (const InputError& e) {
      throw InputError(file, 0, key, e.message());
    }
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
  typed("mask", &models::MaskSpec::parse, s.spec.mask);
  str("profile", s.spec.profile);
  str("impl", s.spec.impl);
  typed("cp", &models::Strategy::parse, s.spec.cp);
  if (j.contains("docs") && !(j["docs"].is_string() && j["docs"].get<std::string>().empty()))
    typed("docs", &models::DocumentsSpec::parse, s.spec.docs);
  if (!j.contains("n_seq")) throw InputError(file, 0, "n_seq", "missing");
  if (j.contains("layouts")) {
    const auto& l = j["layouts"];
    if (!l.is_array() || l.size() != 2 || !l[0].is_string() || !l[1].is_string())
      throw InputError(file, 0, "layouts", "expected an array of two layout names");
    try {
      s.layouts = models::parse_layouts({l[0].get<std::string>(), l[1].get<std::string>()});
    } catch (const InputError& e) {
      throw InputError(file, 0, "layouts", e.message());
    }
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
  models::InputFile in(path, {}, "scenario file", models::kMaxConfigFileBytes);
  return scenario_from_json(in.read_all(), path);
}

void save_scenario(const GuiScenario& s, const std::string& path) {
  try {
    io::write_output(path, scenario_to_json(s));
  } catch (const io::OutputError& e) {
    throw InputError(path, 0, {}, std::string("cannot write the scenario file: ") + e.what());
  }
}

}  // namespace ringsim::gui
