// The step simulator against the analytic model (where the analytic assumptions hold), against
// conservation laws, and against simple physics.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/catalog/resolve.hpp"
#include "models/analytic/analytic.hpp"
#include "models/io/error.hpp"
#include "sim/step.hpp"
#include "sim/trace.hpp"
#include "tests/support/scenario.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim;

namespace {

models::ResolvedScenario scenario(const std::string& model, std::int64_t mp, std::int64_t sp, std::int64_t n_seq,
                                  const std::string& layout, const std::string& mask, models::TileShape tile) {
  return test::resolve_scenario("h100-sxm", model, mp, sp, n_seq, layout, mask, tile);
}

using test::rebuild_cost;

// Links of effectively unlimited bandwidth and zero latency, perfect overlap: the regime in
// which the lock-step simulation must equal the closed form.
void make_ideal(models::ResolvedScenario& s) {
  s.hardware.intra_link_bandwidth_bytes_per_s = 1e30;
  s.hardware.inter_node_bandwidth_bytes_per_s = 1e30;
  s.profile.link_latency_s = 0.0;
  s.profile.p2p_latency_s = 0.0;
  s.profile.p2p_bandwidth_bytes_per_s = 0.0;
  s.profile.overlap = 1.0;
  rebuild_cost(s);
}


sim::StepOptions femto(sim::Sync sync) {
  sim::StepOptions o;
  o.sync = sync;
  o.ticks_per_s = sim::kFemtosecondsPerSecond;
  return o;
}

}  // namespace

TEST_CASE("lock-step simulation equals the analytic model with ideal links, every layout and mask", "[step]") {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 6; ++trial) {
    const std::int64_t sp = 2 + static_cast<std::int64_t>(rng() % 5);
    const std::int64_t c = 64 * (1 + static_cast<std::int64_t>(rng() % 4));
    // An explicit random permutation and random document boundaries, as files.
    std::vector<std::int64_t> perm(static_cast<std::size_t>(sp * c));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    const test::TempDir tmp;
    std::string perm_text, docs_text;
    for (auto t : perm) perm_text += std::to_string(t) + "\n";
    for (std::int64_t p = 0; p < sp * c; p += 1 + static_cast<std::int64_t>(rng() % 97)) docs_text += std::to_string(p) + "\n";
    const std::vector<std::string> layouts = {"contiguous", "striped", "zigzag", "cyclic:2",
                                              "perm:" + tmp.write("perm.txt", perm_text)};
    const std::vector<std::string> masks = {"causal", "full", "window:37", "docs:" + tmp.write("docs.txt", docs_text)};
    const std::int64_t mp = 1 + static_cast<std::int64_t>(rng() % 2);
    const models::TileShape tile{16 * (1 + static_cast<std::int64_t>(rng() % 4)), 16 * (1 + static_cast<std::int64_t>(rng() % 4))};
    for (const auto& layout : layouts)
      for (const auto& mask : masks) {
        auto s = scenario("ringattn-1b", mp, sp, sp * c, layout, mask, tile);
        make_ideal(s);
        const double analytic = models::predict(s).step_s;
        const auto barrier = sim::simulate_step(s, femto(sim::Sync::Barrier));
        const auto async = sim::simulate_step(s, femto(sim::Sync::Async));
        INFO(layout << " " << mask << " mp=" << mp << " sp=" << sp << " c=" << c);
        CHECK(barrier.step_s == Approx(analytic).epsilon(1e-9));
        // Without the barrier a device may run ahead: never slower than lock-step.
        CHECK(async.step_s <= barrier.step_s * (1 + 1e-12));
      }
  }
}

TEST_CASE("lock-step simulation equals the analytic model for every implementation and what it offers", "[step][impl]") {
  // Every implementation's kernel family (tile loop, flash-attention library steps with their
  // merges and host floors, SCFA's scans) is timed through the one seam both solvers read.
  const models::Catalog cat;
  std::mt19937_64 rng(7);
  std::int64_t checked = 0;
  for (const auto& name : cat.implementation_names()) {
    const auto im = cat.implementation(name);
    if (!im.runs_phase(models::RunPhase::Train)) continue;  // a serving stack has no training step
    const std::string hw = im.runs_on("gpu") ? "h100-sxm" : "tpu-v4";
    for (const std::string layout : {"contiguous", "striped", "zigzag", "cyclic:2"})
      for (const std::string mask : {"causal", "full", "window:37", "hash:4", "qkdrop:0.5"}) {
        const auto layout_spec = models::LayoutSpec::parse(layout);
        const auto mask_spec = models::MaskSpec::parse(mask);
        if (!im.offers_layout(layout_spec) || !im.offers_mask(mask_spec)) continue;
        if (!im.offers_strategy(models::Strategy{})) continue;
        if (!im.protocol.ring_steps.empty() &&
            !im.protocol.ring_steps.plan(mask_spec.family_name(), layout_spec.family_name()))
          continue;
        const std::int64_t sp = 2 + static_cast<std::int64_t>(rng() % 4);
        const std::int64_t c = 128 * (1 + static_cast<std::int64_t>(rng() % 3));
        const std::int64_t batch = 1 + static_cast<std::int64_t>(rng() % 2);
        models::ScenarioSpec spec;
        spec.hardware = hw;
        spec.model = "ringattn-1b";  // step times well above the femtosecond ticks
        spec.sp = sp;
        spec.n_seq = sp * c;
        spec.batch = batch;
        spec.layout = ringsim::models::LayoutSpec::parse(layout);
        spec.mask = ringsim::models::MaskSpec::parse(mask);
        spec.impl = name;
        spec.tile = models::TileShape{64, 64};
        auto s = models::resolve(spec, cat);
        make_ideal(s);
        const double analytic = models::predict(s).step_s;
        const auto barrier = sim::simulate_step(s, femto(sim::Sync::Barrier));
        INFO(name << " " << layout << " " << mask << " sp=" << sp << " c=" << c << " batch=" << batch);
        CHECK(barrier.step_s == Approx(analytic).epsilon(1e-9));
        ++checked;
      }
  }
  CHECK(checked >= 15);
}

TEST_CASE("lock-step simulation equals the analytic model where a library's step cost depends on the rank", "[step][impl]") {
  // ring-flash-attention's sliced merges run unfused from rank 2 on: blocks of one step class
  // then cost differently by device, and both solvers must key their per-class times by it.
  const models::Catalog cat;
  for (const std::string layout : {"zigzag", "striped"}) {
    models::ScenarioSpec spec;
    spec.hardware = "h100-sxm";
    spec.model = "attn:32:8:128";
    spec.sp = 8;
    spec.n_seq = 8 * 4096;
    spec.layout = models::LayoutSpec::parse(layout);
    spec.impl = "ring-flash-attn";
    auto s = models::resolve(spec, cat);
    REQUIRE(s.attention->block_variant(s, 3, 5) == 1);
    make_ideal(s);
    const double analytic = models::predict(s).step_s;
    INFO(layout);
    CHECK(sim::simulate_step(s, femto(sim::Sync::Barrier)).step_s == Approx(analytic).epsilon(1e-9));
  }
}

TEST_CASE("without a barrier, causal contiguous and striped rings still match the closed form", "[step]") {
  // Their last device is the busiest in every round and never waits, so the dependency chain
  // is the sum of per-round maxima.
  for (const char* layout : {"contiguous", "striped"}) {
    auto s = scenario("ringattn-1b", 1, 8, 8 * 512, layout, "causal", {64, 64});
    make_ideal(s);
    CHECK(sim::simulate_step(s, femto(sim::Sync::Async)).step_s == Approx(models::predict(s).step_s).epsilon(1e-9));
  }
}

TEST_CASE("conservation: bytes, tiles and compute", "[step]") {
  auto s = scenario("ringattn-1b", 2, 4, 4 * 1024, "striped", "causal", {128, 256});
  sim::StepOptions o;
  o.granularity = sim::Granularity::Tile;
  const auto tiles = sim::simulate_step(s, o);
  o.granularity = sim::Granularity::Round;
  const auto rounds = sim::simulate_step(s, o);
  // Per tile or per device-round: the same step.
  CHECK(tiles.step_s == rounds.step_s);
  CHECK(tiles.events > rounds.events);
  // Every device runs exactly its workload's tiles, forward and backward, every layer.
  std::int64_t visited = 0;
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 4; ++j) visited += s.workload->block(i, j).tiles_visited;
  CHECK(tiles.tiles_executed == visited * 2 /*rings*/ * 2 /*passes*/ * s.model.layers);
  CHECK(rounds.tiles_executed == tiles.tiles_executed);
  // Bytes sent equal bytes received on every link; K/V + dK/dV per hop add up.
  std::int64_t total = 0;
  for (const auto& l : rounds.link_bytes) {
    CHECK(l.bytes_sent == l.bytes_received);
    total += l.bytes_sent;
  }
  CHECK(total > 0);
  // Compute matrices add up to the busy time spent in attention.
  double matrix = 0;
  for (double x : rounds.compute_s) matrix += x;
  double busy = 0;
  for (double x : rounds.busy_s) busy += x;
  CHECK(matrix < busy);
  CHECK(matrix > 0);
  for (double w : rounds.wait_s) CHECK(w >= 0);
}

TEST_CASE("physics: bandwidth matters only when the ring is transfer-bound", "[step]") {
  SECTION("compute-bound: halving link bandwidth costs only the last, unhideable hop") {
    // Every K/V and dK/dV transfer hides behind compute except the accumulators' final trip
    // home after the last backward round: once per layer.
    auto s = scenario("ringattn-1b", 1, 4, 4 * 16384, "striped", "causal", {1024, 1024});
    // NCCL's kernel beside each step would make every hidden transfer's length count too (its SMs
    // are held while it runs): looked at alone in test_nccl_beside.cpp.
    s.cost->set_comm_sm_share(0, 0);
    const double base = sim::simulate_step(s, {}).step_s;
    const double bw = s.hardware.intra_link_bandwidth_bytes_per_s * s.profile.link_efficiency;
    const double dkv_bytes = static_cast<double>(s.workload->kv_block_bytes()) *
                             static_cast<double>(s.profile.dkv_wire_bytes) / static_cast<double>(s.profile.kv_wire_bytes);
    s.hardware.intra_link_bandwidth_bytes_per_s /= 2;
    rebuild_cost(s);
    s.cost->set_comm_sm_share(0, 0);
    const double halved = sim::simulate_step(s, {}).step_s;
    CHECK(halved - base == Approx(static_cast<double>(s.model.layers) * dkv_bytes / bw).epsilon(1e-6));
  }
  SECTION("transfer-bound: halving bandwidth adds the exposed transfer time once more") {
    // A tiny attention-only model: compute is negligible next to moving K/V.
    auto s = scenario("attn:1:1:64", 1, 4, 4 * 256, "striped", "causal", {64, 64});
    s.profile.link_latency_s = 0.0;
    rebuild_cost(s);
    auto at = [&](double bw) {
      s.hardware.intra_link_bandwidth_bytes_per_s = bw;
      rebuild_cost(s);
      return sim::simulate_step(s, femto(sim::Sync::Async)).step_s;
    };
    const double compute_only = at(1e30);
    const double full = at(1e8);
    const double half = at(5e7);
    INFO("compute only " << compute_only << " full " << full << " half " << half);
    CHECK(full > 10 * compute_only);
    CHECK(half - full == Approx(full - compute_only).epsilon(0.02));
  }
}

TEST_CASE("the Chrome trace parses back as Trace Event JSON", "[step][trace]") {
  auto s = scenario("ringattn-1b", 1, 4, 4 * 1024, "contiguous", "causal", {256, 256});
  sim::StepOptions o;
  o.record_trace = true;
  const auto r = sim::simulate_step(s, o);
  const auto doc = nlohmann::json::parse(sim::chrome_trace_json(r));
  REQUIRE(doc.contains("traceEvents"));
  const auto& ev = doc["traceEvents"];
  REQUIRE(ev.is_array());
  std::size_t complete = 0, with_round = 0;
  std::int64_t max_round = -1;
  for (const auto& e : ev) {
    REQUIRE(e.contains("ph"));
    if (e["ph"] == "X") {
      ++complete;
      CHECK(e["ts"].get<double>() >= 0);
      CHECK(e["dur"].get<double>() >= 0);
      CHECK(e["tid"].get<std::int64_t>() < static_cast<std::int64_t>(r.lanes.size()));
      // An attention span of round r is named "... rR" and carries the round for Perfetto's
      // details; no other span carries one.
      const auto name = e["name"].get<std::string>();
      const auto at = name.rfind(" r");
      const bool ring_span = name.starts_with("attn") && at != std::string::npos;
      if (ring_span) {
        REQUIRE(e.contains("args"));
        CHECK(std::to_string(e["args"]["round"].get<std::int64_t>()) == name.substr(at + 2));
        ++with_round;
        max_round = std::max(max_round, e["args"]["round"].get<std::int64_t>());
      } else {
        CHECK_FALSE(e.contains("args"));
      }
    }
  }
  CHECK(complete == r.trace.size());
  CHECK(complete > 0);
  CHECK(with_round > 0);
  CHECK(max_round == 3);  // a ring of 4 has rounds 0..3, and the last device computes in its last
  const auto csv = sim::matrices_csv(r);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 4 * 4);
}

TEST_CASE("bad simulation input is rejected", "[step][errors]") {
  auto s = scenario("ringattn-1b", 1, 4, 4 * 1024, "striped", "causal", {256, 256});
  sim::StepOptions o;
  o.buffers = 0;
  CHECK_THROWS_AS(sim::simulate_step(s, o), models::InputError);
  o.buffers = 2;
  o.topology = "node:2";  // 4 devices do not fit
  CHECK_THROWS_AS(sim::simulate_step(s, o), models::InputError);
  o.topology = "ring:4";
  CHECK_THROWS_AS(sim::simulate_step(s, o), models::InputError);
  o.topology = "";
  s.hardware.intra_link_bandwidth_bytes_per_s = 0;
  CHECK_THROWS_AS(sim::simulate_step(s, o), models::InputError);
}

TEST_CASE("one buffer serialises transfers with compute", "[step]") {
  auto s = scenario("ringattn-1b", 1, 4, 4 * 4096, "striped", "causal", {512, 512});
  sim::StepOptions two, one;
  one.buffers = 1;
  const auto r2 = sim::simulate_step(s, two);
  const auto r1 = sim::simulate_step(s, one);
  CHECK(r1.step_s > r2.step_s);
  CHECK(r1.exposed_communication_s > r2.exposed_communication_s);
}

TEST_CASE("replayed and per-layer passes give the whole-step pass's step, matrices and bytes", "[step][layers]") {
  std::mt19937_64 rng(7);
  const std::vector<std::string> layouts = {"contiguous", "striped", "zigzag", "cyclic:2"};
  // Tensor-parallel rings share the devices' links with the ring hops: those steps go layer by
  // layer only while no link carries two layers' traffic at once, else as one pass; both counted.
  int tp_apart = 0, tp_whole = 0;
  for (int trial = 0; trial < 16; ++trial) {
    const std::int64_t sp = 2 + static_cast<std::int64_t>(rng() % 7);
    const std::int64_t mp = trial % 2 == 1 ? 2 + 2 * static_cast<std::int64_t>(trial % 4 == 3) : 1;
    const std::int64_t c = 256 * (1 + static_cast<std::int64_t>(rng() % 4));
    const auto& layout = layouts[rng() % layouts.size()];
    auto s = scenario("ringattn-1b", mp, sp, sp * c, layout, trial % 3 == 0 ? "window:300" : "causal", {128, 128});
    // Slow links on some trials, so that transfers (and the backward pass's shared hop) matter.
    if (trial % 2 == 1) {
      s.hardware.intra_link_bandwidth_bytes_per_s = 2e9;
      s.hardware.inter_node_bandwidth_bytes_per_s = 1e9;
      rebuild_cost(s);
    }
    sim::StepOptions o;
    o.buffers = 1 + static_cast<std::int64_t>(rng() % 2);
    o.sync = rng() % 4 == 0 ? sim::Sync::Barrier : sim::Sync::Async;
    const auto topo = rng() % 3;  // one device per node (NIC hops), the default, or a torus
    o.topology = topo == 0 ? "" : topo == 1 ? "nodes:" + std::to_string(mp * sp) + "x1" : "torus:" + std::to_string(mp) + "x" + std::to_string(sp);
    o.layer_passes = sim::LayerPasses::Whole;
    const auto whole = sim::simulate_step(s, o);
    o.layer_passes = sim::LayerPasses::PerLayer;
    const auto per_layer = sim::simulate_step(s, o);
    o.layer_passes = sim::LayerPasses::Replay;
    const auto replay = sim::simulate_step(s, o);
    INFO(layout << " mp=" << mp << " sp=" << sp << " c=" << c << " buffers=" << o.buffers << " topology=" << whole.topology);
    CHECK(whole.passes_simulated == 1);
    if (mp == 1) {
      CHECK(per_layer.passes_simulated >= 2 * s.model.layers);
      CHECK(replay.passes_simulated + replay.passes_reused == per_layer.passes_simulated);
    } else if (replay.passes_simulated + replay.passes_reused >= 2 * s.model.layers) {
      ++tp_apart;
    } else {
      ++tp_whole;
      // The overlap was found while going layer by layer: the abandoned passes count as simulated.
      CHECK(replay.passes_reused == 0);
    }
    for (const auto* r : {&per_layer, &replay}) {
      CHECK(r->step_s == Approx(whole.step_s).epsilon(1e-12));
      CHECK(r->tiles_executed == whole.tiles_executed);
      REQUIRE(r->wait_s.size() == whole.wait_s.size());
      for (std::size_t i = 0; i < whole.wait_s.size(); ++i) {
        CHECK(r->compute_s[i] == Approx(whole.compute_s[i]).epsilon(1e-12));
        CHECK(r->wait_s[i] == Approx(whole.wait_s[i]).epsilon(1e-9).margin(1e-15));
        CHECK(r->transfer_s[i] == Approx(whole.transfer_s[i]).epsilon(1e-9).margin(1e-15));
      }
      for (std::size_t d = 0; d < whole.busy_s.size(); ++d) CHECK(r->busy_s[d] == Approx(whole.busy_s[d]).epsilon(1e-12));
      REQUIRE(r->link_bytes.size() == whole.link_bytes.size());
      for (std::size_t l = 0; l < whole.link_bytes.size(); ++l) {
        CHECK(r->link_bytes[l].bytes_sent == whole.link_bytes[l].bytes_sent);
        CHECK(r->link_bytes[l].bytes_received == whole.link_bytes[l].bytes_received);
      }
    }
  }
  INFO("tensor-parallel trials layer by layer: " << tp_apart << ", as one pass: " << tp_whole);
  CHECK(tp_apart > 0);
  CHECK(tp_whole > 0);  // and the overlap is found where there is one (slow links: the backward's last hop home)
}


TEST_CASE("identical layers are replayed once their entry times repeat", "[step][layers]") {
  // 32 identical layers: once the devices enter a layer as they entered the previous one, the
  // rest of the pass direction is replayed, so far fewer passes run than there are layers.
  auto s = scenario("llama2-7b", 1, 16, 16 * 1024, "striped", "causal", {128, 128});
  const auto r = sim::simulate_step(s, {});
  INFO("simulated " << r.passes_simulated << " reused " << r.passes_reused);
  CHECK(r.passes_reused > 0);
  CHECK(r.passes_simulated < s.model.layers);
  sim::StepOptions whole;
  whole.layer_passes = sim::LayerPasses::Whole;
  const auto w = sim::simulate_step(s, whole);
  CHECK(r.step_s == Approx(w.step_s).epsilon(1e-12));
  CHECK(r.events < w.events);
}

TEST_CASE("rings that share links go layer by layer while no link carries two layers at once", "[step][layers]") {
  // Two rings on a torus whose routes share links, so layers may interact: each layer's first
  // and last use of every link is checked against the layers before it.
  auto s = scenario("ringattn-1b", 2, 4, 4 * 1024, "striped", "causal", {256, 256});
  sim::StepOptions o;
  o.topology = "torus:2x4";
  const auto r = sim::simulate_step(s, o);
  o.layer_passes = sim::LayerPasses::Whole;
  const auto w = sim::simulate_step(s, o);
  CHECK(r.passes_simulated + r.passes_reused >= 2 * s.model.layers);
  CHECK(r.passes_reused > 0);
  CHECK(r.step_s == Approx(w.step_s).epsilon(1e-12));
  CHECK(r.events < w.events);
}

TEST_CASE("tensor-parallel all-reduces on the topology take the ring all-reduce's closed form", "[step][tp]") {
  // One ring position (sp = 1) and mp devices in one node: no ring traffic, so each all-reduce
  // is 2 (mp - 1) chunk transfers in sequence, each crossing the device's NVSwitch link pair.
  for (const std::int64_t mp : {2, 4, 8}) {
    auto s = scenario("ringattn-1b", mp, 1, 8192, "contiguous", "causal", {256, 256});
    sim::StepOptions o;
    o.ticks_per_s = sim::kFemtosecondsPerSecond;
    const auto with_tp = sim::simulate_step(s, o);
    // The same step without the all-reduces: the analytic ops minus the collectives.
    const auto analytic = models::predict(s);
    double collectives = 0;
    models::StepShape shape;
    shape.tokens = s.layout->block();
    shape.batch = s.spec.batch;
    shape.mp = mp;
    shape.recompute = s.profile.recompute;
    std::int64_t count = 0;
    double bytes = 0;
    for (const auto& op : models::step_ops(s.model, shape))
      if (op.kind == models::OpKind::Collective) {
        collectives += s.cost->op_s(op, false) * static_cast<double>(s.model.layers);
        ++count;
        bytes = op.bytes;
      }
    REQUIRE(count == 4);
    // Route: device -> NVSwitch -> device, both links at the NVLink bandwidth, the hop's latency
    // once (half of it on each link, sim/topology.hpp's Fabric).
    const double bw = s.hardware.intra_link_bandwidth_bytes_per_s * s.profile.link_efficiency;
    const double lat = s.profile.link_latency_s.value_or(s.hardware.intra_link_latency_s);
    const double chunk = std::ceil(bytes / static_cast<double>(mp));
    const double per_all_reduce = 2.0 * static_cast<double>(mp - 1) * (lat + chunk / bw);
    const double expected_tp = per_all_reduce * 4 * static_cast<double>(s.model.layers);
    INFO("mp=" << mp << " simulated " << with_tp.step_s << " analytic " << analytic.step_s);
    // Everything else in this step is device-local and equal on every device, so the
    // simulated step is the analytic one with its all-reduce term replaced by the routed one.
    CHECK(with_tp.step_s == Approx(analytic.step_s - collectives + expected_tp).epsilon(1e-9));
    CHECK(with_tp.exposed_communication_s >= expected_tp * (1 - 1e-9));
  }
}
