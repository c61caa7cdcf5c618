#include "models/cost/cost.hpp"
#include "models/transport/nccl_ctas.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "models/cost/profile_params.hpp"
#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"

namespace ringsim::models {

Profile Profile::spec_default(const Hardware& hw) {
  Profile p;
  p.name = hw.name + "-spec";
  p.hardware = hw.name;
  p.provenance.calibrated = false;
  p.provenance.method = "spec defaults";
  p.provenance.notes =
      "uncalibrated: efficiencies are generic assumptions (matmul 60%, attention tiles 50%, links 80% of "
      "the published peaks), perfect overlap, no fixed overheads";
  // Precision of attention is an implementation choice; bf16 is what fused kernels use.
  p.attention_precision = hw.peak_bf16_per_s ? Precision::BF16 : Precision::FP32;
  p.matmul_precision = hw.peak_bf16_per_s ? Precision::BF16 : Precision::FP32;
  p.default_tile = hw.kind == "tpu" ? TileShape{512, 512} : TileShape{128, 128};
  return p;
}

double* Profile::parameter(std::string_view key) noexcept {
  const auto* p = find_profile_parameter(key);
  return p ? &(this->*(p->field)) : nullptr;
}

bool Profile::reads(std::string_view key) const noexcept {
  const auto* p = find_profile_parameter(key);
  if (!p) return false;
  if (kernel_family.empty()) return true;
  return p->common || std::find(family_parameters.begin(), family_parameters.end(), key) != family_parameters.end();
}

double Profile::link_bytes_per_s(double link) const noexcept { return link * link_efficiency; }

double Profile::link_latency(double link) const noexcept { return link_latency_s.value_or(link); }

double Profile::p2p_limit(double bytes_per_s) const noexcept {
  return p2p_bandwidth_bytes_per_s > 0 ? std::min(bytes_per_s, p2p_bandwidth_bytes_per_s) : bytes_per_s;
}

double Profile::p2p_bytes_per_s(double link) const noexcept { return p2p_limit(link_bytes_per_s(link)); }

double Profile::p2p_latency(double link) const noexcept { return link_latency(link) + p2p_latency_s; }

Profile::Hop Profile::ring_hop(const Hardware& hw, bool inter_node) const noexcept {
  if (hw.point_to_point) {
    if (const auto& m = hw.point_to_point->hop(inter_node)) {
      return {p2p_limit(m->bandwidth_bytes_per_s), m->latency_s + p2p_latency_s, true};
    }
  }
  return inter_node ? Hop{p2p_bytes_per_s(hw.inter_node_bandwidth_bytes_per_s), p2p_latency(hw.inter_node_latency_s), false}
                    : Hop{p2p_bytes_per_s(hw.intra_link_bandwidth_bytes_per_s), p2p_latency(hw.intra_link_latency_s), false};
}

const double* Profile::parameter(std::string_view key) const noexcept {
  return const_cast<Profile*>(this)->parameter(key);
}

Profile Profile::from_json(const nlohmann::json& j, const std::string& file, Profile p) {
  JsonFields f(j, file);
  p.name = f.string("name");
  p.hardware = f.string_or("hardware", p.hardware);
  p.implementation = f.string_or("implementation", p.implementation);
  p.version = f.integer_or("version", 1, std::int64_t{1} << 20, p.version);
  if (f.find("provenance")) {
    p.provenance.calibrated = f.boolean_or("provenance.calibrated", false);
    p.provenance.method = f.string_or("provenance.method", "");
    p.provenance.fitted_from = f.string_or("provenance.fitted_from", "");
    p.provenance.date = f.string_or("provenance.date", "");
    p.provenance.notes = f.string_or("provenance.notes", "");
    p.provenance.residual = f.optional_number("provenance.residual");
  }
  auto prec = [&](const char* key, Precision& out) {
    if (!f.find(key)) return;
    try {
      out = parse_precision(f.string(key));
    } catch (const InputError& e) {
      throw InputError(file, 0, key, e.message());
    }
  };
  prec("attention_precision", p.attention_precision);
  prec("matmul_precision", p.matmul_precision);
  for (const auto& param : profile_parameters())
    if (auto v = f.optional_number(std::string(param.name))) p.*(param.field) = *v;
  if (const auto* v = f.find("link_latency_s"); v && !v->is_null()) p.link_latency_s = f.number("link_latency_s");
  p.kv_wire_bytes = f.integer_or("kv_wire_bytes", 1, 8, p.kv_wire_bytes);
  p.dkv_wire_bytes = f.integer_or("dkv_wire_bytes", 1, 8, p.dkv_wire_bytes);
  p.recompute = f.boolean_or("recompute", p.recompute);
  if (const auto* u = f.find("uncertainty")) {
    if (!u->is_object()) throw InputError(file, 0, "uncertainty", "expected an object");
    Profile::Uncertainty un;
    if (const auto* names_field = f.find("uncertainty.parameters")) {
      const auto& names = *names_field;
      if (!names.is_array()) throw InputError(file, 0, "uncertainty.parameters", "expected an array of names");
      for (const auto& n : names) {
        if (!n.is_string()) throw InputError(file, 0, "uncertainty.parameters", "expected an array of names");
        un.parameters.push_back(n.get<std::string>());
      }
      const auto* cov = f.find("uncertainty.covariance");
      if (!cov || !cov->is_array() || cov->size() != un.parameters.size())
        throw InputError(file, 0, "uncertainty.covariance", "expected a square matrix, one row per parameter");
      for (const auto& row : *cov) {
        if (!row.is_array() || row.size() != un.parameters.size())
          throw InputError(file, 0, "uncertainty.covariance", "expected a square matrix, one row per parameter");
        std::vector<double> r;
        for (const auto& x : row) {
          if (!x.is_number() || !std::isfinite(x.get<double>()))
            throw InputError(file, 0, "uncertainty.covariance", "expected finite numbers");
          r.push_back(x.get<double>());
        }
        un.covariance.push_back(std::move(r));
      }
      for (std::size_t i = 0; i < un.covariance.size(); ++i)
        if (un.covariance[i][i] < 0) throw InputError(file, 0, "uncertainty.covariance", "negative variance");
    }
    if (const auto* r = f.find("uncertainty.residual_log_sd")) {
      if (!r->is_object()) throw InputError(file, 0, "uncertainty.residual_log_sd", "expected {quantity: sd}");
      for (const auto& [q, v] : r->items()) {
        if (q != "time" && q != "ratio" && q != "time_derived" && q != "ratio_derived" && q != "ratio_mesh")
          throw InputError(file, 0, "uncertainty.residual_log_sd." + q,
                           "expected the quantity time, ratio, time_derived, ratio_derived or ratio_mesh");
        if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 10))
          throw InputError(file, 0, "uncertainty.residual_log_sd." + q, "expected a value in [0, 10]");
        un.residual_log_sd[q] = v.get<double>();
      }
    }
    if (auto v = f.optional_number("uncertainty.held_out_points")) un.held_out_points = static_cast<std::int64_t>(*v);
    p.uncertainty = std::move(un);
  }
  if (f.find("default_tile")) {
    p.default_tile.q = f.integer("default_tile.q", 1, std::int64_t{1} << 20);
    p.default_tile.k = f.integer("default_tile.k", 1, std::int64_t{1} << 20);
  }
  f.reject_unread("profile file");
  p.validate(file);
  return p;
}

void Profile::validate(const std::string& file) const {
  auto in = [&](const char* key, double v, double lo, double hi) {
    if (!(v >= lo && v <= hi))
      throw InputError(file, 0, key, "expected a value in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                                          std::to_string(v));
  };
  in("matmul_efficiency", matmul_efficiency, 1e-3, 1);
  in("attention_efficiency", attention_efficiency, 1e-3, 1);
  in("memory_efficiency", memory_efficiency, 1e-3, 1);
  in("stream_read_efficiency", stream_read_efficiency, 1e-3, 1);
  in("link_efficiency", link_efficiency, 1e-3, 1);
  in("p2p_bandwidth_bytes_per_s", p2p_bandwidth_bytes_per_s, 0, 1e14);
  in("p2p_latency_s", p2p_latency_s, 0, 0.1);
  in("overlap", overlap, 0, 1);
  in("tile_overhead_s", tile_overhead_s, 0, 1);
  in("round_overhead_s", round_overhead_s, 0, 1);
  in("masked_tile_penalty", masked_tile_penalty, 0, 10);
  in("skipped_tile_cost", skipped_tile_cost, 0, 1);
  in("masked_tile_s", masked_tile_s, 0, 1);
  in("skipped_tile_s", skipped_tile_s, 0, 1);
  in("round_bytes_per_element", round_bytes_per_element, 0, 1e4);
  in("attention_bwd_efficiency", attention_bwd_efficiency, 0, 1);
  in("cta_overhead_s", cta_overhead_s, 0, 1);
  in("kernel_launch_s", kernel_launch_s, 0, 1);
  in("solo_cta_gain", solo_cta_gain, 0, 64);
  in("shared_memory_efficiency", shared_memory_efficiency, 0, 1);
  in("bwd_shared_memory_efficiency", bwd_shared_memory_efficiency, 0, 1);
  in("softmax_overlap", softmax_overlap, 0, 1);
  in("host_step_s", host_step_s, 0, 1);
  in("host_call_s", host_call_s, 0, 1);
  in("host_bwd_step_s", host_bwd_step_s, 0, 1);
  in("host_bwd_call_s", host_bwd_call_s, 0, 1);
  in("host_op_s", host_op_s, 0, 1);
  in("host_collective_s", host_collective_s, 0, 1);
  in("host_collective_peer_s", host_collective_peer_s, 0, 1);
  in("attention_bwd_factor", attention_bwd_factor, 0.5, 10);
  in("sparse_kernel_efficiency", sparse_kernel_efficiency, 0.01, 4);
  in("sparse_prep_bytes_per_element", sparse_prep_bytes_per_element, 0, 1e4);
  in("hash_sort_bytes_per_token", hash_sort_bytes_per_token, 0, 1e6);
  if (attention_efficiency * sparse_kernel_efficiency > 1)
    throw InputError(file, 0, "sparse_kernel_efficiency",
                     "attention_efficiency x sparse_kernel_efficiency exceeds 1 (faster than peak)");
  // Wire dtypes: fp8/int8, bf16/fp16, fp32.
  for (const auto& [key, bytes] : {std::pair{"kv_wire_bytes", kv_wire_bytes}, std::pair{"dkv_wire_bytes", dkv_wire_bytes}})
    if (bytes != 1 && bytes != 2 && bytes != 4)
      throw InputError(file, 0, key, "expected 1, 2 or 4 bytes, got " + std::to_string(bytes));
  if (link_latency_s) in("link_latency_s", *link_latency_s, 0, 1);
  if (default_tile.q <= 0 || default_tile.k <= 0) throw InputError(file, 0, "default_tile", "expected positive q and k");
}

nlohmann::json Profile::to_json() const {
  nlohmann::json j;
  j["name"] = name;
  j["hardware"] = hardware;
  if (!implementation.empty()) j["implementation"] = implementation;
  j["version"] = version;
  j["provenance"] = {{"calibrated", provenance.calibrated}, {"method", provenance.method},
                     {"fitted_from", provenance.fitted_from}, {"date", provenance.date}, {"notes", provenance.notes}};
  if (provenance.residual) j["provenance"]["residual"] = *provenance.residual;
  j["attention_precision"] = std::string(to_string(attention_precision));
  j["matmul_precision"] = std::string(to_string(matmul_precision));
  for (const auto& p : profile_parameters()) {
    if (!reads(p.name)) continue;
    const double v = this->*(p.field);
    if (p.zero_is_none && !(v > 0)) continue;
    j[std::string(p.name)] = v;
  }
  if (link_latency_s) j["link_latency_s"] = *link_latency_s;
  j["kv_wire_bytes"] = kv_wire_bytes;
  j["dkv_wire_bytes"] = dkv_wire_bytes;
  j["recompute"] = recompute;
  if (!uncertainty.empty())
    j["uncertainty"] = {{"parameters", uncertainty.parameters},
                        {"covariance", uncertainty.covariance},
                        {"residual_log_sd", uncertainty.residual_log_sd},
                        {"held_out_points", uncertainty.held_out_points}};
  j["default_tile"] = {{"q", default_tile.q}, {"k", default_tile.k}};
  return j;
}

CostModel::CostModel(const Hardware& hw, const Profile& profile, const ModelConfig& model, std::int64_t mp,
                     std::int64_t batch, std::int64_t mask_heads, MaskKind mask_kind)
    : head_dim_(static_cast<double>(model.head_dim)),
      padded_head_dim_(static_cast<double>(hw.padded_to_matrix_unit(model.head_dim))),
      tile_overhead_s_(profile.tile_overhead_s),
      attention_bwd_factor_(profile.attention_bwd_factor),
      recompute_attention_(profile.recomputes_attention()),
      masked_tile_penalty_(profile.masked_tile_penalty),
      skipped_tile_cost_(profile.skipped_tile_cost),
      masked_tile_s_(profile.masked_tile_s),
      skipped_tile_s_(profile.skipped_tile_s),
      round_bytes_per_element_(profile.round_bytes_per_element),
      overlap_(profile.overlap),
      memory_bytes_per_s_(hw.hbm_bandwidth_bytes_per_s * profile.memory_efficiency),
      intra_bytes_per_s_(profile.link_bytes_per_s(hw.intra_link_bandwidth_bytes_per_s)),
      inter_bytes_per_s_(profile.link_bytes_per_s(hw.inter_node_bandwidth_bytes_per_s)),
      intra_latency_s_(profile.link_latency(hw.intra_link_latency_s)),
      inter_latency_s_(profile.link_latency(hw.inter_node_latency_s)),
      ring_intra_(profile.ring_hop(hw, false)),
      ring_inter_(profile.ring_hop(hw, true)),
      p2p_limit_bytes_per_s_(profile.p2p_bandwidth_bytes_per_s),
      p2p_extra_latency_s_(profile.p2p_latency_s),
      machine_described_(hw.machine.described),
      mp_(mp),
      batch_(batch) {
  model.check_parallelism(mp);
  if (hw.sm_count > 0) {
    comm_share_local_ = static_cast<double>(transport::nccl_p2p_ctas(hw, false)) / static_cast<double>(hw.sm_count);
    comm_share_spanning_ = static_cast<double>(transport::nccl_p2p_ctas(hw, true)) / static_cast<double>(hw.sm_count);
  }
  heads_per_device_ = model.heads / mp;
  kv_heads_per_device_ = std::max<std::int64_t>(1, model.kv_heads / mp);
  // Structured masks count a tile once for all heads; per-head sparse masks count each head's
  // tiles, over the model's heads, so each counted tile then stands for heads / mask_heads heads.
  if (mask_heads > 1) {
    if (model.heads % mask_heads != 0)
      throw InputError({}, 0, "mask",
                       "the mask has " + std::to_string(mask_heads) + " heads, which does not divide the model's " +
                           std::to_string(model.heads));
    head_multiplier_ = static_cast<double>(model.heads) / static_cast<double>(mask_heads) / static_cast<double>(mp);
  } else {
    head_multiplier_ = static_cast<double>(heads_per_device_);
  }
  attn_flops_per_s_ = hw.peak_flops_per_s(profile.attention_precision) * profile.attention_efficiency;
  matmul_flops_per_s_ = hw.peak_flops_per_s(profile.matmul_precision) * profile.matmul_efficiency;
  // FP8 GEMMs at the same fraction of the FP8 peak as the 16-bit ones reach of theirs: derived
  // from the datasheet's ratio, not fitted (no FP8 GEMM timings in data/; docs/pipeline.md).
  // FP8 GEMMs reach a fraction of their peak relative to BF16 GEMMs' that the hardware file gives
  // where GEMM pairs measure it (Hopper: TransformerEngine's per-tensor cuBLASLt GEMMs, 0.952).
  fp8_matmul_flops_per_s_ =
      hw.peak_fp8_per_s ? *hw.peak_fp8_per_s * profile.matmul_efficiency * hw.fp8_gemm_relative_efficiency : 0.0;
  index_mask_ = mask_kind == MaskKind::QKDrop || mask_kind == MaskKind::Hash;
  if (index_mask_) {
    attn_flops_per_s_ *= profile.sparse_kernel_efficiency;
    // Per local token: every head of the device, every sequence of the batch.
    const double token_heads = static_cast<double>(heads_per_device_) * static_cast<double>(batch);
    prep_fwd_bytes_per_token_ = token_heads * profile.sparse_prep_bytes_per_element * head_dim_;
    prep_bwd_bytes_per_token_ = prep_fwd_bytes_per_token_;
    // The backward reuses the forward's permutation: it sorts nothing.
    if (mask_kind == MaskKind::Hash) prep_fwd_bytes_per_token_ += token_heads * profile.hash_sort_bytes_per_token;
  }
}

double CostModel::sparse_prep_fwd_s(std::int64_t tokens) const noexcept {
  return prep_fwd_bytes_per_token_ * static_cast<double>(tokens) / memory_bytes_per_s_;
}

double CostModel::sparse_prep_bwd_s(std::int64_t tokens) const noexcept {
  return prep_bwd_bytes_per_token_ * static_cast<double>(tokens) / memory_bytes_per_s_;
}

double CostModel::attention_fwd_flops(const BlockStats& b) const noexcept {
  return 4.0 * static_cast<double>(b.visited_area) * padded_head_dim_ * head_multiplier_ *
         static_cast<double>(batch_);
}

double CostModel::attention_useful_fwd_flops(const BlockStats& b) const noexcept {
  return 4.0 * static_cast<double>(b.allowed_pairs) * head_dim_ * head_multiplier_ *
         static_cast<double>(batch_);
}

double CostModel::masked_factor(const BlockStats& b) const noexcept {
  if (b.visited_area <= 0) return 1.0;
  return 1.0 + (masked_tile_penalty_ * static_cast<double>(b.masked_area) +
                skipped_tile_cost_ * static_cast<double>(b.skipped_area)) /
                   static_cast<double>(b.visited_area);
}

double CostModel::tile_constants_s(const BlockStats& b) const noexcept {
  return static_cast<double>(b.tiles_visited * batch_) * tile_overhead_s_ +
         static_cast<double>(b.tiles_masked) * masked_tile_s_ +
         static_cast<double>(b.tiles_total - b.tiles_visited) * skipped_tile_s_;
}

double CostModel::round_memory_s(std::int64_t tokens) const noexcept {
  return round_bytes_per_element_ * static_cast<double>(tokens) * static_cast<double>(heads_per_device_) * head_dim_ *
         static_cast<double>(batch_) / memory_bytes_per_s_;
}

double CostModel::attention_fwd_s(const BlockStats& b) const noexcept {
  return tile_constants_s(b) + attention_fwd_flops(b) * masked_factor(b) / attn_flops_per_s_;
}

double CostModel::attention_bwd_s(const BlockStats& b) const noexcept {
  const double bwd = tile_constants_s(b) +
                     attention_bwd_factor_ * attention_fwd_flops(b) * masked_factor(b) / attn_flops_per_s_;
  // Rematerialised blocks recompute the forward ring before the backward ring. It is charged to
  // the backward round of the same block: the busiest device of a round is the same in both
  // passes, so with transfers hidden behind compute the two rings' rounds add up the same way.
  return recompute_attention_ ? bwd + attention_fwd_s(b) : bwd;
}

double CostModel::link_bandwidth_bytes_per_s(bool inter_node) const noexcept {
  return inter_node ? inter_bytes_per_s_ : intra_bytes_per_s_;
}

double CostModel::link_latency_s(bool inter_node) const noexcept {
  return inter_node ? inter_latency_s_ : intra_latency_s_;
}

double CostModel::transfer_s(double bytes, bool inter_node) const noexcept {
  if (bytes <= 0) return 0;
  return link_latency_s(inter_node) + bytes / link_bandwidth_bytes_per_s(inter_node);
}

double CostModel::ring_bandwidth_bytes_per_s(bool inter_node) const noexcept {
  return (inter_node ? ring_inter_ : ring_intra_).bandwidth_bytes_per_s;
}

double CostModel::ring_latency_s(bool inter_node) const noexcept {
  return (inter_node ? ring_inter_ : ring_intra_).latency_s;
}

double CostModel::ring_transfer_s(double bytes, bool inter_node) const noexcept {
  if (bytes <= 0) return 0;
  return ring_latency_s(inter_node) + bytes / ring_bandwidth_bytes_per_s(inter_node);
}

double CostModel::overlapped_s(double compute_s, double transfer) const noexcept {
  return std::max(compute_s, transfer) + (1.0 - overlap_) * std::min(compute_s, transfer);
}

double CostModel::beside_comm_s(double compute_s, double transfer_s, bool group_spans_nodes) const noexcept {
  const double f = comm_sm_share(group_spans_nodes);
  if (f <= 0 || f >= 1 || transfer_s <= 0 || compute_s <= 0) return compute_s;
  // At 1 - f of its rate while the transfer runs, at full rate after: the whole compute at the
  // slow rate when the transfer outlasts it.
  return std::min(compute_s / (1.0 - f), compute_s + f * transfer_s);
}

MachineSpec transport_machine(const Hardware& hw, const Profile& profile, double& scale) {
  // A hardware without a machine block is the flat machine of its current figures (a fit or a
  // test may have changed them since the file was read).
  // A described machine is cut or grown to the node size a topology asked for (planning's
  // apply_topology sets devices_per_node); a flat one is built at that size.
  MachineSpec m = hw.machine.described
                      ? hw.machine.with_gpus_per_node(hw.devices_per_node)
                      : MachineSpec::flat(hw.devices_per_node, hw.intra_link_bandwidth_bytes_per_s,
                                          profile.link_latency(hw.intra_link_latency_s), hw.inter_node_bandwidth_bytes_per_s,
                                          profile.link_latency(hw.inter_node_latency_s));
  scale = m.described ? 1.0 : profile.link_efficiency;
  if (hw.point_to_point) {
    // Measured capacities are not scaled: divide out what the fabric multiplies in.
    if (const auto& h = hw.point_to_point->intra_node; h && m.fabric == MachineSpec::Fabric::NvSwitch) {
      m.nvlink_bytes_per_s = h->bandwidth_bytes_per_s / scale;
      m.nvlink_latency_s = h->latency_s;
    }
    if (const auto& h = hw.point_to_point->inter_node) {
      m.nic_bytes_per_s = h->bandwidth_bytes_per_s / scale;
      m.nic_latency_s = h->latency_s;
    }
  }
  return m;
}

std::string transport_signature_of(const MachineSpec& m, double scale) {
  // The key of the process-wide shared transport (models/scenario/scenario.cpp): the whole machine,
  // so two machines of the same link figures but another tree, GPU count or NICs never share one.
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g|", scale);
  return buf + m.signature();
}

void CostModel::set_transport(std::shared_ptr<const transport::ScenarioTransport> t, const transport::HopRates& ring) {
  transport_ = std::move(t);
  ring_bound_intra_.clear();
  ring_bound_inter_.clear();
  if (!transport_) return;
  auto limited = [&](double rate) {
    return p2p_limit_bytes_per_s_ > 0 ? std::min(rate, p2p_limit_bytes_per_s_) : rate;
  };
  const auto& fabric = transport_->fabric();
  if (ring.intra_bytes_per_s > 0) {
    ring_intra_.bandwidth_bytes_per_s = limited(ring.intra_bytes_per_s);
    ring_intra_.latency_s = ring.intra_latency_s + p2p_extra_latency_s_;
    ring_bound_intra_ = transport::describe_bound(fabric, ring.intra_bottleneck, ring.intra_sharing);
  }
  if (ring.inter_bytes_per_s > 0) {
    // A round waits for its slowest hop, whichever kind it is.
    const bool intra_slower = ring.intra_bytes_per_s > 0 && ring.intra_bytes_per_s < ring.inter_bytes_per_s;
    ring_inter_.bandwidth_bytes_per_s = limited(intra_slower ? ring.intra_bytes_per_s : ring.inter_bytes_per_s);
    ring_inter_.latency_s = std::max(ring.inter_latency_s, ring.intra_latency_s) + p2p_extra_latency_s_;
    ring_bound_inter_ = intra_slower ? ring_bound_intra_
                                     : transport::describe_bound(fabric, ring.inter_bottleneck, ring.inter_sharing);
  }
}

double CostModel::op_s(const Op& op, bool collective_inter_node) const noexcept {
  switch (op.kind) {
    case OpKind::Matmul:
      return op.flops / (op.fp8 && fp8_matmul_flops_per_s_ > 0 ? fp8_matmul_flops_per_s_ : matmul_flops_per_s_);
    case OpKind::Memory: return op.bytes / memory_bytes_per_s_;
    case OpKind::Collective: {
      if (mp_ <= 1) return 0;
      // NCCL's model where it changes the answer: a group that leaves its node (its rings cross
      // on every NIC rail) or a described machine (PCIe trees, staged copies); inside an NVSwitch
      // node the ring's closed form below is the same bandwidth, and the simulator routes it so.
      if (transport_ && (collective_inter_node || machine_described_)) {
        // Tensor parallelism's all-reduce, every tensor-parallel group at once (rank j's group is
        // devices j * mp .. j * mp + mp - 1): NCCL's over the fabric.
        const std::int64_t mp = mp_, groups = std::max<std::int64_t>(1, transport_->devices() / mp_);
        const auto& plan = transport_->plan("tp-all-reduce|" + std::to_string(mp), transport::Collective::AllReduce, [&] {
          std::vector<std::vector<std::int64_t>> g(static_cast<std::size_t>(groups));
          for (std::int64_t j = 0; j < groups; ++j)
            for (std::int64_t k = 0; k < mp; ++k) g[static_cast<std::size_t>(j)].push_back(j * mp + k);
          return g;
        });
        return plan.time(op.bytes).seconds;
      }
      // Ring all-reduce over mp devices: 2 (mp - 1) steps of bytes / mp each.
      const double m = static_cast<double>(mp_);
      return 2 * (m - 1) * link_latency_s(collective_inter_node) +
             2 * (m - 1) / m * op.bytes / link_bandwidth_bytes_per_s(collective_inter_node);
    }
  }
  return 0;
}

}  // namespace ringsim::models
