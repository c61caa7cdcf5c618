#include "models/implementations/kernel_spec.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"

namespace ringsim::models {

namespace {

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
    if (!out.empty() && t.max_head_dim <= out.back().max_head_dim)
      throw InputError(file, 0, here + ".max_head_dim", "tile configurations must list increasing max_head_dim");
    out.push_back(t);
  }
  return out;
}

}  // namespace

std::int64_t SplitKv::splits(std::int64_t work, std::int64_t key_blocks, std::int64_t sm_count) const {
  const std::int64_t slots = slots_per_sm * sm_count;
  if (static_cast<double>(work) >= fill_fraction * static_cast<double>(slots)) return 1;
  const std::int64_t most = std::min({max_splits, slots, key_blocks});
  const auto per = [&](std::int64_t n) { return (key_blocks + n - 1) / n; };
  // A split count that leaves the keys per split unchanged is not a candidate.
  const auto eligible = [&](std::int64_t n) { return n == 1 || per(n) != per(n - 1); };
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

const KernelTile* tile_for(const std::vector<KernelTile>& tiles, std::int64_t head_dim) noexcept {
  for (const auto& t : tiles)
    if (head_dim <= t.max_head_dim) return &t;
  return nullptr;
}

const KernelTile& KernelSpec::tile(bool backward, std::int64_t head_dim, bool causal) const {
  const auto& v = backward ? bwd_tiles : (causal && !fwd_causal_tiles.empty() ? fwd_causal_tiles : fwd_tiles);
  if (const auto* t = tile_for(v, head_dim)) return *t;
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
  k.fwd_tiles = tiles_from(j.contains("fwd_tiles") ? j["fwd_tiles"] : nlohmann::json(), file, "fwd_tiles");
  k.bwd_tiles = tiles_from(j.contains("bwd_tiles") ? j["bwd_tiles"] : nlohmann::json(), file, "bwd_tiles");
  if (j.contains("fwd_causal_tiles")) {
    k.fwd_causal_tiles = tiles_from(j["fwd_causal_tiles"], file, "fwd_causal_tiles");
    if (k.fwd_causal_tiles.back().max_head_dim != k.fwd_tiles.back().max_head_dim)
      throw InputError(file, 0, "fwd_causal_tiles", "expected the head dims of fwd_tiles (up to " +
                                                        std::to_string(k.fwd_tiles.back().max_head_dim) + ")");
  }
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
    s.block_m = static_cast<std::int64_t>(in("block_m", 1, 4096, true));
    s.fill_fraction = in("fill_fraction", 0, 1, false);
    s.slots_per_sm = static_cast<std::int64_t>(in("slots_per_sm", 1, 64, true));
    s.max_splits = static_cast<std::int64_t>(in("max_splits", 1, 4096, true));
    s.efficiency_fraction = in("efficiency_fraction", 0, 1, false);
    s.tiles = tiles_from(sk->contains("tiles") ? (*sk)["tiles"] : nlohmann::json(), file, "fwd_split_kv.tiles");
    for (const auto& t : s.tiles)
      if (t.block_m != s.block_m)
        throw InputError(file, 0, "fwd_split_kv.tiles", "every split tile has block_m = fwd_split_kv.block_m");
    k.fwd_split_kv = std::move(s);
  }
  k.registers_per_thread = static_cast<std::int64_t>(regs);
  k.fwd_launches = static_cast<std::int64_t>(fl);
  k.bwd_launches = static_cast<std::int64_t>(bl);
  return k;
}

}  // namespace ringsim::models
