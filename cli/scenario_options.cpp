#include "cli/scenario_options.hpp"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "models/implementations/strategy.hpp"

namespace ringsim::cli {

using models::InputError;

cxxopts::ParseResult parse_or_throw(cxxopts::Options& o, int argc, char** argv) {
  cxxopts::ParseResult r;
  try {
    r = o.parse(argc, argv);
  } catch (const cxxopts::exceptions::exception& e) {
    std::string what = e.what();
    // Flags people reach for that ringsim spells another way: say which.
    // cxxopts quotes the name with typographic quotes (U+2018/2019) or plain ones.
    for (const char* nodes : {"nodes", "node", "num-nodes"})
      for (const auto& [open, close] : {std::pair{"'", "'"}, std::pair{"\u2018", "\u2019"}})
        if (what.find(std::string(open) + nodes + close) != std::string::npos)
          what += " (nodes are part of the topology: --topology nodes:2x8 for 2 nodes of 8 devices)";
    throw InputError({}, 0, "options", what);
  }
  // No command takes positional arguments: a stray word is a mistake (a value without its
  // flag, a misspelt flag without dashes), not something to ignore.
  if (!r.unmatched().empty())
    throw InputError({}, 0, "options",
                     "unexpected argument '" + r.unmatched().front().substr(0, 80) + "' (every value follows its --flag)");
  return r;
}

bool help_requested(const cxxopts::Options& o, const cxxopts::ParseResult& r) {
  if (!r.count("help")) return false;
  std::fputs(o.help().c_str(), stdout);
  return true;
}

std::string one_of(const cxxopts::ParseResult& r, const std::string& name, std::initializer_list<const char*> choices) {
  const auto value = r[name].as<std::string>();
  std::string list;
  for (const char* c : choices) {
    if (value == c) return value;
    list += (list.empty() ? "" : ", ") + std::string(c);
  }
  throw InputError({}, 0, name, "expected one of " + list + ", got '" + value + "'");
}

void add_scenario_options(cxxopts::Options& o, const std::string& default_layouts) {
  o.add_options("scenario")
    ("hardware", "hardware name (configs/hardware/NAME.json)", cxxopts::value<std::string>()->default_value(planning::kDefaultHardware))
    ("hardware-file", "hardware JSON file outside the catalog", cxxopts::value<std::string>()->default_value(""))
    ("model", "model name (configs/models/NAME.json) or attn:HQ:HKV:D", cxxopts::value<std::string>()->default_value(planning::kDefaultModel))
    ("model-file", "model JSON file outside the catalog", cxxopts::value<std::string>()->default_value(""))
    ("mesh", "MPxSP: tensor-parallel degree x ring size", cxxopts::value<std::string>()->default_value(fmt::format("{}x{}", planning::kDefaultMp, planning::kDefaultSp)))
    ("seq", "total sequence length n_seq (tokens: 131072, 128k or 1M)", cxxopts::value<std::string>()->default_value(std::to_string(planning::kDefaultSeq)))
    ("batch", "sequences per step", cxxopts::value<std::string>()->default_value("1"))
    ("layout",
     "comma-separated: contiguous|ring|striped|zigzag|cyclic:W|perm:FILE|bucket-striped|bucket-rotated "
     "(the last two from a sparse mask's buckets: docs/analytic.md)",
     cxxopts::value<std::string>()->default_value(default_layouts))
    ("mask", "causal|full|window:W|docs:FILE|qkdrop:P|hash:NB[:zipf:S]|lsh:NB[:D]|qkfile:F|hashfile:F", cxxopts::value<std::string>()->default_value("causal"))
    ("tile", "QxK tile (default: the profile's, clamped to the block)", cxxopts::value<std::string>()->default_value(""))
    ("impl", "implementation (configs/implementations/NAME.json; default: the most preferred one for the hardware, mask and layouts); "
            "NAME@RELEASE an earlier release that calls another kernel (the file's \"releases\"; default the newest); "
            "with several --cp strategies, a comma-separated list names one per strategy, in order",
     cxxopts::value<std::string>()->default_value(""))
    ("cp", "context-parallel strategy, or a comma-separated list to compare: ring | allgather | ulysses | "
           "usp:UxR[:ring-inner] | double-ring:W (docs/strategies.md)", cxxopts::value<std::string>()->default_value(planning::kDefaultStrategy))
    ("docs", "packed documents: a lengths file (one per line or comma-separated, summing to --seq) or "
             "lognormal:MEAN:SIGMA:SEED[:Q]; sets a per-document causal mask (docs/strategies.md)",
     cxxopts::value<std::string>()->default_value(""))
    ("profile", "profile: NAME (configs/profiles/IMPL/NAME.json), IMPL/NAME or a JSON path (default: the (hardware, implementation) profile)",
     cxxopts::value<std::string>()->default_value(""))
    ("seed", "seed for generated masks", cxxopts::value<std::string>()->default_value("1"));
}

ScenarioArgs parse_scenario_args(const cxxopts::ParseResult& r) {
  ScenarioArgs a;
  auto& s = a.base;
  s.hardware = r["hardware"].as<std::string>();
  s.hardware_file = r["hardware-file"].as<std::string>();
  s.model = r["model"].as<std::string>();
  s.model_file = r["model-file"].as<std::string>();
  const auto mesh = models::parse_pair(r["mesh"].as<std::string>(), "mesh");
  s.mp = mesh.first;
  s.sp = mesh.second;
  s.n_seq = models::parse_token_count(r["seq"].as<std::string>(), "seq");
  s.batch = models::parse_positive_int(r["batch"].as<std::string>(), "batch");
  s.mask = models::MaskSpec::parse(r["mask"].as<std::string>());
  s.profile = r["profile"].as<std::string>();
  s.impl = r["impl"].as<std::string>();
  // An empty --impl is a mistake (a shell variable left unset), not a request for the default.
  if (r.count("impl") && models::trim(s.impl).empty())
    throw InputError({}, 0, "impl", "is empty: name an implementation, or leave --impl out for the default");
  for (auto& cp : models::split(r["cp"].as<std::string>(), ',')) {
    if (cp.empty()) throw InputError({}, 0, "cp", "empty strategy name in the list");
    a.cps.push_back(models::Strategy::parse(cp));
  }
  s.cp = a.cps.front();
  // `--impl A,B` pairs the implementations with the strategies, in order: a comparison of two
  // libraries' own strategies (ring-flash-attn's ring against TransformerEngine's all-to-all).
  if (const auto names = models::split(s.impl, ','); names.size() > 1) {
    for (auto& n : names) {
      if (models::trim(n).empty()) throw InputError({}, 0, "impl", "empty implementation name in the list");
      a.impls.push_back(std::string(models::trim(n)));
    }
    if (a.impls.size() != a.cps.size())
      throw InputError({}, 0, "impl",
                       fmt::format("{} implementations for {} {}: name one implementation for every strategy, "
                                   "or one per --cp entry in its order",
                                   a.impls.size(), a.cps.size(), a.cps.size() == 1 ? "strategy" : "strategies"));
    s.impl = a.impls.front();
  }
  if (const auto docs = r["docs"].as<std::string>(); !docs.empty()) s.docs = models::DocumentsSpec::parse(docs);
  const auto seed = models::parse_int(r["seed"].as<std::string>(), "seed");
  if (seed < 0) throw InputError({}, 0, "seed", "expected a non-negative integer");
  s.seed = static_cast<std::uint64_t>(seed);
  if (const auto tile = r["tile"].as<std::string>(); !tile.empty()) {
    const auto t = models::parse_pair(tile, "tile");
    s.tile = models::TileShape{t.first, t.second};
  }
  for (auto& l : models::split(r["layout"].as<std::string>(), ',')) {
    if (l.empty()) throw InputError({}, 0, "layout", "empty layout name in the list");
    a.layouts.push_back(models::LayoutSpec::parse(l));
  }
  a.layouts_given = r.count("layout") > 0;
  s.layout = a.layouts.front();
  return a;
}

ScenarioColumns::ScenarioColumns(const CsvTable& t)
    : hardware(t.require_column("hardware")),
      model(t.require_column("model")),
      mp(t.require_column("mp")),
      sp(t.require_column("sp")),
      n_seq(t.require_column("n_seq")),
      impl(t.column("impl")),
      cp(t.column("cp")),
      docs(t.column("docs")) {}

models::ScenarioSpec ScenarioColumns::spec(const CsvTable& t, std::size_t row) const {
  models::ScenarioSpec s;
  s.hardware = t.text(row, hardware);
  s.model = t.text(row, model);
  s.mp = t.positive_int(row, mp);
  s.sp = t.positive_int(row, sp);
  s.n_seq = t.positive_int(row, n_seq);
  s.impl = t.text_or(row, impl, "");
  if (cp && !t.text_or(row, cp, "").empty()) s.cp = typed_cell(t, row, *cp, &models::Strategy::parse);
  if (docs && !t.text_or(row, docs, "").empty()) s.docs = typed_cell(t, row, *docs, &models::DocumentsSpec::parse);
  return s;
}

void require_one_strategy(const ScenarioArgs& args, const std::string& command) {
  if (args.cps.size() != 1)
    throw InputError({}, 0, "cp", command + " takes one strategy (predict and simulate compare several)");
}

std::string human_seconds(double s) {
  const double a = std::fabs(s);
  if (a >= 1) return fmt::format("{:.3g} s", s);
  if (a >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  if (a >= 1e-6) return fmt::format("{:.3g} us", s * 1e6);
  if (a == 0) return "0 s";
  return fmt::format("{:.3g} ns", s * 1e9);
}

std::string human_count(double v) {
  const double a = std::fabs(v);
  if (a >= 1e12) return fmt::format("{:.3g} T", v / 1e12);
  if (a >= 1e9) return fmt::format("{:.3g} G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:.3g} M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:.3g} k", v / 1e3);
  return fmt::format("{:.4g}", v);
}

std::string human_bytes(double b) {
  const double a = std::fabs(b);
  if (a >= 1024.0 * 1024 * 1024) return fmt::format("{:.3g} GiB", b / (1024.0 * 1024 * 1024));
  if (a >= 1024.0 * 1024) return fmt::format("{:.3g} MiB", b / (1024.0 * 1024));
  if (a >= 1024.0) return fmt::format("{:.3g} KiB", b / 1024.0);
  return fmt::format("{:.0f} B", b);
}

}  // namespace ringsim::cli
