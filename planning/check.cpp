#include "planning/check.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "models/catalog/resolve.hpp"
#include "models/analytic/analytic.hpp"
#include "models/io/checked.hpp"
#include "models/io/error.hpp"
#include "models/io/limits.hpp"
#include "models/implementations/implementation.hpp"
#include "models/io/parse.hpp"

namespace ringsim::planning {

using models::InputError;

namespace {

// Cell readers located at (file, line, column).
struct Row {
  const Table& t;
  std::size_t i;
  [[nodiscard]] std::string text(std::optional<std::size_t> c, const std::string& fallback = {}) const {
    if (!c) return fallback;
    const auto v = models::trim(t.rows[i][*c]);
    return v.empty() ? fallback : std::string(v);
  }
  // A positive integer of at most `max` (counts of devices, tokens, heads: bounded so that
  // their products below stay exact), or nullopt for an empty cell.
  [[nodiscard]] std::optional<std::int64_t> count(std::optional<std::size_t> c, std::int64_t max) const {
    const auto v = text(c);
    if (v.empty()) return std::nullopt;
    std::int64_t x = 0;
    try {
      x = models::parse_positive_int(v, t.header[*c]);
    } catch (const InputError& e) {
      throw InputError(t.file, t.lines[i], t.header[*c], e.message());
    }
    if (x > max)
      throw InputError(t.file, t.lines[i], t.header[*c],
                       fmt::format("{} is larger than the {} ringsim checks", x, max));
    return x;
  }
  // A positive finite number, or nullopt for an empty cell or a word (OOM, n/a); nan, inf and
  // signed values are errors.
  [[nodiscard]] std::optional<double> measurement(std::optional<std::size_t> c) const {
    const auto v = text(c);
    if (v.empty()) return std::nullopt;
    const bool word = std::all_of(v.begin(), v.end(), [](char ch) {
      return std::isalpha(static_cast<unsigned char>(ch)) != 0 || ch == '/' || ch == '_';
    });
    std::string lower;
    for (const char ch : v) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (word && lower != "nan" && lower != "inf" && lower != "infinity") return std::nullopt;
    double x = 0;
    try {
      x = models::parse_double(v, t.header[*c]);
    } catch (const InputError& e) {
      throw InputError(t.file, t.lines[i], t.header[*c], e.message());
    }
    if (!(x > 0)) throw InputError(t.file, t.lines[i], t.header[*c], "expected a positive measurement");
    return x;
  }
};

// Implied rates of absurd measurements (1e308 iterations per second) may overflow: said so.
std::string tflops(double f) {
  return std::isfinite(f / 1e12) ? fmt::format("{:.0f} TFLOP/s", f / 1e12) : std::string("more than 1e300 TFLOP/s");
}
std::string gbps(double b) {
  return std::isfinite(b / 1e9) ? fmt::format("{:.1f} GB/s", b / 1e9) : std::string("more than 1e300 GB/s");
}

// Bounds of the counts a row may give: the devices ringsim models, 2^40 tokens, the batch and
// head counts the model files allow. Their products are formed in checked arithmetic.
constexpr std::int64_t kMaxTokens = std::int64_t{1} << 40;
constexpr std::int64_t kMaxHeads = 65536;

}  // namespace

std::vector<Finding> check_measurements(const Table& t, const models::Catalog& catalog, const CheckOptions& options) {
  const auto c_hw = t.column("hardware");
  if (!c_hw && options.hardware.empty())
    throw InputError(t.file, 1, "hardware", "missing column (or give the hardware with --hardware)");
  const auto c_devices = t.column_of({"devices", "gpus"});
  const auto c_mp = t.column("mp"), c_sp = t.column("sp"), c_dp = t.column("dp"), c_pp = t.column("pp");
  const auto c_ring = t.column("ring_degree"), c_uly = t.column("ulysses_degree");
  const auto c_model = t.column("model");
  const auto c_heads = t.column_of({"heads", "heads_q"}), c_kv = t.column_of({"kv_heads", "heads_kv"});
  const auto c_hd = t.column("head_dim");
  const auto c_n = t.column_of({"n_seq", "n_seq_total"});
  const auto c_batch = t.column("batch");
  const auto c_layout = t.column("layout"), c_cp = t.column("cp"), c_causal = t.column("causal");
  const auto c_pass = t.column("pass"), c_precision = t.column("precision");
  const auto c_tokens = t.column("tokens_per_s"), c_step = t.column("step_s"), c_iter = t.column("iter_per_s");
  const auto c_tflops = t.column_of({"tflops_per_device", "tflops_per_gpu"});
  if (!c_n) throw InputError(t.file, 1, "n_seq", "missing column (the global sequence length)");
  if (!c_model && !(c_heads && c_kv && c_hd))
    throw InputError(t.file, 1, "model", "missing column: give model, or heads, kv_heads and head_dim");

  std::map<std::string, models::Hardware> hardware;
  std::map<std::string, models::ModelConfig> models_by_name;
  std::vector<Finding> findings;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const Row row{t, i};
    std::vector<std::string> broken;
    const auto at = [&](const std::string& field, const auto& f) {
      try {
        return f();
      } catch (const InputError& e) {
        throw InputError(t.file, t.lines[i], field, e.message());
      }
    };
    const std::string hw_name = options.hardware.empty() ? row.text(c_hw) : options.hardware;
    auto hw_it = hardware.find(hw_name);
    if (hw_it == hardware.end()) hw_it = hardware.emplace(hw_name, at("hardware", [&] { return catalog.hardware(hw_name); })).first;
    const auto& hw = hw_it->second;

    const auto n_given = row.count(c_n, kMaxTokens);
    if (!n_given) throw InputError(t.file, t.lines[i], t.header[*c_n], "expected the sequence length");
    const std::int64_t n = *n_given;
    const std::int64_t batch = row.count(c_batch, models::kMaxBatch).value_or(1);
    const std::int64_t mp = row.count(c_mp, models::kMaxDevices).value_or(1);
    const std::int64_t dp = row.count(c_dp, models::kMaxDevices).value_or(1);
    const std::int64_t pp = row.count(c_pp, models::kMaxDevices).value_or(1);  // pipeline stages
    const auto uly = row.count(c_uly, models::kMaxDevices);
    const auto ring = row.count(c_ring, models::kMaxDevices);
    const auto sp_given = row.count(c_sp, models::kMaxDevices);
    const auto devices_given = row.count(c_devices, models::kMaxDevices);
    // The sequence is split over ring x Ulysses devices (sp alone: a ring). Each count is at
    // most 2^20, so every product of two is exact; longer ones are checked.
    const std::int64_t u = uly.value_or(1);
    const std::int64_t r = ring.value_or(
        sp_given.value_or(devices_given ? std::max<std::int64_t>(1, *devices_given / (pp * mp * dp * u)) : 1));
    const std::int64_t mesh = at("devices", [&] {
      return models::checked_product({pp, dp, mp, r, u}, "devices", "the mesh pp x dp x mp x ring x ulysses");
    });
    const std::int64_t devices = devices_given.value_or(mesh);
    const std::string layout_text = row.text(c_layout, "contiguous");
    const std::string causal_text = row.text(c_causal, "true");
    if (causal_text != "true" && causal_text != "false")
      throw InputError(t.file, t.lines[i], "causal", "expected true or false, got '" + causal_text + "'");
    const bool causal = causal_text == "true";
    const auto layout = at("layout", [&] { return models::LayoutSpec::parse(layout_text); });

    // Configurations.
    if (devices_given && mesh != *devices_given)
      broken.push_back(fmt::format("the mesh pp x dp x mp x ring x ulysses = {} x {} x {} x {} x {} = {} is not the {} devices",
                                   pp, dp, mp, r, u, mesh, *devices_given));
    std::optional<models::ModelConfig> model;
    std::int64_t heads = 0, kv_heads = 0, head_dim = 0;
    if (c_model && !row.text(c_model).empty()) {
      const auto name = row.text(c_model);
      auto it = models_by_name.find(name);
      if (it == models_by_name.end()) it = models_by_name.emplace(name, at("model", [&] { return catalog.model(name); })).first;
      model = it->second;
      heads = model->heads, kv_heads = model->kv_heads, head_dim = model->head_dim;
    } else {
      const auto required = [&](std::optional<std::size_t> c) {
        const auto v = row.count(c, kMaxHeads);
        if (!v) throw InputError(t.file, t.lines[i], t.header[*c], "expected a positive integer (no model column)");
        return *v;
      };
      heads = required(c_heads);
      kv_heads = required(c_kv);
      head_dim = required(c_hd);
    }
    const std::string cp = row.text(c_cp);
    // The strategy's family (a measurement names the kind; its degrees are columns).
    static const char* const kFamilies[] = {"ring", "ulysses", "hybrid", "usp", "allgather", "all-gather", "double-ring"};
    if (!cp.empty() && std::find(std::begin(kFamilies), std::end(kFamilies), cp.substr(0, cp.find(':'))) == std::end(kFamilies))
      throw InputError(t.file, t.lines[i], "cp",
                       "expected ring, ulysses, hybrid (usp), allgather or double-ring, got '" + cp + "'");
    if ((cp == "ring" && u > 1) || (cp == "ulysses" && r > 1))
      broken.push_back(fmt::format("cp {} with a ring of {} and a Ulysses degree of {}", cp, r, u));
    if (heads % mp != 0) broken.push_back(fmt::format("tensor parallelism {} does not split the {} heads", mp, heads));
    if (u > kv_heads)
      broken.push_back(fmt::format("Ulysses degree {} is above the {} K/V heads (each device needs a whole K/V head)", u,
                                   kv_heads));
    else if (heads % u != 0 || kv_heads % u != 0)
      broken.push_back(fmt::format("Ulysses degree {} does not divide the {} heads and {} K/V heads", u, heads, kv_heads));
    const std::int64_t chunks = r * u * (layout.family() == models::LayoutFamily::Zigzag ? 2 : 1);  // at most 2^41
    if (n % chunks != 0)
      broken.push_back(fmt::format("n_seq {} is not divisible into the {} equal chunks {} on {} x {} devices needs", n,
                                   chunks, layout_text, r, u));

    // Throughput: iterations (steps) per second.
    std::optional<double> per_s;
    if (const auto v = row.measurement(c_iter)) per_s = *v;
    else if (const auto s = row.measurement(c_step)) per_s = 1.0 / *s;
    else if (const auto k = row.measurement(c_tokens))
      per_s = *k / (static_cast<double>(n) * static_cast<double>(batch) * static_cast<double>(dp));
    // A reported FLOP rate per device is held against the peak directly.
    if (const auto tf = row.measurement(c_tflops); tf && broken.empty()) {
      const auto precision = at("precision", [&] { return models::parse_precision(row.text(c_precision, "bf16")); });
      const double peak = at("precision", [&] { return hw.peak_flops_per_s(precision); });
      if (*tf * 1e12 > peak)
        broken.push_back(fmt::format("reports {} per device, above {}'s dense peak {} ({})", tflops(*tf * 1e12), hw.name,
                                     tflops(peak), models::to_string(precision)));
    }
    if (per_s && broken.empty()) {
      const std::string pass = row.text(c_pass, model ? "train" : "fwd+bwd");
      if (pass != "fwd" && pass != "fwd+bwd" && pass != "train")
        throw InputError(t.file, t.lines[i], "pass", "expected fwd, fwd+bwd or train, got '" + pass + "'");
      const double passes = pass == "fwd" ? 1.0 : 3.0;  // backward: twice the forward's matmuls
      const auto precision = at("precision", [&] { return models::parse_precision(row.text(c_precision, "bf16")); });
      const double peak = at("precision", [&] { return hw.peak_flops_per_s(precision); });
      // Useful FLOPs per device per iteration.
      double flops = 0;
      const double nd = static_cast<double>(n);
      const double pairs = causal ? nd * (nd + 1) / 2 : nd * nd;
      const double attention = 4 * pairs * static_cast<double>(head_dim) * static_cast<double>(heads) *
                               static_cast<double>(batch) / static_cast<double>(mesh);
      if (model && !model->attention_only) {
        // A training step of the whole model: the analytic model's useful FLOPs on one device of
        // the mp x sp mesh (ring x ulysses devices share the sequence as sp would).
        models::ScenarioSpec spec;
        spec.hardware = hw.name;
        spec.model = model->name;
        spec.mp = mp;
        spec.sp = r * u;
        spec.n_seq = n;
        spec.batch = batch;
        spec.mask = models::MaskSpec::parse(causal ? "causal" : "full");
        spec.tile = models::TileShape{std::min<std::int64_t>(128, n / spec.sp), std::min<std::int64_t>(128, n / spec.sp)};
        const auto s = at("model", [&] { return models::resolve(spec, catalog); });
        flops = models::predict(s).model_flops * (pass == "fwd" ? 1.0 / 3.0 : 1.0);
      } else {
        flops = attention * passes;
      }
      const double implied = flops * *per_s;
      if (implied > peak)
        broken.push_back(fmt::format("implies {} of useful work per device, above {}'s dense peak {} ({})", tflops(implied),
                                     hw.name, tflops(peak), models::to_string(precision)));
      // Bytes each device must send per iteration: the ring's K/V blocks (per layer), Ulysses'
      // all-to-all of Q, K, V and the output; bf16, no recomputation.
      const double layers = model ? static_cast<double>(model->layers) : 1.0;
      const double block_tokens = nd / static_cast<double>(r);
      const double kv_block = block_tokens * static_cast<double>(std::max<std::int64_t>(1, kv_heads / (u * mp))) *
                              static_cast<double>(head_dim) * 2 * 2 * static_cast<double>(batch);
      double bytes = static_cast<double>(r - 1) * kv_block * passes;
      if (u > 1) {
        const double local = nd / static_cast<double>(r * u) * static_cast<double>(batch);
        const double widths = static_cast<double>((2 * heads + 2 * kv_heads) * head_dim) / static_cast<double>(mp);
        bytes += static_cast<double>(u - 1) / static_cast<double>(u) * local * widths * 2 * passes;
      }
      bytes *= layers;
      const bool inter = devices > hw.devices_per_node;
      const double link = inter ? hw.inter_node_bandwidth_bytes_per_s : hw.intra_link_bandwidth_bytes_per_s;
      if (bytes * *per_s > link)
        broken.push_back(fmt::format("moves at least {} per device, above the {} link's {} per direction",
                                     gbps(bytes * *per_s), inter ? "inter-node" : "NVLink/ICI", gbps(link)));
    }
    if (broken.empty()) continue;
    std::string what;
    for (const auto& b : broken) what += (what.empty() ? "" : "; ") + b;
    findings.push_back({t.lines[i], what});
  }
  return findings;
}

}  // namespace ringsim::planning
