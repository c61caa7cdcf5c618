#include "planning/grid.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/catalog/resolve.hpp"
#include "models/io/checked.hpp"
#include "models/io/error.hpp"
#include "models/io/limits.hpp"
#include "models/io/names.hpp"
#include "models/implementations/implementation.hpp"
#include "models/io/json_fields.hpp"
#include "models/io/parse.hpp"
#include "models/implementations/strategy.hpp"

namespace ringsim::planning {

using models::InputError;
using nlohmann::json;

const char* to_string(Engine e) noexcept { return e == Engine::Des ? "des" : "analytic"; }

namespace {

constexpr std::int64_t kMaxPoints = std::int64_t{1} << 40;

// A value or a list of values of one axis, each read by `read`; errors name file and field.
template <class T, class Read>
std::vector<T> axis(const json& j, const std::string& file, const std::string& field, Read read) {
  std::vector<T> out;
  const auto one = [&](const json& v, std::size_t i) {
    try {
      out.push_back(read(v));
    } catch (const InputError& e) {
      throw InputError(file, 0, j.is_array() ? field + "[" + std::to_string(i) + "]" : field, e.message());
    } catch (const json::exception&) {
      throw InputError(file, 0, j.is_array() ? field + "[" + std::to_string(i) + "]" : field,
                       "unexpected value " + v.dump());
    }
  };
  if (j.is_array()) {
    if (j.empty()) throw InputError(file, 0, field, "expected at least one value");
    for (std::size_t i = 0; i < j.size(); ++i) one(j[i], i);
  } else {
    one(j, 0);
  }
  return out;
}

std::string text(const json& v) {
  if (!v.is_string()) throw InputError("expected a string, got " + v.dump());
  return v.get<std::string>();
}
// "default" and "" both mean the default.
std::string text_or_default(const json& v) {
  auto s = text(v);
  return s == "default" ? std::string() : s;
}
// A JSON integer only: a string ("8192") is a type error in a sweep file, as in every other
// config file (the command line's flags are turned into integers before they get here).
std::int64_t positive(const json& v) {
  if (v.is_number_integer() && v.get<std::int64_t>() > 0) return v.get<std::int64_t>();
  if (v.is_number_unsigned()) throw InputError("expected a positive integer below 2^63, got " + v.dump());
  throw InputError("expected a positive integer, got " + v.dump());
}
// Tokens already in a KV cache: zero or more, bounded as a plan's contexts are.
std::int64_t cached_of(const json& v) {
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > (std::int64_t{1} << 40))
    throw InputError("expected a number of cached tokens from 0 to 2^40, got " + v.dump());
  return v.get<std::int64_t>();
}
models::RunPhase phase_of(const json& v) { return models::parse_phase(text(v)); }
// Data-parallel replicas, mp and sp, and K/V buffers: bounded so that the device and byte
// counts formed from them stay exact (dp x mp x sp with each at most 2^20 fits 64 bits).
std::int64_t replicas(const json& v) {
  const auto n = positive(v);
  if (n > models::kMaxDevices)
    throw InputError("expected at most " + std::to_string(models::kMaxDevices) + ", got " + std::to_string(n));
  return n;
}
std::int64_t buffers(const json& v) {
  const auto n = positive(v);
  if (n > 1024) throw InputError("expected at most 1024 K/V buffers, got " + std::to_string(n));
  return n;
}
// A mesh of at most 2^20 tensor-parallel and 2^20 context-parallel ranks (what the models
// accept): dp x mp x sp, each at most 2^20, then fits 64 bits.
Mesh mesh_of(const json& v) {
  const auto [mp, sp] = models::parse_pair(text(v), "mesh");
  if (mp > models::kMaxDevices || sp > models::kMaxDevices)
    throw InputError("mesh " + text(v) + ": mp and sp are at most " + std::to_string(models::kMaxDevices));
  return {mp, sp};
}
std::optional<models::TileShape> tile_of(const json& v) {
  const auto s = text(v);
  if (s.empty() || s == "default") return std::nullopt;
  const auto [q, k] = models::parse_pair(s, "tile");
  return models::TileShape{q, k};
}
// Strategies, layouts and masks are parsed here, once: an error names the file and the axis.
models::Strategy strategy_of(const json& v) { return models::Strategy::parse(text(v)); }
models::LayoutSpec layout_of(const json& v) { return models::LayoutSpec::parse(text(v)); }
models::MaskSpec mask_of(const json& v) { return models::MaskSpec::parse(text(v)); }
models::Sharding zero_of(const json& v) {
  return models::parse_sharding(v.is_number_integer() ? std::to_string(v.get<std::int64_t>()) : text(v));
}
std::optional<models::Recompute> recompute_of(const json& v) {
  const auto s = text(v);
  if (s.empty() || s == "profile") return std::nullopt;
  return models::parse_recompute(s);
}

// "1f1b" or "interleaved:V", checked here (the stages and micro-batches come from their axes).
std::string schedule_of(const json& v) {
  const auto s = text(v);
  (void)models::PipelineSchedule::parse(s, 1, 1);
  return s;
}

std::string tile_text(const std::optional<models::TileShape>& t) {
  return t ? std::to_string(t->q) + "x" + std::to_string(t->k) : "default";
}

}  // namespace

std::array<std::int64_t, kAxes> SweepGrid::axis_sizes() const {
  const std::size_t sizes[] = {phase.size(),  hardware.size(),      model.size(), impl.size(),          cp.size(),
                               mesh.size(),   dp.size(),            pp.size(),    pp_schedule.size(),   n_seq.size(),
                               cached_tokens.size(), batch.size(),  micro_batches.size(), layout.size(), mask.size(),
                               tile.size(),   topology.size(),      zero.size(),  recompute.size()};
  static_assert(std::size(sizes) == kAxes);
  std::array<std::int64_t, kAxes> a{};
  for (int i = 0; i < kAxes; ++i) a[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(sizes[i]);
  return a;
}

std::int64_t SweepGrid::size() const {
  std::int64_t n = 1;
  for (const auto s : axis_sizes()) {
    if (s == 0) throw InputError({}, 0, "sweep", "every axis needs at least one value");
    if (s > kMaxPoints / n) throw InputError({}, 0, "sweep", "more than 2^40 points: split the sweep");
    n *= s;
  }
  return n;
}

SweepPoint SweepGrid::point(std::int64_t index) const {
  SweepPoint p;
  p.index = index;
  // Innermost axis varies fastest: decode from the last axis back.
  std::int64_t rest = index;
  const auto take = [&](const auto& v, Axis a) -> const auto& {
    const auto n = static_cast<std::int64_t>(v.size());
    p.axis[static_cast<std::size_t>(a)] = rest % n;
    const auto& x = v[static_cast<std::size_t>(rest % n)];
    rest /= n;
    return x;
  };
  p.recompute = take(recompute, kRecompute);
  p.zero = take(zero, kZero);
  p.topology = take(topology, kTopology);
  p.spec.tile = take(tile, kTile);
  p.spec.mask = take(mask, kMask);
  p.spec.layout = take(layout, kLayout);
  const std::int64_t micro = take(micro_batches, kMicro);
  p.spec.batch = take(batch, kBatch);
  p.cached_tokens = take(cached_tokens, kCached);
  p.spec.n_seq = take(n_seq, kNSeq);
  const auto& schedule = take(pp_schedule, kPpSchedule);
  const std::int64_t stages = take(pp, kPp);
  p.pipeline = models::PipelineSchedule::parse(schedule, stages, micro);  // validated by from_json
  p.dp = take(dp, kDp);
  const Mesh m = take(mesh, kMesh);
  p.spec.mp = m.mp;
  p.spec.sp = m.sp;
  p.spec.cp = take(cp, kCp);
  p.spec.impl = take(impl, kImpl);
  const auto& model_name = take(model, kModel);
  const auto& hw = take(hardware, kHardware);
  // A name ending in .json is a file (a user's own hardware or model description).
  (model_name.ends_with(".json") ? p.spec.model_file : p.spec.model) = model_name;
  (hw.ends_with(".json") ? p.spec.hardware_file : p.spec.hardware) = hw;
  p.phase = take(phase, kPhase);
  p.spec.profile = profile;
  p.spec.formats = formats;
  return p;
}

bool SweepGrid::has_inference() const {
  return std::any_of(phase.begin(), phase.end(), [](models::RunPhase x) { return x != models::RunPhase::Train; });
}

SweepGrid SweepGrid::from_json(const json& j, const std::string& file) {
  if (!j.is_object()) throw InputError(file, 0, "sweep", "expected a JSON object of axes");
  SweepGrid g;
  bool mp_sp = false;
  std::vector<std::int64_t> mps{1}, sps;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const json& v = it.value();
    if (k == "phase") g.phase = axis<models::RunPhase>(v, file, k, phase_of);
    else if (k == "cached_tokens") g.cached_tokens = axis<std::int64_t>(v, file, k, cached_of);
    else if (k == "hardware") g.hardware = axis<std::string>(v, file, k, text);
    else if (k == "model") g.model = axis<std::string>(v, file, k, text);
    else if (k == "impl") g.impl = axis<std::string>(v, file, k, text_or_default);
    else if (k == "cp") g.cp = axis<models::Strategy>(v, file, k, strategy_of);
    else if (k == "mesh") g.mesh = axis<Mesh>(v, file, k, mesh_of);
    else if (k == "mp") mps = axis<std::int64_t>(v, file, k, replicas), mp_sp = true;
    else if (k == "sp") sps = axis<std::int64_t>(v, file, k, replicas), mp_sp = true;
    else if (k == "dp") g.dp = axis<std::int64_t>(v, file, k, replicas);
    else if (k == "pp") g.pp = axis<std::int64_t>(v, file, k, replicas);
    else if (k == "pp_schedule") g.pp_schedule = axis<std::string>(v, file, k, schedule_of);
    else if (k == "micro_batches") g.micro_batches = axis<std::int64_t>(v, file, k, positive);
    else if (k == "n_seq") g.n_seq = axis<std::int64_t>(v, file, k, positive);
    else if (k == "batch") g.batch = axis<std::int64_t>(v, file, k, positive);
    else if (k == "layout") g.layout = axis<models::LayoutSpec>(v, file, k, layout_of);
    else if (k == "mask") g.mask = axis<models::MaskSpec>(v, file, k, mask_of);
    else if (k == "tile") g.tile = axis<std::optional<models::TileShape>>(v, file, k, tile_of);
    else if (k == "topology") g.topology = axis<std::string>(v, file, k, text_or_default);
    else if (k == "zero") g.zero = axis<models::Sharding>(v, file, k, zero_of);
    else if (k == "recompute") g.recompute = axis<std::optional<models::Recompute>>(v, file, k, recompute_of);
    else if (k == "profile") {
      if (v.is_array()) throw InputError(file, 0, k, "expected one profile for the whole sweep (not an axis)");
      g.profile = axis<std::string>(v, file, k, text_or_default).at(0);
    }
    else if (k == "global_batch") {
      if (v.is_array()) throw InputError(file, 0, k, "expected one positive integer, sequences per step (not an axis)");
      g.global_batch = axis<std::int64_t>(v, file, k, positive).at(0);
    }
    else if (k == "kv_buffers") {
      if (v.is_array()) throw InputError(file, 0, k, "expected one positive integer (not an axis)");
      g.kv_buffers = axis<std::int64_t>(v, file, k, buffers).at(0);
    } else if (k == "engine") {
      const auto e = v.is_string() ? v.get<std::string>() : std::string();
      if (e != "analytic" && e != "des") throw InputError(file, 0, k, "expected \"analytic\" or \"des\", got " + v.dump());
      g.engine = e == "des" ? Engine::Des : Engine::Analytic;
    } else if (k == "intervals") {
      if (!v.is_boolean()) throw InputError(file, 0, k, "expected true or false, got " + v.dump());
      g.intervals = v.get<bool>();
    } else if (g.formats.read_field(k, v, file)) {
    } else if (g.memory.read_field(k, v, file)) {
    } else {
      throw InputError(file, 0, k,
                       "unknown field (expected phase, hardware, model, impl, cp, mesh or mp and sp, dp, pp, pp_schedule, n_seq, "
                       "cached_tokens, batch, micro_batches, global_batch, layout, "
                       "mask, tile, topology, zero, recompute, profile, kv_buffers, engine, intervals, precision, "
                       "sequence_parallel, offload_optimizer, headroom_gib, weights, kv_cache)");
    }
  }
  if (g.global_batch > 0 && j.contains("micro_batches"))
    throw InputError(file, 0, "global_batch", "give micro_batches or global_batch, not both");
  if (mp_sp) {
    if (j.contains("mesh")) throw InputError(file, 0, "mesh", "give either mesh or mp and sp, not both");
    if (sps.empty()) throw InputError(file, 0, "sp", "mp needs sp beside it");
    g.mesh.clear();
    for (const auto mp : mps)
      for (const auto sp : sps) g.mesh.push_back({mp, sp});
  }
  try {
    (void)g.size();
  } catch (const InputError& e) {
    throw InputError(file, 0, e.field(), e.message());
  }
  return g;
}

json SweepGrid::to_json() const {
  json j;
  j["hardware"] = hardware;
  j["model"] = model;
  j["impl"] = json::array();
  for (const auto& x : impl) j["impl"].push_back(x.empty() ? "default" : x);
  j["cp"] = json::array();
  for (const auto& c : cp) j["cp"].push_back(c.text());
  j["mesh"] = json::array();
  for (const auto& m : mesh) j["mesh"].push_back(std::to_string(m.mp) + "x" + std::to_string(m.sp));
  j["dp"] = dp;
  j["n_seq"] = n_seq;
  j["batch"] = batch;
  j["layout"] = json::array();
  for (const auto& l : layout) j["layout"].push_back(l.text());
  j["mask"] = json::array();
  for (const auto& m : mask) j["mask"].push_back(m.text());
  j["tile"] = json::array();
  for (const auto& t : tile) j["tile"].push_back(tile_text(t));
  j["topology"] = json::array();
  for (const auto& t : topology) j["topology"].push_back(t.empty() ? "default" : t);
  j["zero"] = json::array();
  for (const auto z : zero) j["zero"].push_back(std::string(models::to_string(z)));
  j["recompute"] = json::array();
  for (const auto& r : recompute) j["recompute"].push_back(r ? std::string(models::to_string(*r)) : "profile");
  j["profile"] = profile.empty() ? "default" : profile;
  j["kv_buffers"] = kv_buffers;
  j["engine"] = to_string(engine);
  memory.write_fields(j);
  // Only when off: the default keeps the fingerprint of outputs written before the field existed.
  if (!intervals) j["intervals"] = false;
  // Likewise only when not the default (a training sweep without a cache).
  if (phase != std::vector<models::RunPhase>{models::RunPhase::Train}) {
    j["phase"] = json::array();
    for (const auto x : phase) j["phase"].push_back(models::to_string(x));
  }
  if (cached_tokens != std::vector<std::int64_t>{0}) j["cached_tokens"] = cached_tokens;
  if (formats.weights != models::WeightFormat::Bf16) j["weights"] = std::string(models::to_string(formats.weights));
  if (formats.cache != models::CacheFormat::Bf16) j["kv_cache"] = std::string(models::to_string(formats.cache));
  if (pp != std::vector<std::int64_t>{1}) j["pp"] = pp;
  if (pp_schedule != std::vector<std::string>{"1f1b"}) j["pp_schedule"] = pp_schedule;
  if (micro_batches != std::vector<std::int64_t>{1}) j["micro_batches"] = micro_batches;
  if (global_batch > 0) j["global_batch"] = global_batch;
  return j;
}

std::string SweepGrid::fingerprint() const {
  // FNV-1a, 64 bit, over the canonical JSON text (keys sorted by nlohmann::json).
  std::uint64_t h = 1469598103934665603ULL;
  for (const unsigned char c : to_json().dump()) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

TopologyShape parse_topology_shape(const std::string& spec) {
  const auto colon = spec.find(':');
  const auto kind = spec.substr(0, colon);
  const auto fail = [&] {
    throw InputError({}, 0, "topology",
                     "unknown topology '" + spec + "' (expected node:G, nodes:NxG, torus:AxB or torus:AxBxC)");
  };
  if (colon == std::string::npos) fail();
  std::vector<std::int64_t> n;
  for (const auto& part : models::split(spec.substr(colon + 1), 'x')) n.push_back(models::parse_positive_int(part, "topology"));
  // Device counts in checked arithmetic: a product past 2^63 is bad input, not a wrapped count;
  // past kMaxDevices, more than any mesh or simulated topology holds (a node of that many GPUs
  // would be a machine description built GPU by GPU).
  const auto product = [&] {
    std::int64_t d = 1;
    for (const auto x : n)
      if (!models::mul_fits(d, x, d))
        throw InputError({}, 0, "topology", "topology '" + spec + "' has more devices than 64-bit integers hold");
    if (d > models::kMaxDevices)
      throw InputError({}, 0, "topology",
                       "topology '" + spec + "' has " + std::to_string(d) + " devices: at most " +
                           std::to_string(models::kMaxDevices));
    return d;
  };
  if (kind == "node" && n.size() == 1) return {n[0], product()};
  if (kind == "nodes" && n.size() == 2) return {n[1], product()};
  if (kind == "torus" && (n.size() == 2 || n.size() == 3)) return {0, product()};  // ICI everywhere: no node boundary
  fail();
  return {};
}

void SweepGrid::validate(const models::Catalog& catalog, const std::string& file) const {
  const auto at = [&](const std::string& field, const auto& check) {
    try {
      check();
    } catch (const InputError& e) {
      throw InputError(file, 0, e.field().empty() ? field : e.field(), e.message());
    }
  };
  try {
    (void)size();
  } catch (const InputError& e) {
    throw InputError(file, 0, e.field(), e.message());
  }
  for (const auto& h : hardware)
    at("hardware", [&] { (void)(h.ends_with(".json") ? models::Hardware::load_file(h) : catalog.hardware(h)); });
  for (const auto& m : model)
    at("model", [&] { (void)(m.ends_with(".json") ? models::ModelConfig::load_file(m) : catalog.model(m)); });
  for (const auto& i : impl)
    if (!i.empty()) at("impl", [&] { (void)catalog.implementation(i); });
  for (const auto& t : topology)
    if (!t.empty()) at("topology", [&] { (void)parse_topology_shape(t); });
  for (const auto& m : mesh)
    if (m.mp <= 0 || m.sp <= 0) throw InputError(file, 0, "mesh", "mp and sp must be positive");
  if (kv_buffers <= 0) throw InputError(file, 0, "kv_buffers", "expected a positive integer");
  if (profile.ends_with(".json")) at("profile", [&] { (void)models::read_json_file(profile); });
  else if (!profile.empty()) at("profile", [&] { models::check_profile_name(profile); });
}

void apply_topology(models::ResolvedScenario& s, const std::string& topology) {
  if (topology.empty()) return;
  const auto shape = parse_topology_shape(topology);
  models::check_topology_hosts(topology, shape.devices, shape.devices_per_node, s.spec.mp * s.spec.sp);
  if (shape.devices_per_node > 0) place_in_nodes(s, shape.devices_per_node, topology);
}

void place_in_nodes(models::ResolvedScenario& s, std::int64_t devices_per_node, const std::string& topology) {
  if (devices_per_node == s.hardware.devices_per_node) return;
  if (s.hardware.machine.described && !s.hardware.machine.supports_gpus_per_node(devices_per_node))
    throw InputError({}, 0, "topology",
                     fmt::format("topology {} puts {} GPUs in a node; {}'s machine is a PCIe tree of {} GPUs per node, "
                                 "which cannot hold more (describe the larger machine in a hardware file)",
                                 topology, devices_per_node, s.hardware.name, s.hardware.machine.gpus));
  s.hardware.devices_per_node = devices_per_node;
  // The transport prices every transfer on the machine's nodes: rebuilt at the new node size.
  s.rebuild_cost();
}

}  // namespace ringsim::planning
