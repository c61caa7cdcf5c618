#include "models/analytic/packed_model.hpp"

#include <algorithm>
#include <numeric>

#include "models/families/attention_cost.hpp"
#include "models/workload/documents.hpp"
#include "models/io/error.hpp"
#include "models/program/program.hpp"
#include "models/implementations/strategy.hpp"

namespace ringsim::models {

PackedModel::PackedModel(const ScenarioSpec& spec, const ScenarioParts& parts) : layout_(DocLayout::of(spec.layout)) {
  ScenarioSpec s = spec;
  if (!s.docs) s.docs = DocumentsSpec::given("packed");
  // The positions the layout spreads a batch over: the ring's (usp: its R), and the group's (usp
  // lays the sequence out over all sp ranks too, before the all-to-all).
  const Strategy& strategy = s.cp;
  const std::int64_t positions = strategy.has_ring() ? strategy.ring_degree(s.sp) : s.sp;
  if (positions <= 0 || s.sp <= 0 || s.n_seq <= 0) throw InputError({}, 0, "cp", "the strategy needs a positive group size");
  layout_.check(s.n_seq, s.sp);
  layout_.check(s.n_seq, positions);
  quantum_ = std::lcm(layout_.document_quantum(s.sp), layout_.document_quantum(positions));
  // A stand-in batch of one document: the program's stages, transfers and the rest of the step
  // depend on n_seq, not on the documents.
  auto one = std::make_shared<Documents>();
  one->spec = s.docs->text();
  one->lengths = {s.n_seq};
  scenario_ = resolve(s, parts, std::move(one));
  // A family that is not additive (the flash family: CTA waves, a host floor per step or call)
  // cannot time summed counts. A ring's round is then timed block by block; Ulysses' calls, one
  // causal call per document on every rank whatever the layout, are built from the lengths and
  // timed call by call; an all-gather rank's calls, one per run of its queries within a
  // document, are listed by the counting (RankWork::calls) and timed call by call, as
  // models::allgather_calls and the program's builder give them.
  ring_additive_ = scenario_.ring_scenario().attention->additive();
  const bool additive = scenario_.attention->additive();
  per_call_ = !additive && scenario_.program->kind == StrategyKind::Ulysses;
  allgather_calls_ = !additive && scenario_.program->kind == StrategyKind::AllGather;
  if (allgather_calls_ && layout_.kind == DocLayoutKind::Striped)
    throw InputError({}, 0, "layout",
                     "implementation " + scenario_.impl.name + "'s kernel family " +
                         std::string(scenario_.attention->family()) +
                         " times an all-gather call by call, and a striped all-gather issues one call per token; "
                         "plan it with a contiguous, zigzag or per-document layout");
  rest_ = step_rest(scenario_);
  const double device_heads = static_cast<double>(scenario_.cost->heads_per_device());
  for (const auto& t : scenario_.program->compute) {
    // Every call of a table attends the same heads (all-gather: a slice's; Ulysses: heads / U).
    const bool any = !t.lists.empty() && !t.lists.front().empty();
    table_heads_.push_back(any ? static_cast<double>(t.lists.front().front().heads) / device_heads : 1.0);
    table_call_.push_back(any ? t.lists.front().front() : AttentionCall{});
  }
}

Prediction PackedModel::predict(std::span<const std::int64_t> lengths, Workspace& ws) const {
  const ResolvedScenario& s = scenario_;
  const Program& prog = *s.program;
  const std::int64_t n_seq = s.spec.n_seq;
  if (prog.has_ring()) {
    const ResolvedScenario& rs = s.ring_scenario();
    const std::int64_t n = rs.spec.sp, c = rs.layout->block();
    const AttentionCost& attention = *rs.attention;
    ws.counter.ring(layout_, lengths, n_seq, n, ws.pairs);
    ws.rounds.assign(static_cast<std::size_t>(n), RingRoundWork{});
    const bool one_ring = prog.window <= 0 || prog.window >= n;
    // The K/V position that position p holds in round i. One ring: the block of p - i (mod n),
    // Program::kv_position's case without its division.
    const auto kv_of = [&](std::int64_t p, std::int64_t i) {
      return one_ring ? (p >= i ? p - i : p - i + n) : prog.kv_position(p, i);
    };
    for (std::int64_t i = 0; i < n && !ring_additive_; ++i) {
      // Every position's block timed on its own, those without work included (a library still
      // issues the step: the host floor), as predict times every device's block.
      RingRoundWork& w = ws.rounds[static_cast<std::size_t>(i)];
      for (std::int64_t p = 0; p < n; ++p) {
        const std::int64_t k = kv_of(p, i);
        const std::int64_t pairs = ws.pairs.at(p, k);
        const RoundCost rc = attention.block(rs, p, k, element_stats(pairs, c * c));
        w.add_busiest(rc);
        w.fwd_sum_s += rc.fwd_s;
        w.bwd_sum_s += rc.bwd_s;
        w.max_area = std::max(w.max_area, pairs);
        w.sum_area += pairs;
        w.sum_allowed += pairs;
      }
    }
    // An additive family: each round's busiest position's block and the sum over positions with
    // work, timed as one block each (the sum's time is the positions' total).
    for (std::int64_t i = 0; i < n && ring_additive_; ++i) {
      std::int64_t most = 0, sum = 0, busy = 0;
      for (std::int64_t p = 0; p < n; ++p) {
        const std::int64_t pairs = ws.pairs.at(p, kv_of(p, i));
        most = std::max(most, pairs);
        sum += pairs;
        busy += pairs > 0;
      }
      RingRoundWork& w = ws.rounds[static_cast<std::size_t>(i)];
      w.max_area = most;
      w.sum_area = sum;
      w.sum_allowed = sum;
      if (most == 0) continue;
      const RoundCost busiest = attention.block(rs, 0, 0, element_stats(most, c * c));
      const RoundCost total = attention.block(rs, 0, 0, element_stats(sum, busy * c * c));
      w.add_busiest(busiest);
      w.fwd_sum_s = total.fwd_s;
      w.bwd_sum_s = total.bwd_s;
    }
  }
  std::int64_t table_pairs = 0;
  ws.tables.resize(prog.compute.size());
  if (!prog.compute.empty()) {
    // Every rank's calls, as one block of their summed counts (all-gather: per rank; Ulysses:
    // one causal call per document on every rank, with its share of the heads).
    const std::int64_t n = s.spec.sp;
    if (prog.kind == StrategyKind::AllGather) {
      ws.ranks.keep_calls = allgather_calls_;
      ws.counter.allgather(layout_, lengths, n_seq, n, ws.ranks);
    } else {
      const DocumentTotals t = document_totals(lengths);
      ws.ranks.pairs.assign(static_cast<std::size_t>(n), t.pairs);
      ws.ranks.area.assign(static_cast<std::size_t>(n), t.area);
    }
    if (per_call_) {
      // Ulysses under a family timed per call: as models::ulysses_calls and the program's
      // builder, one causal call per document length (documents of one length merged into a
      // batch), with the heads of the stand-in's call; padding attends nothing.
      ws.shapes.clear();
      for (const auto len : lengths) ++ws.shapes[len];
    }
    for (std::size_t t = 0; t < prog.compute.size(); ++t) {
      auto& table = ws.tables[t];
      // One causal piece of a rank's varlen call: `count` documents' q_len queries against the
      // keys ending at their last query, with the stand-in call's heads.
      const auto piece = [&](std::int64_t q_len, std::int64_t k_len, std::int64_t count) {
        AttentionCall call = table_call_[t];
        call.q_len = q_len;
        call.k_len = k_len;
        call.causal = true;
        call.diagonal = k_len - q_len;
        call.batch = count * s.spec.batch;
        call.varlen = lengths.size() > 1;
        ws.calls.push_back(call);
      };
      if (per_call_) {
        ws.calls.clear();
        for (const auto& [len, count] : ws.shapes) piece(len, len, count);
        const RoundCost rc = s.attention->calls(s, ws.calls);
        table.seconds.assign(static_cast<std::size_t>(n), prog.compute[t].backward ? rc.bwd_s : rc.fwd_s);
        table.tiles.assign(static_cast<std::size_t>(n), 0);
        continue;
      }
      table.seconds.resize(static_cast<std::size_t>(n));
      table.tiles.assign(static_cast<std::size_t>(n), 0);
      if (allgather_calls_) {
        // Each rank's calls merged by shape (a varlen call's pieces of one shape batched), with
        // the stand-in call's heads, as the program's builder lists them.
        for (std::int64_t r = 0; r < n; ++r) {
          auto& calls = ws.ranks.calls[static_cast<std::size_t>(r)];
          std::sort(calls.begin(), calls.end());
          ws.calls.clear();
          for (std::size_t i = 0; i < calls.size();) {
            std::size_t j = i;
            while (j < calls.size() && calls[j] == calls[i]) ++j;
            piece(calls[i].first, calls[i].second, static_cast<std::int64_t>(j - i));
            i = j;
          }
          const RoundCost rc = s.attention->calls(s, ws.calls);
          table.seconds[static_cast<std::size_t>(r)] = prog.compute[t].backward ? rc.bwd_s : rc.fwd_s;
        }
        continue;
      }
      for (std::int64_t r = 0; r < n; ++r) {
        const auto i = static_cast<std::size_t>(r);
        const RoundCost rc = s.attention->block(s, r, r, element_stats(ws.ranks.pairs[i], ws.ranks.area[i]));
        table.seconds[i] = (prog.compute[t].backward ? rc.bwd_s : rc.fwd_s) * table_heads_[t];
      }
    }
    for (const auto x : ws.ranks.pairs) table_pairs += x;
  }
  const auto round_work = [&](std::int64_t i) { return ws.rounds[static_cast<std::size_t>(i)]; };
  const AttentionWork work{round_work, &ws.tables, table_pairs};
  return models::predict(s, work, rest_, false);
}

}  // namespace ringsim::models
