#include "models/scenario/scenario.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "models/families/attention_cost.hpp"
#include "models/workload/balanced_layout.hpp"
#include "models/workload/documents.hpp"
#include "models/program/program.hpp"
#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"
#include "models/io/limits.hpp"
#include "models/io/names.hpp"
#include "models/cost/kernel_time.hpp"
#include "models/workload/sparse_io.hpp"

namespace ringsim::models {

namespace fs = std::filesystem;

std::string Catalog::default_root() {
  if (const char* env = std::getenv("RINGSIM_DATA_DIR"); env && *env) return env;
  return RINGSIM_SOURCE_ROOT;
}

Catalog::Catalog(std::string root) : root_(std::move(root)) {}

std::vector<std::string> Catalog::names_in(const std::string& sub) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(root_) / "configs" / sub, ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> Catalog::hardware_names() const { return names_in("hardware"); }
std::vector<std::string> Catalog::model_names() const { return names_in("models"); }
std::vector<std::string> Catalog::implementation_names() const { return names_in("implementations"); }

namespace {
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

Hardware Catalog::hardware(const std::string& name) const {
  check_catalog_name(name, "hardware", "hardware");
  const auto path = fs::path(root_) / "configs" / "hardware" / (name + ".json");
  if (!fs::exists(path))
    throw InputError({}, 0, "hardware", "unknown hardware '" + name + "' (known: " + join(hardware_names()) + ")");
  auto hw = Hardware::load_file(path.string());
  // Measured ring hops, when probes of this hardware were fitted (ringsim calibrate --from-probes).
  if (const auto links = fs::path(root_) / "configs" / "links" / (name + ".json"); fs::exists(links)) {
    hw.point_to_point = PointToPoint::load_file(links.string());
    if (hw.point_to_point->hardware != name)
      throw InputError(links.string(), 0, "hardware",
                       "expected \"" + name + "\" (the file's name), got \"" + hw.point_to_point->hardware + "\"");
  }
  return hw;
}

ModelConfig Catalog::model(const std::string& name) const {
  if (name.starts_with("attn:")) return ModelConfig::attention_pseudo(name);
  check_catalog_name(name, "model", "model");
  const auto path = fs::path(root_) / "configs" / "models" / (name + ".json");
  if (!fs::exists(path))
    throw InputError({}, 0, "model",
                     "unknown model '" + name + "' (known: " + join(model_names()) + ", or attn:HQ:HKV:D)");
  return ModelConfig::load_file(path.string());
}

const std::vector<Implementation>& Catalog::implementations() const {
  const std::lock_guard lock(impls_->mutex);
  if (!impls_->all) {
    std::vector<Implementation> all;
    for (const auto& name : implementation_names()) {
      const auto path = (fs::path(root_) / "configs" / "implementations" / (name + ".json")).string();
      all.push_back(Implementation::load_file(path, (fs::path(root_) / "configs").string()));
      if (all.back().name != name)
        throw InputError(path, 0, "name", "expected \"" + name + "\" (the file's name), got \"" + all.back().name + "\"");
      // The kernel family is looked up in the cost model's registry here, where the file is known.
      const auto& families = attention_cost_families();
      if (std::find(families.begin(), families.end(), all.back().kernel) == families.end())
        throw InputError(path, 0, "kernel", "unknown kernel family '" + all.back().kernel + "' (known: " + join(families) + ")");
    }
    impls_->all = std::move(all);
  }
  return *impls_->all;
}

Implementation Catalog::implementation(const std::string& name) const {
  check_catalog_name(name, "impl", "implementation");
  for (const auto& im : implementations())
    if (im.name == name) return im;
  throw InputError({}, 0, "impl", "unknown implementation '" + name + "' (known: " + join(implementation_names()) + ")");
}

Implementation Catalog::default_implementation(const Hardware& hw, const std::string& mask, const std::string& cp,
                                               const std::vector<std::string>& layouts) const {
  check_known_mask(mask);
  for (const auto& l : layouts) check_known_layout(l);
  (void)Strategy::parse(cp);
  const Implementation* best = nullptr;
  for (const auto& im : implementations()) {
    if (!im.runs_on(hw.kind) || !im.offers_mask(mask) || !im.offers_strategy(cp)) continue;
    if (!std::all_of(layouts.begin(), layouts.end(), [&](const std::string& l) { return im.offers(hw.kind, l, mask, cp); }))
      continue;
    if (!best || im.preference < best->preference) best = &im;
  }
  if (!best)
    throw InputError({}, 0, "impl",
                     "no implementation runs " + mask_family(mask) + " attention" +
                         (layouts.empty() ? std::string() : " with layout(s) " + join(layouts)) + " and strategy " +
                         cp + " on " + hw.name + " (" + hw.kind + "); known: " + join(implementation_names()));
  return *best;
}

std::string Catalog::choose_implementation(const ScenarioSpec& spec, const Hardware& hw,
                                           const std::vector<std::string>& layouts) const {
  const auto fixed = profile_implementation(spec.profile);
  if (!spec.impl.empty() && fixed && *fixed != spec.impl)
    throw InputError({}, 0, "profile",
                     "profile '" + spec.profile + "' is for implementation " + *fixed + ", not " + spec.impl);
  if (!spec.impl.empty()) return implementation(spec.impl).name;
  if (fixed) return implementation(*fixed).name;
  return default_implementation(hw, effective_mask(spec), spec.cp, layouts).name;
}

std::optional<std::string> Catalog::profile_implementation(const std::string& name_or_path) const {
  if (name_or_path.ends_with(".json")) {
    check_path(name_or_path, "profile");
    if (!fs::exists(name_or_path)) return std::nullopt;  // profile() reports it
    const auto j = read_json_file(name_or_path);
    if (j.is_object() && j.contains("implementation") && j["implementation"].is_string()) {
      const auto impl = j["implementation"].get<std::string>();
      // An unknown implementation is the profile file's mistake: named with its file and field.
      try {
        (void)implementation(impl);
      } catch (const InputError& e) {
        throw InputError(name_or_path, 0, "implementation", e.message());
      }
      return impl;
    }
    return std::nullopt;
  }
  if (const auto slash = name_or_path.find('/'); slash != std::string::npos) {
    check_profile_name(name_or_path);
    return name_or_path.substr(0, slash);
  }
  return std::nullopt;
}

namespace {

// configs/profiles/IMPL/HARDWARE.json: an implementation's own profile for a hardware.
fs::path own_profile_path(const std::string& root, const std::string& impl, const Hardware& hw) {
  return fs::path(root) / "configs" / "profiles" / impl / (hw.name + ".json");
}

}  // namespace

Profile Catalog::profile(const std::string& name_or_path, const Hardware& hw, const std::string& impl) const {
  Profile base = Profile::spec_default(hw);
  base.implementation = impl;
  base.name = impl + "/" + hw.name + "-spec";
  const fs::path dir = fs::path(root_) / "configs" / "profiles";
  fs::path path;
  if (name_or_path.empty()) {
    path = own_profile_path(root_, impl, hw);
    if (!fs::exists(path)) return base;
  } else if (name_or_path.ends_with(".json")) {
    check_path(name_or_path, "profile");
    path = name_or_path;
  } else if (name_or_path.find('/') != std::string::npos) {
    check_profile_name(name_or_path);
    path = dir / (name_or_path + ".json");
  } else {
    check_profile_name(name_or_path);
    path = dir / impl / (name_or_path + ".json");
  }
  if (!fs::exists(path))
    throw InputError({}, 0, "profile", "no profile '" + name_or_path + "' for implementation " + impl + " (looked for " +
                                           path.string() + ")");
  Profile p = Profile::from_json(read_json_file(path.string()), path.string(), base);
  if (!p.implementation.empty() && p.implementation != impl)
    throw InputError(path.string(), 0, "implementation",
                     "profile " + p.name + " is for implementation " + p.implementation + ", not " + impl);
  p.implementation = impl;
  return p;
}

bool Catalog::has_profile(const Hardware& hw, const std::string& impl) const {
  std::error_code ec;
  return fs::is_regular_file(own_profile_path(root_, impl, hw), ec);
}

Profile Catalog::profile(const std::string& name_or_path, const Hardware& hw) const {
  const auto fixed = profile_implementation(name_or_path);
  return profile(name_or_path, hw, fixed ? *fixed : default_implementation(hw, "causal", "ring").name);
}

void ResolvedScenario::rebuild_cost() {
  cost = std::make_unique<CostModel>(hardware, profile, model, spec.mp, spec.batch, mask->heads(), mask->kind());
  if (ring_part) {
    ring_part->hardware = hardware;
    ring_part->profile = profile;
    ring_part->rebuild_cost();
  }
}

bool ResolvedScenario::ring_crosses_nodes() const noexcept {
  // mp groups are placed inside a node first; the ring leaves the node once mp x sp does.
  return spec.mp * spec.sp > hardware.devices_per_node;
}

std::string effective_mask(const ScenarioSpec& spec) { return spec.docs.empty() ? spec.mask : std::string("docs"); }

namespace {

// Before anything is read: an impossible count fails first, whatever the names.
void check_counts(const ScenarioSpec& spec) {
  if (spec.mp <= 0) throw InputError({}, 0, "mp", "tensor-parallel degree must be a positive integer");
  if (spec.sp <= 0) throw InputError({}, 0, "sp", "ring size must be a positive integer");
  if (spec.n_seq <= 0) throw InputError({}, 0, "n_seq", "sequence length must be a positive integer");
  if (spec.batch <= 0) throw InputError({}, 0, "batch", "batch must be a positive integer");
  if (!spec.docs.empty() && spec.mask != "causal")
    throw InputError({}, 0, "docs", "--docs sets the mask (causal within each document); it cannot be combined with mask " +
                                        spec.mask);
}

// Layout, mask, tile, cost model and workload of a resolved scenario whose hardware, model,
// implementation and profile are set (a usp ring part reuses them with its own model and sp).
// `counted`: the solvers count this workload (a ring's); its sizes are checked first. A
// strategy without a ring times kernel calls instead (models/program/program.cpp), never these blocks.
void resolve_work(ResolvedScenario& r, bool counted) {
  const auto& spec = r.spec;
  if (r.documents) {
    r.mask = make_documents(r.documents->starts(), spec.n_seq);
  } else if (is_sparse_mask_spec(spec.mask)) {
    // Index-based sparse masks (SCFA) have one mask per attention head of the model.
    r.mask = parse_sparse_mask(spec.mask, spec.n_seq, r.model.heads, spec.seed);
  } else {
    r.mask = parse_mask(spec.mask, spec.n_seq);
    if (const auto* starts = r.mask->document_starts()) {
      // A docs:FILE mask is a packed batch too: its lengths feed the document layouts.
      auto d = std::make_shared<Documents>();
      d->spec = spec.mask;
      for (std::size_t i = 0; i < starts->size(); ++i)
        d->lengths.push_back((i + 1 < starts->size() ? (*starts)[i + 1] : spec.n_seq) - (*starts)[i]);
      r.documents = std::move(d);
    }
  }
  if (is_document_layout_spec(spec.layout)) {
    if (!r.documents)
      throw InputError({}, 0, "layout",
                       "layout " + spec.layout + " balances packed documents: give them with --docs (or a docs:FILE mask)");
    r.layout = std::make_unique<Layout>(document_layout(spec.layout, *r.documents, spec.sp));
  } else if (is_mask_layout_spec(spec.layout)) {
    std::unique_ptr<Mask> other;
    if (!spec.layout_mask.empty() && spec.layout_mask != spec.mask)
      other = is_sparse_mask_spec(spec.layout_mask)
                  ? parse_sparse_mask(spec.layout_mask, spec.n_seq, r.model.heads, spec.seed)
                  : parse_mask(spec.layout_mask, spec.n_seq);
    r.layout = std::make_unique<Layout>(parse_mask_layout(spec.layout, other ? *other : *r.mask, spec.n_seq, spec.sp));
  } else {
    r.layout = std::make_unique<Layout>(Layout::parse(spec.layout, spec.n_seq, spec.sp));
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

}  // namespace

ScenarioParts resolve_parts(const ScenarioSpec& spec, const Catalog& catalog) {
  ScenarioParts p;
  p.hardware = spec.hardware_file.empty() ? catalog.hardware(spec.hardware) : Hardware::load_file(spec.hardware_file);
  p.model = spec.model_file.empty() ? catalog.model(spec.model) : ModelConfig::load_file(spec.model_file);
  (void)Strategy::parse(spec.cp);
  p.impl = catalog.implementation(catalog.choose_implementation(spec, p.hardware, {spec.layout}));
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
  if (documents && spec.docs.empty())
    throw InputError({}, 0, "docs", "packed documents given without a docs name in the scenario");
  ResolvedScenario r;
  r.spec = spec;
  r.hardware = parts.hardware;
  r.model = parts.model;
  r.model.check_parallelism(spec.mp);
  check_scenario_sizes(spec, r.model);
  r.strategy = Strategy::parse(spec.cp);
  r.impl = parts.impl;
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
  } else if (!spec.docs.empty()) {
    r.documents = std::make_shared<const Documents>(Documents::parse(spec.docs, spec.n_seq));
  }
  if (r.strategy.kind == StrategyKind::Hybrid) {
    // The ring of usp:UxR: R ranks over the whole sequence, each attending heads / U of the
    // model (KV heads replicated to one per rank when the implementation does that).
    const auto heads = r.strategy.ulysses_heads(r.model, spec.mp, spec.sp);
    auto part = std::make_shared<ResolvedScenario>();
    part->spec = spec;
    part->spec.sp = r.strategy.ring;
    part->spec.cp = "ring";
    part->hardware = r.hardware;
    part->model = r.model;
    part->model.heads = heads.q_heads * spec.mp;
    part->model.kv_heads = heads.kv_heads * spec.mp;
    part->impl = r.impl;
    part->strategy = Strategy::parse("ring");
    part->profile = r.profile;
    part->attention = r.attention;
    part->documents = r.documents;
    resolve_work(*part, true);
    r.ring_part = std::move(part);
  }
  resolve_work(r, r.strategy.kind == StrategyKind::Ring || r.strategy.kind == StrategyKind::DoubleRing);
  r.program = std::make_shared<const Program>(build_program(r));
  return r;
}

}  // namespace ringsim::models
