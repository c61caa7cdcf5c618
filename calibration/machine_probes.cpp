#include "calibration/machine_probes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "calibration/fit.hpp"
#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"
#include "models/io/parse.hpp"

namespace ringsim::calibration {

using models::InputError;
namespace tr = models::transport;

namespace {

constexpr const char* kPointPatterns[] = {"uni", "bidir", "flows", "staggered", "single_reader", "all_pairs", "latency"};

std::optional<tr::Collective> collective_of(const std::string& pattern) {
  if (pattern == "all_reduce") return tr::Collective::AllReduce;
  if (pattern == "all_gather") return tr::Collective::AllGather;
  if (pattern == "reduce_scatter") return tr::Collective::ReduceScatter;
  if (pattern == "alltoall") return tr::Collective::AllToAll;
  if (pattern == "sendrecv") return tr::Collective::SendRecv;
  return std::nullopt;
}

bool point_pattern(const std::string& p) {
  return std::any_of(std::begin(kPointPatterns), std::end(kPointPatterns), [&](const char* k) { return p == k; });
}

// The JSON node at a dotted path whose parts may index arrays ("switches[1]").
nlohmann::json* at_path(nlohmann::json& doc, const std::string& path) {
  nlohmann::json* cur = &doc;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    std::int64_t index = -1;
    if (const auto b = part.find('['); b != std::string::npos && part.back() == ']') {
      index = std::stoll(part.substr(b + 1, part.size() - b - 2));
      part = part.substr(0, b);
    }
    if (!cur->is_object() || !cur->contains(part)) return nullptr;
    cur = &(*cur)[part];
    if (index >= 0) {
      if (!cur->is_array() || index >= static_cast<std::int64_t>(cur->size())) return nullptr;
      cur = &(*cur)[static_cast<std::size_t>(index)];
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

// One direction may not carry more than both together, nor both more than twice one.
void keep_links_consistent(nlohmann::json& link) {
  if (!link.is_object() || !link.contains("bytes_per_s") || !link.contains("duplex_bytes_per_s")) return;
  auto& one = link["bytes_per_s"]["value"];
  auto& both = link["duplex_bytes_per_s"]["value"];
  if (!one.is_number() || !both.is_number()) return;
  const double o = one.get<double>(), b = both.get<double>();
  if (b < o) one = b;
  if (b > 2 * one.get<double>()) both = 2 * one.get<double>();
}

bool latency_path(const std::string& path) { return path.ends_with("latency_s"); }

double time_error(const MachineProbeRow& r, double predicted) {
  // A rate's transfer time is inversely proportional to it.
  return r.rate() ? std::abs(r.value / predicted - 1) : std::abs(predicted / r.value - 1);
}

// Rows counted in the held-out score: rates, latencies, and collectives of at least 1 MB.
bool scored(const MachineProbeRow& r) { return !r.collective() || r.bytes >= 1e6; }

}  // namespace

bool MachineProbeRow::modelled() const noexcept {
  if (collective_of(pattern)) return metric == "time_us" || metric == "busbw_GBps";
  return point_pattern(pattern) && (metric == "flow_GBps" || metric == "sum_GBps" || metric == "latency_us");
}

bool MachineProbeRow::rate() const noexcept { return metric.ends_with("_GBps"); }

std::vector<MachineProbeRow> probe_rows(const std::string& file, const std::vector<std::string>& header,
                                 const std::vector<std::vector<std::string>>& cells, const std::vector<std::int64_t>& lines) {
  auto col = [&](const char* name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw InputError(file, 1, name, std::string("missing column '") + name + "'");
    return static_cast<std::size_t>(it - header.begin());
  };
  const auto c_m = col("machine"), c_src = col("source"), c_p = col("pattern"), c_t = col("transfers"), c_b = col("bytes"),
             c_metric = col("metric"), c_v = col("value"), c_note = col("note");
  std::vector<MachineProbeRow> rows;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto line = i < lines.size() ? lines[i] : 0;
    const auto& r = cells[i];
    auto cell = [&](std::size_t c) { return c < r.size() ? std::string(models::trim(r[c])) : std::string(); };
    MachineProbeRow row;
    row.line = line;
    row.machine = cell(c_m);
    row.source = cell(c_src);
    row.pattern = cell(c_p);
    row.metric = cell(c_metric);
    row.note = cell(c_note);
    if (row.machine.empty()) throw InputError(file, line, "machine", "missing value");
    try {
      row.value = models::parse_double(cell(c_v), "value");
      if (!cell(c_b).empty()) row.bytes = models::parse_double(cell(c_b), "bytes");
    } catch (const InputError& e) {
      throw e.located(file, line);
    }
    if (!(row.value > 0) || !std::isfinite(row.value)) throw InputError(file, line, "value", "expected a positive number");
    if (!(row.bytes >= 0) || !std::isfinite(row.bytes) || row.bytes > 1e15)
      throw InputError(file, line, "bytes", "expected a size between 0 and 1e15 bytes");
    const std::string t = cell(c_t);
    auto device = [&](const std::string& text) {
      try {
        return models::parse_int_in(text, "transfers", 0, std::int64_t{1} << 20);
      } catch (const InputError& e) {
        throw e.located(file, line);
      }
    };
    if (collective_of(row.pattern)) {
      std::size_t start = 0;
      while (start <= t.size()) {
        const auto comma = t.find(',', start);
        row.group.push_back(device(t.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      if (row.group.size() < 2) throw InputError(file, line, "transfers", "a collective's group has at least two devices");
    } else if (point_pattern(row.pattern) && !t.empty()) {
      std::size_t start = 0;
      while (start <= t.size()) {
        const auto semi = t.find(';', start);
        const std::string one = t.substr(start, semi == std::string::npos ? std::string::npos : semi - start);
        const auto gt = one.find('>');
        if (gt == std::string::npos) throw InputError(file, line, "transfers", "expected transfers as src>dst;src>dst...");
        row.transfers.push_back({device(one.substr(0, gt)), device(one.substr(gt + 1)), row.bytes});
        if (semi == std::string::npos) break;
        start = semi + 1;
      }
    }
    if (row.modelled() && !row.collective() && row.transfers.empty())
      throw InputError(file, line, "transfers", "a point-to-point row names its transfers");
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw InputError(file, 0, "rows", "no rows");
  return rows;
}

ProbeMachine ProbeMachine::load(const std::string& path) {
  ProbeMachine m;
  m.file_ = path;
  m.doc_ = models::read_json_file(path);
  models::JsonFields f(m.doc_, path);
  m.name_ = f.string("name");
  m.gpus_ = f.count_sourced("gpus", 1, 1024);
  m.nodes_ = f.count_sourced("nodes", 1, 1024);
  const auto* free = f.find("free");
  if (free && !free->is_array()) throw InputError(path, 0, "free", "expected an array of paths (or of lists of paths)");
  if (free) {
    for (const auto& g : *free) {
      std::vector<std::string> group;
      if (g.is_string()) group.push_back(g.get<std::string>());
      if (g.is_array())
        for (const auto& p : g)
          if (p.is_string()) group.push_back(p.get<std::string>());
      if (group.empty() || group.size() != (g.is_array() ? g.size() : 1))
        throw InputError(path, 0, "free", "expected paths or lists of paths");
      for (const auto& p : group) {
        auto* node = at_path(m.doc_, p);
        if (!node || !node->is_object() || !(*node)["value"].is_number())
          throw InputError(path, 0, "free", "'" + p + "' is not a figure {\"value\": x, \"source\": ...} of the file");
      }
      m.free_.push_back(std::move(group));
    }
  }
  (void)m.spec(m.doc_);  // the description parses
  return m;
}

std::vector<double> ProbeMachine::values() const {
  std::vector<double> v;
  auto doc = doc_;
  for (const auto& g : free_) v.push_back((*at_path(doc, g.front()))["value"].get<double>());
  return v;
}

nlohmann::json ProbeMachine::with(const std::vector<double>& values) const {
  auto doc = doc_;
  for (std::size_t i = 0; i < free_.size() && i < values.size(); ++i)
    for (const auto& p : free_[i]) (*at_path(doc, p))["value"] = values[i];
  auto& m = doc["machine"];
  keep_links_consistent(m["gpu_link"]);
  if (m.contains("socket_link")) keep_links_consistent(m["socket_link"]);
  if (m.contains("switches") && m["switches"].is_array())
    for (auto& s : m["switches"]) keep_links_consistent(s["uplink"]);
  return doc;
}

models::MachineSpec ProbeMachine::spec(const nlohmann::json& doc) const {
  models::JsonFields f(doc, file_);
  double port = 1e9, port_lat = 0;
  if (f.find("nvlink_port")) {
    port = f.sourced_in("nvlink_port.bytes_per_s", 1e3, 1e15);
    port_lat = f.sourced_in("nvlink_port.latency_s", 0, 1);
  }
  auto base = models::MachineSpec::flat(gpus_, port, port_lat, 1e9, 0);
  return models::MachineSpec::parse(f, base);
}

double predict_probe(const models::MachineSpec& machine, std::int64_t nodes, const MachineProbeRow& row) {
  const tr::Fabric fabric(machine, nodes);
  return predict_probe_on(fabric, row);
}

double predict_probe_on(const tr::Fabric& fabric, const MachineProbeRow& row) {
  if (const auto kind = collective_of(row.pattern)) {
    const std::vector<std::vector<std::int64_t>> groups = {row.group};
    const auto t = tr::CollectivePlan(fabric, *kind, groups).time(row.bytes);
    if (row.metric == "time_us") return t.seconds * 1e6;
    const double n = static_cast<double>(row.group.size());
    const double factor = *kind == tr::Collective::AllReduce ? 2 * (n - 1) / n : *kind == tr::Collective::SendRecv ? 1.0 : (n - 1) / n;
    return row.bytes / t.seconds * factor / 1e9;
  }
  // Point-to-point probes copy with cudaMemcpyPeer (p2pBandwidthLatencyTest, p2pmark): peer-to-peer
  // wherever the cards allow it, not only where NCCL would take it.
  constexpr auto copy = tr::Mover::CudaCopy;
  if (row.metric == "latency_us")
    return fabric.route(row.transfers.front().src, row.transfers.front().dst, copy).latency_s * 1e6;
  std::vector<std::vector<tr::ResourceUse>> flows;
  std::vector<double> lat, bytes;
  for (const auto& t : row.transfers) {
    auto r = fabric.route(t.src, t.dst, copy);
    lat.push_back(r.latency_s);
    flows.push_back(std::move(r.uses));
    bytes.push_back(row.bytes > 0 ? row.bytes : 1.0);
  }
  std::vector<double> rate(flows.size());
  if (row.bytes > 0) {
    const auto fin = tr::fluid_finish_s(fabric.capacities(), flows, bytes);
    for (std::size_t i = 0; i < flows.size(); ++i) rate[i] = row.bytes / (lat[i] + fin[i]);
  } else {
    rate = tr::max_min_rates(fabric.capacities(), flows).rate_bytes_per_s;
  }
  if (row.metric == "flow_GBps") return rate.front() / 1e9;
  return std::accumulate(rate.begin(), rate.end(), 0.0) / 1e9;
}

MachineFit fit_machine(const ProbeMachine& machine, const std::vector<MachineProbeRow>& all, bool leave_one_out) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& r = all[i];
    if (r.machine != machine.name() || !r.modelled()) continue;
    for (const auto d : r.collective() ? r.group : std::vector<std::int64_t>{})
      if (d >= machine.devices())
        throw InputError(machine.file(), r.line, "transfers", "device " + std::to_string(d) + " outside the machine");
    for (const auto& t : r.transfers)
      if (t.src >= machine.devices() || t.dst >= machine.devices())
        throw InputError(machine.file(), r.line, "transfers", "a transfer names a device outside the machine");
    idx.push_back(i);
  }
  const auto& free = machine.free();
  if (idx.size() < free.size())
    throw InputError(machine.file(), 0, "free",
                     std::to_string(idx.size()) + " modelled rows cannot fit " + std::to_string(free.size()) + " free values");
  // Fitted in logs: every capacity and latency is positive and spans decades.
  std::vector<Parameter> params;
  const auto start = machine.values();
  for (std::size_t i = 0; i < free.size(); ++i) {
    const bool lat = latency_path(free[i].front());
    params.push_back({free[i].front(), std::log(lat ? 1e-8 : 1e6), std::log(lat ? 1e-2 : 1e13), std::log(start[i])});
  }
  auto predict_rows = [&](const Eigen::VectorXd& x, const std::vector<std::size_t>& rows) {
    std::vector<double> v(free.size());
    for (std::size_t i = 0; i < free.size(); ++i) v[i] = std::exp(x[static_cast<Eigen::Index>(i)]);
    const tr::Fabric fabric(machine.spec(machine.with(v)), machine.nodes());
    Eigen::VectorXd out(static_cast<Eigen::Index>(rows.size()));
    for (std::size_t k = 0; k < rows.size(); ++k) out[static_cast<Eigen::Index>(k)] = std::log(predict_probe_on(fabric, all[rows[k]]));
    return out;
  };
  auto observed = [&](const std::vector<std::size_t>& rows) {
    Eigen::VectorXd o(static_cast<Eigen::Index>(rows.size()));
    for (std::size_t k = 0; k < rows.size(); ++k) o[static_cast<Eigen::Index>(k)] = std::log(all[rows[k]].value);
    return o;
  };
  MachineFit out;
  out.predicted.assign(all.size(), std::numeric_limits<double>::quiet_NaN());
  out.held_out = out.predicted;
  Eigen::VectorXd best(static_cast<Eigen::Index>(free.size()));
  for (std::size_t i = 0; i < free.size(); ++i) best[static_cast<Eigen::Index>(i)] = params[i].start;
  if (!free.empty()) {
    const auto fit = fit_least_squares([&](const Eigen::VectorXd& x) { return predict_rows(x, idx); }, observed(idx), params);
    best = fit.params;
    for (std::size_t i = 0; i < free.size(); ++i) {
      std::string name;
      for (const auto& p : free[i]) name += (name.empty() ? "" : "+") + p;
      out.names.push_back(name);
      out.values.push_back(std::exp(best[static_cast<Eigen::Index>(i)]));
      const double se = fit.std_errors[static_cast<Eigen::Index>(i)];
      out.std_errors.push_back(std::isfinite(se) ? out.values.back() * se : std::numeric_limits<double>::quiet_NaN());
    }
  }
  out.fitted = machine.with(out.values.empty() ? machine.values() : out.values);
  const auto in = predict_rows(best, idx);
  for (std::size_t k = 0; k < idx.size(); ++k) out.predicted[idx[k]] = std::exp(in[static_cast<Eigen::Index>(k)]);
  auto tally = [&](std::map<std::string, std::pair<double, std::int64_t>>& m, const std::vector<double>& pred) {
    for (const auto i : idx) {
      if (!scored(all[i]) || !std::isfinite(pred[i])) continue;
      auto& [sum, n] = m[all[i].pattern];
      sum += time_error(all[i], pred[i]);
      ++n;
    }
    for (auto& [k, v] : m) v.first /= static_cast<double>(std::max<std::int64_t>(v.second, 1));
  };
  tally(out.in_sample_mape, out.predicted);
  if (!leave_one_out) return out;
  // Each row predicted by a refit on the others, started from the full fit (one start: the held-out
  // fit is a small perturbation of it).
  FitOptions quick;
  quick.extra_starts = 0;
  quick.max_iterations = 40;
  for (std::size_t k = 0; k < idx.size(); ++k) {
    if (free.empty() || idx.size() - 1 < free.size()) {
      out.held_out[idx[k]] = out.predicted[idx[k]];
      continue;
    }
    std::vector<std::size_t> rest;
    for (std::size_t j = 0; j < idx.size(); ++j)
      if (j != k) rest.push_back(idx[j]);
    auto p2 = params;
    for (std::size_t i = 0; i < free.size(); ++i) p2[i].start = best[static_cast<Eigen::Index>(i)];
    const auto fit = fit_least_squares([&](const Eigen::VectorXd& x) { return predict_rows(x, rest); }, observed(rest), p2, quick);
    out.held_out[idx[k]] = std::exp(predict_rows(fit.params, {idx[k]})[0]);
  }
  tally(out.held_out_mape, out.held_out);
  return out;
}

}  // namespace ringsim::calibration
