#include "models/hardware/machine.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"

namespace ringsim::models {
namespace {

constexpr double kMinBytesPerS = 1e3, kMaxBytesPerS = 1e15;
constexpr double kMaxLatencyS = 1;

// A sourced figure inside an array element: `sub` reads the element, `where` prefixes its field.
double sourced_rate(const JsonFields& sub, const std::string& where, const std::string& path, bool required) {
  try {
    if (required) return sub.sourced_in(path, kMinBytesPerS, kMaxBytesPerS);
    return sub.optional_sourced_in(path, kMinBytesPerS, kMaxBytesPerS).value_or(0.0);
  } catch (const InputError& e) {
    throw e.with_field(where + "." + e.field());
  }
}

LinkSpec link_spec(const JsonFields& f, const std::string& path) {
  LinkSpec l;
  l.bytes_per_s = f.sourced_in(path + ".bytes_per_s", kMinBytesPerS, kMaxBytesPerS);
  if (const auto d = f.optional_sourced_in(path + ".duplex_bytes_per_s", kMinBytesPerS, kMaxBytesPerS)) {
    if (*d < l.bytes_per_s || *d > 2 * l.bytes_per_s)
      throw InputError(f.file(), 0, path + ".duplex_bytes_per_s",
                       "both directions together carry between one direction's rate and twice it");
    l.duplex_bytes_per_s = *d;
  }
  return l;
}

std::int32_t socket_index(const std::string& name, std::int64_t max_sockets) {
  if (name.size() > 6 && name.starts_with("socket")) {
    const std::string digits = name.substr(6);
    if (digits.size() <= 3 && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      const int s = std::stoi(digits);
      if (s < max_sockets) return s;
    }
  }
  return -1;
}

}  // namespace

bool MachineSpec::bridged(std::int32_t a, std::int32_t b) const noexcept {
  return std::any_of(bridge_pairs.begin(), bridge_pairs.end(), [&](const auto& p) {
    return (p.first == a && p.second == b) || (p.first == b && p.second == a);
  });
}

std::vector<std::int32_t> MachineSpec::switch_chain(std::int32_t g) const {
  std::vector<std::int32_t> chain;
  for (auto s = gpu_switch.at(static_cast<std::size_t>(g)); s >= 0; s = switches[static_cast<std::size_t>(s)].parent)
    chain.push_back(s);
  return chain;
}

std::string MachineSpec::signature() const {
  // Raw bytes, not text: a key compared whole, built once per resolved scenario (a plan resolves
  // tens of thousands), so no formatting.
  std::string out;
  out.reserve(256);
  const auto num = [&](double v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  const auto count = [&](std::int64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  const auto link = [&](const LinkSpec& l) {
    num(l.bytes_per_s);
    num(l.duplex_bytes_per_s);
  };
  count(fabric == Fabric::Pcie);
  count(described);
  count(gpus);
  num(nvlink_bytes_per_s);
  num(nvlink_latency_s);
  count(peer_access);
  link(gpu_link);
  count(static_cast<std::int64_t>(switches.size()));
  for (const auto& sw : switches) {
    count(sw.parent);
    count(sw.socket);
    link(sw.uplink);
  }
  count(static_cast<std::int64_t>(gpu_switch.size()));
  for (const auto v : gpu_switch) count(v);
  count(static_cast<std::int64_t>(gpu_socket.size()));
  for (const auto v : gpu_socket) count(v);
  count(sockets);
  link(socket_link);
  num(root_complex_bytes_per_s);
  count(nccl_p2p_through_cpu);
  num(p2p_latency_s);
  num(staged_latency_s);
  count(static_cast<std::int64_t>(bridge_pairs.size()));
  for (const auto& [a, b] : bridge_pairs) {
    count(a);
    count(b);
  }
  num(bridge_bytes_per_s);
  num(bridge_latency_s);
  count(nics);
  num(nic_bytes_per_s);
  num(nic_latency_s);
  count(gpudirect);
  count(static_cast<std::int64_t>(nic_of_gpu.size()));
  for (const auto v : nic_of_gpu) count(v);
  return out;
}

MachineSpec MachineSpec::with_gpus_per_node(std::int64_t g) const {
  if (g == gpus) return *this;
  if (!supports_gpus_per_node(g)) throw std::invalid_argument("a PCIe machine's nodes cannot hold more GPUs than its tree");
  MachineSpec m = *this;
  m.gpus = g;
  const auto n = static_cast<std::size_t>(g);
  if (g < gpus) {
    m.gpu_switch.resize(n);
    m.gpu_socket.resize(n);
    m.nic_of_gpu.resize(n);
    // NIC numbers are non-decreasing in the GPU (machine.nics: k * G / N), so the kept GPUs' NICs
    // are 0 .. the last GPU's.
    m.nics = n > 0 ? m.nic_of_gpu.back() + 1 : 1;
    std::erase_if(m.bridge_pairs, [&](const auto& p) { return p.first >= g || p.second >= g; });
    return m;
  }
  // A larger NVSwitch domain: every GPU on the switch, the machine's NICs per GPU (at least one).
  m.nics = std::max<std::int64_t>(1, nics * g / std::max<std::int64_t>(1, gpus));
  m.gpu_switch.assign(n, -1);
  m.gpu_socket.assign(n, 0);
  m.nic_of_gpu.clear();
  for (std::int64_t i = 0; i < g; ++i) m.nic_of_gpu.push_back(static_cast<std::int32_t>(i * m.nics / g));
  return m;
}

MachineSpec MachineSpec::flat(std::int64_t gpus, double intra_bytes_per_s, double intra_latency_s,
                              double nic_bytes_per_s, double nic_latency_s) {
  MachineSpec m;
  m.gpus = std::max<std::int64_t>(1, gpus);
  m.nvlink_bytes_per_s = intra_bytes_per_s;
  m.nvlink_latency_s = intra_latency_s;
  m.nics = m.gpus;
  m.nic_bytes_per_s = nic_bytes_per_s;
  m.nic_latency_s = nic_latency_s;
  for (std::int64_t g = 0; g < m.gpus; ++g) {
    m.nic_of_gpu.push_back(static_cast<std::int32_t>(g));
    m.gpu_switch.push_back(-1);
    m.gpu_socket.push_back(0);
  }
  return m;
}

MachineSpec MachineSpec::parse(const JsonFields& f, MachineSpec m) {
  const std::string& file = f.file();
  m.described = true;
  m.note = f.string_or("machine.note", "");
  const auto fabric = f.one_of_or("machine.fabric", {"nvswitch", "pcie"}, "nvswitch");
  m.fabric = fabric == "pcie" ? Fabric::Pcie : Fabric::NvSwitch;
  const auto gpus = static_cast<std::int32_t>(m.gpus);
  if (m.fabric == Fabric::Pcie) {
    if (f.optional_sourced("machine.peer_access")) m.peer_access = f.count_sourced("machine.peer_access", 0, 1) == 1;
    m.gpu_link = link_spec(f, "machine.gpu_link");
    // Switches first: a GPU names its parent by the switch's name.
    std::map<std::string, std::int32_t> by_name;
    std::vector<std::string> parents;
    if (const auto* sw = f.find("machine.switches")) {
      if (!sw->is_array()) throw InputError(file, 0, "machine.switches", "expected an array of switches");
      for (std::size_t i = 0; i < sw->size(); ++i) {
        const std::string where = "machine.switches[" + std::to_string(i) + "]";
        const auto& e = (*sw)[i];
        if (!e.is_object()) throw InputError(file, 0, where, "expected an object {name, parent, uplink}");
        JsonFields sub(e, file);
        Switch s;
        try {
          s.name = sub.string("name");
          parents.push_back(sub.string("parent"));
          s.uplink.bytes_per_s = sourced_rate(sub, where, "uplink.bytes_per_s", true);
          s.uplink.duplex_bytes_per_s = sourced_rate(sub, where, "uplink.duplex_bytes_per_s", false);
          sub.reject_unread("switch");
        } catch (const InputError& e2) {
          throw e2.field().starts_with("machine.") ? e2 : e2.with_field(where + "." + e2.field());
        }
        if (s.name.starts_with("socket") || !by_name.emplace(s.name, static_cast<std::int32_t>(i)).second)
          throw InputError(file, 0, where + ".name", "switch names are unique and do not start with 'socket'");
        if (s.uplink.duplex_bytes_per_s != 0 &&
            (s.uplink.duplex_bytes_per_s < s.uplink.bytes_per_s || s.uplink.duplex_bytes_per_s > 2 * s.uplink.bytes_per_s))
          throw InputError(file, 0, where + ".uplink.duplex_bytes_per_s",
                           "both directions together carry between one direction's rate and twice it");
        m.switches.push_back(std::move(s));
      }
    }
    constexpr std::int64_t kMaxSockets = 64;
    std::int64_t sockets = 1;
    auto attach = [&](const std::string& parent, const std::string& where, std::int32_t& sw, std::int32_t& socket) {
      if (const auto s = socket_index(parent, kMaxSockets); s >= 0) {
        sw = -1;
        socket = s;
        sockets = std::max<std::int64_t>(sockets, s + 1);
        return;
      }
      const auto it = by_name.find(parent);
      if (it == by_name.end())
        throw InputError(file, 0, where, "'" + parent + "' is neither a switch of machine.switches nor socketN (N < 64)");
      sw = it->second;
      socket = -1;
    };
    for (std::size_t i = 0; i < m.switches.size(); ++i)
      attach(parents[i], "machine.switches[" + std::to_string(i) + "].parent", m.switches[i].parent, m.switches[i].socket);
    // Sockets of switches under switches, refusing cycles.
    for (std::size_t i = 0; i < m.switches.size(); ++i) {
      std::set<std::int32_t> seen;
      auto s = static_cast<std::int32_t>(i);
      while (m.switches[static_cast<std::size_t>(s)].parent >= 0) {
        if (!seen.insert(s).second)
          throw InputError(file, 0, "machine.switches[" + std::to_string(i) + "].parent", "the switches form a cycle");
        s = m.switches[static_cast<std::size_t>(s)].parent;
      }
      m.switches[i].socket = m.switches[static_cast<std::size_t>(s)].socket;
    }
    const auto* gp = f.find("machine.gpu_parents");
    if (!gp || !gp->is_array() || static_cast<std::int64_t>(gp->size()) != m.gpus)
      throw InputError(file, 0, "machine.gpu_parents",
                       "expected one parent (a switch name or socketN) per GPU of the node: " + std::to_string(m.gpus));
    m.gpu_switch.assign(static_cast<std::size_t>(gpus), -1);
    m.gpu_socket.assign(static_cast<std::size_t>(gpus), 0);
    for (std::int32_t g = 0; g < gpus; ++g) {
      const auto& p = (*gp)[static_cast<std::size_t>(g)];
      const std::string where = "machine.gpu_parents[" + std::to_string(g) + "]";
      if (!p.is_string()) throw InputError(file, 0, where, "expected a switch name or socketN");
      auto& sw = m.gpu_switch[static_cast<std::size_t>(g)];
      auto& so = m.gpu_socket[static_cast<std::size_t>(g)];
      attach(p.get<std::string>(), where, sw, so);
      if (sw >= 0) so = m.switches[static_cast<std::size_t>(sw)].socket;
    }
    m.sockets = sockets;
    if (m.sockets > 1) m.socket_link = link_spec(f, "machine.socket_link");
    if (const auto rc = f.optional_sourced_in("machine.root_complex_bytes_per_s", kMinBytesPerS, kMaxBytesPerS))
      m.root_complex_bytes_per_s = *rc;
    if (m.peer_access) m.p2p_latency_s = f.sourced_in("machine.p2p_latency_s", 0, kMaxLatencyS);
    if (f.optional_sourced("machine.nccl_p2p_through_cpu"))
      m.nccl_p2p_through_cpu = f.count_sourced("machine.nccl_p2p_through_cpu", 0, 1) == 1;
    // A card without peer access stages every copy; one with it still has NCCL stage copies
    // through the CPU (nccl_p2p_through_cpu), whose latency the file gives where it was probed.
    if (!m.peer_access || f.optional_sourced("machine.staged_latency_s"))
      m.staged_latency_s = f.sourced_in("machine.staged_latency_s", 0, kMaxLatencyS);
    else
      m.staged_latency_s = m.p2p_latency_s;  // NCCL's staged hops of a card with peer access: unprobed
    if (f.find("machine.nvlink_bridges")) {
      const auto* pairs = f.find("machine.nvlink_bridges.pairs");
      if (!pairs || !pairs->is_array())
        throw InputError(file, 0, "machine.nvlink_bridges.pairs", "expected an array of GPU pairs [[0, 1], ...]");
      for (const auto& p : *pairs) {
        if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number_integer())
          throw InputError(file, 0, "machine.nvlink_bridges.pairs", "expected pairs of GPU indices [[0, 1], ...]");
        const auto a = p[0].get<std::int64_t>(), b = p[1].get<std::int64_t>();
        if (a < 0 || b < 0 || a >= m.gpus || b >= m.gpus || a == b || m.bridged(static_cast<std::int32_t>(a), static_cast<std::int32_t>(b)))
          throw InputError(file, 0, "machine.nvlink_bridges.pairs",
                           "expected distinct pairs of two different GPUs of the node (0.." + std::to_string(m.gpus - 1) + ")");
        m.bridge_pairs.emplace_back(static_cast<std::int32_t>(a), static_cast<std::int32_t>(b));
      }
      m.bridge_bytes_per_s = f.sourced_in("machine.nvlink_bridges.bytes_per_s", kMinBytesPerS, kMaxBytesPerS);
      m.bridge_latency_s = f.sourced_in("machine.nvlink_bridges.latency_s", 0, kMaxLatencyS);
    }
  }
  if (f.find("machine.nics")) {
    m.nics = f.count_sourced("machine.nics.per_node", 1, 1024);
    if (const auto b = f.optional_sourced_in("machine.nics.bytes_per_s", kMinBytesPerS, kMaxBytesPerS)) m.nic_bytes_per_s = *b;
    if (const auto l = f.optional_sourced_in("machine.nics.latency_s", 0, kMaxLatencyS)) m.nic_latency_s = *l;
    if (f.optional_sourced("machine.nics.gpudirect")) m.gpudirect = f.count_sourced("machine.nics.gpudirect", 0, 1) == 1;
    // NCCL gives each GPU the NIC nearest it on the PCIe tree; with fewer NICs than GPUs the
    // GPUs share them in order (NIC k beside GPUs k*G/N .. (k+1)*G/N - 1), the layout of
    // servers with one NIC per PCIe switch.
    m.nic_of_gpu.clear();
    for (std::int64_t g = 0; g < m.gpus; ++g)
      m.nic_of_gpu.push_back(static_cast<std::int32_t>(g * m.nics / m.gpus));
  }
  return m;
}

}  // namespace ringsim::models
