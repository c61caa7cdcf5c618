#include "models/implementations/kernel_spec.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"

namespace ringsim::models {

namespace {

TileWhen when_from(const nlohmann::json& j, const std::string& file, const std::string& at) {
  if (!j.is_object() || j.empty())
    throw InputError(file, 0, at, "expected an object of conditions (causal, compute_capability_at_least, "
                                  "compute_capability_below, smem_per_block_at_least, smem_per_sm_below)");
  JsonFields f(j, file);
  TileWhen w;
  if (const auto* c = f.find("causal")) {
    if (!c->is_boolean()) throw InputError(file, 0, at + ".causal", "expected true or false");
    w.causal = c->get<bool>();
  }
  // A value of the wrong type is named at its place in the file, as the range checks below are.
  const auto number = [&](const char* key) {
    try {
      return f.optional_number(key);
    } catch (const InputError& e) {
      throw InputError(file, 0, at + "." + key, e.message());
    }
  };
  auto capability = [&](const char* key, std::int64_t& out) {
    const auto v = number(key);
    if (!v) return;
    if (!(*v >= 1 && *v < 100)) throw InputError(file, 0, at + "." + key, "expected a compute capability in [1, 100)");
    out = static_cast<std::int64_t>(std::lround(*v * 10));
  };
  capability("compute_capability_at_least", w.compute_capability_at_least);
  capability("compute_capability_below", w.compute_capability_below);
  auto bytes = [&](const char* key, std::int64_t& out) {
    const auto v = number(key);
    if (!v) return;
    if (!(*v >= 1 && *v <= static_cast<double>(1 << 24)) || *v != std::floor(*v))
      throw InputError(file, 0, at + "." + key, "expected bytes, an integer in [1, 16777216]");
    out = static_cast<std::int64_t>(*v);
  };
  bytes("smem_per_block_at_least", w.smem_per_block_at_least);
  bytes("smem_per_sm_below", w.smem_per_sm_below);
  try {
    f.reject_unread("kernel file's tile condition");
  } catch (const InputError& e) {
    throw e.with_field(at + "." + e.field());
  }
  if (w.compute_capability_at_least && w.compute_capability_below &&
      w.compute_capability_below <= w.compute_capability_at_least)
    throw InputError(file, 0, at + ".compute_capability_below", "expected more than compute_capability_at_least");
  return w;
}

std::vector<KernelTile> tiles_from(const nlohmann::json& arr, const std::string& file, const std::string& at) {
  if (!arr.is_array() || arr.empty()) throw InputError(file, 0, at, "expected a non-empty array of tile configurations");
  std::vector<KernelTile> out;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string here = at + "[" + std::to_string(i) + "]";
    JsonFields f(arr[i], file);
    auto count = [&](const char* key, std::int64_t lo, std::int64_t hi) {
      double v = 0;
      try {
        v = f.number(key);
      } catch (const InputError& e) {
        throw InputError(file, 0, here + "." + key, e.message());
      }
      if (v < static_cast<double>(lo) || v > static_cast<double>(hi) || v != std::floor(v))
        throw InputError(file, 0, here + "." + key,
                         "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
      return static_cast<std::int64_t>(v);
    };
    KernelTile t;
    t.max_head_dim = count("max_head_dim", 1, 1024);
    t.block_m = count("block_m", 1, 4096);
    t.block_n = count("block_n", 1, 4096);
    t.warps = count("warps", 1, 32);
    t.smem_bytes = count("smem_bytes", 0, 1 << 24);
    // The warp layout is all or nothing: each atom counts warps along one side of a product, so
    // it divides the tile's warps.
    const char* atoms[] = {"atom_m_sdp", "atom_n_dkv", "atom_m_dq"};
    std::int64_t* slots[] = {&t.atom_m_sdp, &t.atom_n_dkv, &t.atom_m_dq};
    const bool any = f.find(atoms[0]) || f.find(atoms[1]) || f.find(atoms[2]);
    for (int a = 0; any && a < 3; ++a) {
      if (!f.find(atoms[a]))
        throw InputError(file, 0, here + "." + atoms[a], "expected all of atom_m_sdp, atom_n_dkv, atom_m_dq or none");
      *slots[a] = count(atoms[a], 1, t.warps);
      if (t.warps % *slots[a] != 0)
        throw InputError(file, 0, here + "." + atoms[a], "expected a divisor of warps (" + std::to_string(t.warps) + ")");
    }
    if (const auto* v = f.find("v_in_regs")) {
      if (!v->is_boolean()) throw InputError(file, 0, here + ".v_in_regs", "expected true or false");
      t.v_in_regs = v->get<bool>();
    }
    if (const auto* w = f.find("when")) t.when = when_from(*w, file, here + ".when");
    try {
      f.reject_unread("kernel file's tile");
    } catch (const InputError& e) {
      throw e.with_field(here + "." + e.field());
    }
    // A head dim's branches come before its last tile, which has none: every GPU and mask finds a
    // tile for every head dim up to the largest, as the launch code's else does.
    if (!out.empty() && out.back().when.any() && t.max_head_dim != out.back().max_head_dim)
      throw InputError(file, 0, here + ".max_head_dim",
                       "expected another tile of head dim " + std::to_string(out.back().max_head_dim) +
                           " after one with \"when\" (the last tile of a head dim has no \"when\")");
    if (!out.empty() && !out.back().when.any() && t.max_head_dim <= out.back().max_head_dim)
      throw InputError(file, 0, here + ".max_head_dim", "tile configurations must list increasing max_head_dim");
    out.push_back(t);
  }
  if (out.back().when.any())
    throw InputError(file, 0, at + "[" + std::to_string(arr.size() - 1) + "].when",
                     "the last tile of a head dim has no \"when\" (the launch code's else)");
  return out;
}

}  // namespace

std::int64_t SplitKv::splits(std::int64_t work, std::int64_t key_blocks, std::int64_t sm_count) const {
  const std::int64_t slots = slots_per_sm * sm_count;
  if (static_cast<double>(work) >= fill_fraction * static_cast<double>(slots)) return 1;
  if (key_blocks <= unsplit_key_blocks) return 1;
  const std::int64_t most = std::min({max_splits, slots, key_blocks});
  const auto per = [&](std::int64_t n) { return (key_blocks + n - 1) / n; };
  // FlashAttention-2: a split count that leaves the keys per split unchanged is not a candidate.
  const auto eligible = [&](std::int64_t n) { return !skip_equal_key_splits || n == 1 || per(n) != per(n - 1); };
  const auto efficiency = [&](std::int64_t n) {
    const double waves = static_cast<double>(work * n) / static_cast<double>(slots);
    return waves / std::ceil(waves);
  };
  double best = 0;
  for (std::int64_t n = 1; n <= most; ++n)
    if (eligible(n)) best = std::max(best, efficiency(n));
  for (std::int64_t n = 1; n <= most; ++n)
    if (eligible(n) && efficiency(n) >= efficiency_fraction * best) return n;
  return 1;
}

// scripts/component_kernel_model.py `tile_holds` restates this rule for the independent Python
// cross-check of the kernel fits: a new condition key goes into both.
bool TileWhen::holds(const TileDevice& d, bool is_causal) const noexcept {
  // An unknown figure (0) meets no condition on it: the tile of the launch code's else.
  const auto at_least = [](std::int64_t have, std::int64_t need) { return need == 0 || (have > 0 && have >= need); };
  const auto below = [](std::int64_t have, std::int64_t bound) { return bound == 0 || (have > 0 && have < bound); };
  return (!causal || *causal == is_causal) && at_least(d.compute_capability, compute_capability_at_least) &&
         below(d.compute_capability, compute_capability_below) && at_least(d.smem_per_block_bytes, smem_per_block_at_least) &&
         below(d.smem_per_sm_bytes, smem_per_sm_below);
}

const KernelTile* tile_for(const std::vector<KernelTile>& tiles, std::int64_t head_dim, bool causal,
                           const TileDevice& device) noexcept {
  for (const auto& t : tiles)
    if (head_dim <= t.max_head_dim && t.when.holds(device, causal)) return &t;
  return nullptr;
}

const KernelTile& KernelSpec::tile(bool backward, std::int64_t head_dim, bool causal, const TileDevice& device) const {
  const auto& v = backward ? bwd_tiles : fwd_tiles;
  if (const auto* t = tile_for(v, head_dim, causal, device)) return *t;
  throw InputError({}, 0, "head_dim",
                   "kernel " + name + " has no " + (backward ? "backward" : "forward") + " tile for head dim " +
                       std::to_string(head_dim) + " (it supports up to " + std::to_string(v.back().max_head_dim) + ")");
}

double KernelSpec::fwd_smem_bytes(const KernelTile& t) const noexcept {
  const auto d = static_cast<double>(t.max_head_dim);
  return d * ((fwd_smem_kv_read_bytes_per_warp * static_cast<double>(t.warps) + fwd_smem_kv_write_bytes) /
                  static_cast<double>(t.block_m) +
              fwd_smem_q_read_bytes / static_cast<double>(t.block_n));
}

double KernelSpec::bwd_smem_bytes(const KernelTile& t) const noexcept {
  if (!(bwd_smem_element_bytes > 0) || t.atom_m_sdp <= 0 || t.atom_n_dkv <= 0 || t.atom_m_dq <= 0) return 0;
  const auto d = static_cast<double>(t.max_head_dim), m = static_cast<double>(t.block_m),
             n = static_cast<double>(t.block_n), w = static_cast<double>(t.warps);
  const auto am = static_cast<double>(t.atom_m_sdp), an = static_cast<double>(t.atom_n_dkv),
             aq = static_cast<double>(t.atom_m_dq);
  // Per tile: Q and dO written (2 M d); S and dP read Q and dO W/aM times over, K and V aM times
  // over; dV and dK read P^T and dS^T W/aN times over, dO and Q aN times over; dQ reads dS W/aQ
  // times over and K aQ times over; P and dS written (2 M N).
  // Per element of the M x N tile: the query side's M x d operands over N, the key side's N x d
  // over M, the M x N operands P and dS as they are.
  const double q_side = 2.0 * d * (1.0 + w / am + an) / n;
  const double kv_side = d * (am + aq + (t.v_in_regs ? 0.0 : am)) / m;
  const double p_ds = 2.0 + 2.0 * w / an + w / aq;
  return bwd_smem_element_bytes * (q_side + kv_side + p_ds);
}

KernelSpec KernelSpec::load_file(const std::string& path) { return from_json(read_json_file(path), path); }

KernelSpec KernelSpec::load_named(const std::string& kernels_dir, const std::string& name, const std::string& file,
                                  const std::string& field) {
  // A name, not a path: it may not climb out of the kernels folder.
  if (name.empty() || name.find('/') != std::string::npos || name.find("..") != std::string::npos)
    throw InputError(file, 0, field, "expected a kernel name of configs/kernels/, got '" + name + "'");
  const auto path = (std::filesystem::path(kernels_dir) / (name + ".json")).string();
  if (!std::filesystem::exists(path)) throw InputError(file, 0, field, "no kernel '" + name + "' (looked for " + path + ")");
  return load_file(path);
}

KernelSpec KernelSpec::from_json(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object()) throw InputError(file, 0, "", "expected a JSON object describing a kernel");
  JsonFields f(j, file);
  KernelSpec k;
  auto located = [&](const char* key, auto&& get) {
    try {
      return get();
    } catch (const InputError& e) {
      throw InputError(file, 0, key, e.message());
    }
  };
  k.name = located("name", [&] { return f.string("name"); });
  k.description = located("description", [&] { return f.string("description"); });
  k.notes = located("notes", [&] { return f.string_or("notes", ""); });
  k.sources = code_sources_from_json(f.find("sources"), file, "a kernel");
  const auto* fwd = f.find("fwd_tiles");
  const auto* bwd = f.find("bwd_tiles");
  k.fwd_tiles = tiles_from(fwd ? *fwd : nlohmann::json(), file, "fwd_tiles");
  k.bwd_tiles = tiles_from(bwd ? *bwd : nlohmann::json(), file, "bwd_tiles");
  auto num = [&](const char* key, double& out, double lo, double hi) {
    const auto v = located(key, [&] { return f.optional_number(key); });
    if (!v) return;
    if (!(*v >= lo && *v <= hi))
      throw InputError(file, 0, key, "expected a value in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    out = *v;
  };
  double regs = static_cast<double>(k.registers_per_thread), fl = 1, bl = 1;
  num("registers_per_thread", regs, 16, 255);
  num("fwd_exp_per_element", k.fwd_exp_per_element, 0, 16);
  num("bwd_exp_per_element", k.bwd_exp_per_element, 0, 16);
  num("fwd_alu_per_element", k.fwd_alu_per_element, 0, 64);
  num("bwd_alu_per_element", k.bwd_alu_per_element, 0, 64);
  num("mask_alu_per_element", k.mask_alu_per_element, 0, 64);
  num("fwd_smem_kv_read_bytes_per_warp", k.fwd_smem_kv_read_bytes_per_warp, 0, 64);
  num("fwd_smem_kv_write_bytes", k.fwd_smem_kv_write_bytes, 0, 64);
  num("fwd_smem_q_read_bytes", k.fwd_smem_q_read_bytes, 0, 64);
  num("bwd_smem_element_bytes", k.bwd_smem_element_bytes, 0, 8);
  num("bwd_flops_factor", k.bwd_flops_factor, 1, 10);
  num("bwd_pre_bytes_per_q_element", k.bwd_pre_bytes_per_q_element, 0, 256);
  num("bwd_post_bytes_per_q_element", k.bwd_post_bytes_per_q_element, 0, 256);
  num("fwd_launches", fl, 1, 16);
  num("bwd_launches", bl, 1, 16);
  if (const auto* sk = f.find("fwd_split_kv")) {
    if (!sk->is_object()) throw InputError(file, 0, "fwd_split_kv", "expected an object");
    JsonFields g(*sk, file);
    SplitKv s;
    auto in = [&](const char* key, double lo, double hi, bool integer) {
      const auto v = located(key, [&] { return g.number(key); });
      if (!(v >= lo && v <= hi) || (integer && v != std::floor(v)))
        throw InputError(file, 0, std::string("fwd_split_kv.") + key,
                         "expected " + std::string(integer ? "an integer" : "a value") + " in [" + std::to_string(lo) +
                             ", " + std::to_string(hi) + "]");
      return v;
    };
    s.fill_fraction = in("fill_fraction", 0, 1, false);
    s.slots_per_sm = static_cast<std::int64_t>(in("slots_per_sm", 1, 64, true));
    s.max_splits = static_cast<std::int64_t>(in("max_splits", 1, 4096, true));
    s.efficiency_fraction = in("efficiency_fraction", 0, 1, false);
    // Optional (FlashAttention-3's rules; FlashAttention-2's defaults).
    const auto flag = [&](const char* key, bool fallback) {
      const auto* v = g.find(key);
      if (!v) return fallback;
      if (!v->is_boolean()) throw InputError(file, 0, std::string("fwd_split_kv.") + key, "expected true or false");
      return v->get<bool>();
    };
    s.pack_gqa = flag("pack_gqa", false);
    s.skip_equal_key_splits = flag("skip_equal_key_splits", true);
    if (g.find("unsplit_key_blocks")) s.unsplit_key_blocks = static_cast<std::int64_t>(in("unsplit_key_blocks", 0, 1 << 20, true));
    s.tiles = tiles_from(sk->contains("tiles") ? (*sk)["tiles"] : nlohmann::json(), file, "fwd_split_kv.tiles");
    // "block_m" (optional): the rows of every split tile, where the split kernel has one (FlashAttention-2's 64).
    if (g.find("block_m")) {
      const auto rows = static_cast<std::int64_t>(in("block_m", 1, 4096, true));
      for (const auto& t : s.tiles)
        if (t.block_m != rows)
          throw InputError(file, 0, "fwd_split_kv.tiles", "every split tile has block_m = fwd_split_kv.block_m");
    }
    k.fwd_split_kv = std::move(s);
  }
  f.reject_unread("kernel file");
  k.registers_per_thread = static_cast<std::int64_t>(regs);
  k.fwd_launches = static_cast<std::int64_t>(fl);
  k.bwd_launches = static_cast<std::int64_t>(bl);
  return k;
}

}  // namespace ringsim::models
