#include "models/scenario.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "models/balanced_layout.hpp"
#include "models/error.hpp"
#include "models/json_fields.hpp"
#include "models/limits.hpp"
#include "models/names.hpp"
#include "models/sparse_io.hpp"

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
  return Hardware::load_file(path.string());
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

Profile Catalog::profile(const std::string& name_or_path, const Hardware& hw) const {
  const Profile base = Profile::spec_default(hw);
  fs::path path;
  if (name_or_path.empty()) {
    path = fs::path(root_) / "configs" / "profiles" / (hw.name + ".json");
    if (!fs::exists(path)) return base;
  } else if (name_or_path.ends_with(".json")) {
    check_path(name_or_path, "profile");
    path = name_or_path;
  } else {
    check_catalog_name(name_or_path, "profile", "profile");
    path = fs::path(root_) / "configs" / "profiles" / (name_or_path + ".json");
  }
  if (!fs::exists(path)) throw InputError({}, 0, "profile", "no profile '" + name_or_path + "' (looked for " + path.string() + ")");
  return Profile::from_json(read_json_file(path.string()), path.string(), base);
}

bool ResolvedScenario::ring_crosses_nodes() const noexcept {
  // mp groups are placed inside a node first; the ring leaves the node once mp x sp does.
  return spec.mp * spec.sp > hardware.devices_per_node;
}

ResolvedScenario resolve(const ScenarioSpec& spec, const Catalog& catalog) {
  if (spec.mp <= 0) throw InputError({}, 0, "mp", "tensor-parallel degree must be a positive integer");
  if (spec.sp <= 0) throw InputError({}, 0, "sp", "ring size must be a positive integer");
  if (spec.n_seq <= 0) throw InputError({}, 0, "n_seq", "sequence length must be a positive integer");
  if (spec.batch <= 0) throw InputError({}, 0, "batch", "batch must be a positive integer");
  ResolvedScenario r;
  r.spec = spec;
  r.hardware = spec.hardware_file.empty() ? catalog.hardware(spec.hardware) : Hardware::load_file(spec.hardware_file);
  r.model = spec.model_file.empty() ? catalog.model(spec.model) : ModelConfig::load_file(spec.model_file);
  r.model.check_parallelism(spec.mp);
  check_scenario_sizes(spec, r.model);
  r.profile = catalog.profile(spec.profile, r.hardware);
  // Layouts derived from a sparse mask (bucket-striped, bucket-rotated) are built after it; their
  // sizes are checked before it, so an impossible ring fails before a mask is generated.
  const bool from_mask = is_mask_layout_spec(spec.layout);
  if (from_mask)
    (void)Layout::contiguous(spec.n_seq, spec.sp);
  else
    r.layout = std::make_unique<Layout>(Layout::parse(spec.layout, spec.n_seq, spec.sp));
  // Index-based sparse masks (SCFA) have one mask per attention head of the model.
  r.mask = is_sparse_mask_spec(spec.mask)
               ? parse_sparse_mask(spec.mask, spec.n_seq, r.model.heads, spec.seed)
               : parse_mask(spec.mask, spec.n_seq);
  if (from_mask) {
    std::unique_ptr<Mask> other;
    if (!spec.layout_mask.empty() && spec.layout_mask != spec.mask)
      other = is_sparse_mask_spec(spec.layout_mask)
                  ? parse_sparse_mask(spec.layout_mask, spec.n_seq, r.model.heads, spec.seed)
                  : parse_mask(spec.layout_mask, spec.n_seq);
    r.layout = std::make_unique<Layout>(parse_mask_layout(spec.layout, other ? *other : *r.mask, spec.n_seq, spec.sp));
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
  check_workload_sizes(r);
  const std::int64_t kv_bytes =
      kv_block_bytes(c, r.cost->kv_heads_per_device(), r.model.head_dim, r.profile.kv_wire_bytes) * spec.batch;
  r.workload = std::make_unique<Workload>(*r.layout, *r.mask, r.tile, kv_bytes);
  return r;
}

}  // namespace ringsim::models
