#include "models/transport/fabric.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

namespace ringsim::models::transport {

std::string_view to_string(PathKind k) noexcept {
  switch (k) {
    case PathKind::Local: return "local";
    case PathKind::NvLink: return "NVLink";
    case PathKind::Bridge: return "NVLink bridge";
    case PathKind::PcieP2p: return "PCIe peer-to-peer";
    case PathKind::Staged: return "PCIe via host memory";
    case PathKind::Network: return "network";
  }
  return "?";
}

void merge_uses(std::vector<ResourceUse>& uses) {
  std::sort(uses.begin(), uses.end(), [](const ResourceUse& a, const ResourceUse& b) { return a.resource < b.resource; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < uses.size(); ++i) {
    if (out > 0 && uses[out - 1].resource == uses[i].resource) {
      uses[out - 1].weight += uses[i].weight;
    } else {
      uses[out++] = uses[i];
    }
  }
  uses.resize(out);
}

Fabric::Fabric(MachineSpec machine, std::int64_t nodes, double scale) : machine_(std::move(machine)), nodes_(nodes), scale_(scale) {
  if (nodes < 1) throw std::invalid_argument("a fabric has at least one node");
  if (!(scale > 0) || !std::isfinite(scale)) throw std::invalid_argument("capacity scale must be positive");
  const auto& m = machine_;
  const auto G = static_cast<std::int32_t>(m.gpus);
  const auto sockets = static_cast<std::int32_t>(m.sockets);
  const auto N = static_cast<std::int32_t>(m.nics);
  auto& L = layout_;
  std::vector<Resource> node;  // one node's resources, names without the node prefix
  auto add = [&](std::string name, ResourceKind kind, double cap) {
    node.push_back({std::move(name), kind, cap * scale});
    return static_cast<std::int32_t>(node.size() - 1);
  };
  auto duplex = [](const LinkSpec& l) { return l.duplex_bytes_per_s > 0 ? l.duplex_bytes_per_s : 2 * l.bytes_per_s; };
  if (m.fabric == MachineSpec::Fabric::NvSwitch) {
    L.nvl_out = static_cast<std::int32_t>(node.size());
    for (std::int32_t g = 0; g < G; ++g) add("gpu" + std::to_string(g) + " NVLink out", ResourceKind::NvLinkOut, m.nvlink_bytes_per_s);
    L.nvl_in = static_cast<std::int32_t>(node.size());
    for (std::int32_t g = 0; g < G; ++g) add("gpu" + std::to_string(g) + " NVLink in", ResourceKind::NvLinkIn, m.nvlink_bytes_per_s);
  } else {
    L.gpu_up = static_cast<std::int32_t>(node.size());
    for (std::int32_t g = 0; g < G; ++g) add("gpu" + std::to_string(g) + " PCIe link up", ResourceKind::GpuLink, m.gpu_link.bytes_per_s);
    L.gpu_down = static_cast<std::int32_t>(node.size());
    for (std::int32_t g = 0; g < G; ++g) add("gpu" + std::to_string(g) + " PCIe link down", ResourceKind::GpuLink, m.gpu_link.bytes_per_s);
    L.gpu_duplex = static_cast<std::int32_t>(node.size());
    for (std::int32_t g = 0; g < G; ++g)
      add("gpu" + std::to_string(g) + " PCIe link (both directions)", ResourceKind::GpuLink, duplex(m.gpu_link));
    L.sw_up = static_cast<std::int32_t>(node.size());
    for (const auto& s : m.switches) add("switch " + s.name + " uplink up", ResourceKind::SwitchUplink, s.uplink.bytes_per_s);
    L.sw_down = static_cast<std::int32_t>(node.size());
    for (const auto& s : m.switches) add("switch " + s.name + " uplink down", ResourceKind::SwitchUplink, s.uplink.bytes_per_s);
    L.sw_duplex = static_cast<std::int32_t>(node.size());
    for (const auto& s : m.switches)
      add("switch " + s.name + " uplink (both directions)", ResourceKind::SwitchUplink, duplex(s.uplink));
    if (sockets > 1) {
      L.socket_link = static_cast<std::int32_t>(node.size());
      for (std::int32_t a = 0; a < sockets; ++a)
        for (std::int32_t b = a + 1; b < sockets; ++b) {
          const auto pair = std::to_string(a) + "<->" + std::to_string(b);
          add("socket link " + std::to_string(a) + "->" + std::to_string(b), ResourceKind::SocketLink, m.socket_link.bytes_per_s);
          add("socket link " + std::to_string(b) + "->" + std::to_string(a), ResourceKind::SocketLink, m.socket_link.bytes_per_s);
          add("socket link " + pair + " (both directions)", ResourceKind::SocketLink, duplex(m.socket_link));
        }
    }
    if (m.root_complex_bytes_per_s > 0) {
      L.root_complex = static_cast<std::int32_t>(node.size());
      for (std::int32_t s = 0; s < sockets; ++s)
        add("socket" + std::to_string(s) + " root complex", ResourceKind::RootComplex, m.root_complex_bytes_per_s);
    }
    if (!m.bridge_pairs.empty()) {
      L.bridge = static_cast<std::int32_t>(node.size());
      for (const auto& [a, b] : m.bridge_pairs) {
        add("NVLink bridge gpu" + std::to_string(a) + "->gpu" + std::to_string(b), ResourceKind::Bridge, m.bridge_bytes_per_s);
        add("NVLink bridge gpu" + std::to_string(b) + "->gpu" + std::to_string(a), ResourceKind::Bridge, m.bridge_bytes_per_s);
      }
    }
  }
  if (nodes > 1) {
    L.nic_out = static_cast<std::int32_t>(node.size());
    for (std::int32_t k = 0; k < N; ++k) add("NIC" + std::to_string(k) + " out", ResourceKind::NicOut, m.nic_bytes_per_s);
    L.nic_in = static_cast<std::int32_t>(node.size());
    for (std::int32_t k = 0; k < N; ++k) add("NIC" + std::to_string(k) + " in", ResourceKind::NicIn, m.nic_bytes_per_s);
  }
  L.size = static_cast<std::int32_t>(node.size());
  capacity_.reserve(static_cast<std::size_t>(nodes * L.size));
  for (std::int64_t n = 0; n < nodes; ++n)
    for (const auto& r : node) capacity_.push_back(r.capacity_bytes_per_s);
  node_ = std::move(node);
}

std::string Fabric::resource_name(std::int32_t resource) const {
  if (resource < 0 || resource >= resource_count()) throw std::out_of_range("resource outside the fabric");
  const auto& r = node_[static_cast<std::size_t>(resource % layout_.size)];
  return nodes_ > 1 ? "node" + std::to_string(resource / layout_.size) + " " + r.name : r.name;
}

ResourceKind Fabric::resource_kind(std::int32_t resource) const {
  if (resource < 0 || resource >= resource_count()) throw std::out_of_range("resource outside the fabric");
  return node_[static_cast<std::size_t>(resource % layout_.size)].kind;
}

std::int32_t Fabric::socket_pair(std::int32_t a, std::int32_t b) const noexcept {
  // Index of the pair (min, max) among pairs enumerated a < b row by row, times 3.
  const std::int32_t s = static_cast<std::int32_t>(machine_.sockets);
  const std::int32_t lo = std::min(a, b), hi = std::max(a, b);
  const std::int32_t before = lo * s - lo * (lo + 1) / 2;  // pairs whose first socket is < lo
  return 3 * (before + (hi - lo - 1));
}

void Fabric::up_link(std::vector<ResourceUse>& uses, std::int64_t node, std::int32_t up, std::int32_t dup, std::int64_t i) const {
  uses.push_back({at(node, up, i), 1.0});
  uses.push_back({at(node, dup, i), 1.0});
}

void Fabric::down_link(std::vector<ResourceUse>& uses, std::int64_t node, std::int32_t down, std::int32_t dup,
                       std::int64_t i) const {
  uses.push_back({at(node, down, i), 1.0});
  uses.push_back({at(node, dup, i), 1.0});
}

void Fabric::to_host(std::vector<ResourceUse>& uses, std::int64_t node, std::int32_t g, bool up) const {
  const auto& L = layout_;
  if (up) {
    up_link(uses, node, L.gpu_up, L.gpu_duplex, g);
    for (const auto s : machine_.switch_chain(g)) up_link(uses, node, L.sw_up, L.sw_duplex, s);
  } else {
    for (const auto s : machine_.switch_chain(g)) down_link(uses, node, L.sw_down, L.sw_duplex, s);
    down_link(uses, node, L.gpu_down, L.gpu_duplex, g);
  }
  if (L.root_complex >= 0) uses.push_back({at(node, L.root_complex, machine_.gpu_socket[static_cast<std::size_t>(g)]), 1.0});
}

void Fabric::pcie_path(std::vector<ResourceUse>& uses, std::int64_t node, std::int32_t a, std::int32_t b, bool staged) const {
  const auto& L = layout_;
  const auto& m = machine_;
  const auto sa = m.gpu_socket[static_cast<std::size_t>(a)], sb = m.gpu_socket[static_cast<std::size_t>(b)];
  const auto ca = m.switch_chain(a), cb = m.switch_chain(b);
  up_link(uses, node, L.gpu_up, L.gpu_duplex, a);
  std::int32_t common = -1;
  if (!staged && sa == sb)
    for (const auto s : ca)
      if (std::find(cb.begin(), cb.end(), s) != cb.end()) {
        common = s;
        break;
      }
  if (common >= 0) {
    // Peer-to-peer turns at the lowest switch both GPUs hang off.
    for (const auto s : ca) {
      if (s == common) break;
      up_link(uses, node, L.sw_up, L.sw_duplex, s);
    }
    // b's switches below the common one, from just under it down to b's slot.
    const auto cut = std::find(cb.begin(), cb.end(), common);
    for (auto it = std::make_reverse_iterator(cut); it != cb.rend(); ++it) down_link(uses, node, L.sw_down, L.sw_duplex, *it);
  } else {
    for (const auto s : ca) up_link(uses, node, L.sw_up, L.sw_duplex, s);
    if (L.root_complex >= 0) uses.push_back({at(node, L.root_complex, sa), 1.0});
    if (sa != sb) {
      const auto p = socket_pair(sa, sb);
      uses.push_back({at(node, L.socket_link, p + (sa < sb ? 0 : 1)), 1.0});
      uses.push_back({at(node, L.socket_link, p + 2), 1.0});
      if (L.root_complex >= 0) uses.push_back({at(node, L.root_complex, sb), 1.0});
    } else if (staged && L.root_complex >= 0) {
      // Into host memory and out again through the same root complex.
      uses.push_back({at(node, L.root_complex, sa), 1.0});
    }
    for (auto it = cb.rbegin(); it != cb.rend(); ++it) down_link(uses, node, L.sw_down, L.sw_duplex, *it);
  }
  down_link(uses, node, L.gpu_down, L.gpu_duplex, b);
}

bool Fabric::common_switch(std::int32_t a, std::int32_t b) const {
  const auto& m = machine_;
  if (m.gpu_socket[static_cast<std::size_t>(a)] != m.gpu_socket[static_cast<std::size_t>(b)]) return false;
  const auto ca = m.switch_chain(a), cb = m.switch_chain(b);
  return std::any_of(ca.begin(), ca.end(), [&](std::int32_t s) { return std::find(cb.begin(), cb.end(), s) != cb.end(); });
}

Route Fabric::route(std::int64_t src, std::int64_t dst, Mover mover) const {
  if (src < 0 || dst < 0 || src >= devices() || dst >= devices())
    throw std::out_of_range("device outside the fabric of " + std::to_string(devices()) + " devices");
  Route r;
  if (src == dst) return r;
  const auto& m = machine_;
  const auto& L = layout_;
  const std::int64_t na = src / m.gpus, nb = dst / m.gpus;
  const auto ga = static_cast<std::int32_t>(src % m.gpus), gb = static_cast<std::int32_t>(dst % m.gpus);
  const bool pcie = m.fabric == MachineSpec::Fabric::Pcie;
  if (na != nb) {
    r.kind = PathKind::Network;
    r.latency_s = m.nic_latency_s + (pcie && !m.gpudirect ? 2 * m.staged_latency_s : 0.0);
    if (pcie) {
      if (m.gpudirect) {
        up_link(r.uses, na, L.gpu_up, L.gpu_duplex, ga);
      } else {
        to_host(r.uses, na, ga, true);
      }
    }
    r.uses.push_back({at(na, L.nic_out, m.nic_of_gpu[static_cast<std::size_t>(ga)]), 1.0});
    r.uses.push_back({at(nb, L.nic_in, m.nic_of_gpu[static_cast<std::size_t>(gb)]), 1.0});
    if (pcie) {
      if (m.gpudirect) {
        down_link(r.uses, nb, L.gpu_down, L.gpu_duplex, gb);
      } else {
        to_host(r.uses, nb, gb, false);
      }
    }
  } else if (!pcie) {
    r.kind = PathKind::NvLink;
    r.latency_s = m.nvlink_latency_s;
    r.uses.push_back({at(na, L.nvl_out, ga), 1.0});
    r.uses.push_back({at(na, L.nvl_in, gb), 1.0});
  } else if (m.bridged(ga, gb)) {
    r.kind = PathKind::Bridge;
    r.latency_s = m.bridge_latency_s;
    std::int64_t i = 0;
    for (const auto& [a, b] : m.bridge_pairs) {
      if (a == ga && b == gb) break;
      if (a == gb && b == ga) {
        ++i;
        break;
      }
      i += 2;
    }
    r.uses.push_back({at(na, L.bridge, i), 1.0});
  } else {
    const bool staged =
        !m.peer_access || (mover == Mover::Nccl && !m.nccl_p2p_through_cpu && !common_switch(ga, gb));
    r.kind = staged ? PathKind::Staged : PathKind::PcieP2p;
    r.latency_s = staged ? m.staged_latency_s : m.p2p_latency_s;
    pcie_path(r.uses, na, ga, gb, staged);
  }
  merge_uses(r.uses);
  return r;
}

}  // namespace ringsim::models::transport
