// `ringsim plan-docs`: from a dataset's document lengths, the context-parallel strategy, document
// layout and implementation to use for packed sequences, per bucket of sequences by their
// longest document, with why (planning/length_plan.hpp).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/memory_flags.hpp"
#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/scenario_options.hpp"
#include "cli/text_table.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "models/memory/memory.hpp"
#include "models/io/parse.hpp"
#include "planning/length_plan.hpp"
#include "planning/parts_io.hpp"

namespace ringsim::cli {

using models::InputError;

namespace {

std::vector<std::string> list_of(const cxxopts::ParseResult& r, const char* flag) {
  std::vector<std::string> out;
  if (!r.count(flag)) return out;
  for (const auto& v : models::split(r[flag].as<std::string>(), ','))
    if (const auto t = std::string(models::trim(v)); !t.empty()) out.push_back(t);
  if (out.empty()) throw InputError({}, 0, flag, "expected a comma-separated list");
  return out;
}

// 1024 -> 1k, 1048576 -> 1M, others as they are.
std::string tokens_text(std::int64_t t) {
  if (t > 0 && t % (1 << 20) == 0) return fmt::format("{}M", t >> 20);
  if (t > 0 && t % 1024 == 0) return fmt::format("{}k", t >> 10);
  return std::to_string(t);
}

std::string bucket_text(const planning::Bucket& b, bool all) {
  if (all) return "all sequences";
  if (b.lo == 0) return "longest <= " + tokens_text(b.hi);
  return tokens_text(b.lo) + " < longest <= " + tokens_text(b.hi);
}

std::string percent(double x) { return fmt::format("{:.1f}%", 100 * x); }
std::string count(std::int64_t n, const char* what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); }
// A relative difference with its sign; no "-0.0%" for a tie within the rounding.
std::string relative(double ratio) {
  const double x = 100 * (ratio - 1);
  return std::abs(x) < 0.05 ? "0.0%" : fmt::format("{:+.1f}%", x);
}

std::string candidate_name(const planning::LengthCandidate& c) { return c.cp + " " + c.layout + " (" + c.impl + ")"; }

// The tying candidates of a row, by what differs from the row's.
std::string ties_text(const planning::LengthPlan& plan, const planning::RankedCandidate& row) {
  std::string s;
  for (const auto t : row.ties) {
    const auto& c = plan.candidates[t];
    s += (s.empty() ? "" : ", ") + c.layout + " (" + c.impl + ")";
  }
  return s;
}

double share(double part, double whole) { return whole > 0 ? part / whole : 0; }

struct RowFigures {
  double busiest_over_mean, exposed_share, attention_share;
};
RowFigures row_figures(const planning::BucketFigures& f) {
  const auto& p = f.sum;
  return {share(p.attention_busiest_s, p.attention_mean_s), share(f.parts.exposed_s(), p.step_s),
          share(p.attention_fwd_s + p.attention_bwd_s, p.step_s)};
}

std::string tile_section(const planning::LengthPlan& plan, const std::vector<planning::TileCheck>& checks) {
  if (checks.empty()) return "";
  std::string out = "\ntile granularity: the full model (predict --docs at the profile's tile, tail padding as a document) "
                    "over this plan's step, on sequences spread over each candidate's packs:\n";
  TextTable t({{"cp"}, {"layout"}, {"impl"}, {"tile", true}, {"sequences", true}, {"mean", true}, {"min", true}, {"max", true}});
  std::string notes;
  for (const auto& c : checks) {
    const auto& cand = plan.candidates[c.candidate];
    if (!c.not_checked.empty()) {
      notes += fmt::format("  not checked: {} {} ({}): {}\n", cand.cp, cand.layout, cand.impl, c.not_checked);
      continue;
    }
    t.add_row({cand.cp, cand.layout, cand.impl, fmt::format("{}x{}", c.tile.q, c.tile.k), std::to_string(c.sequences), fmt::format("{:.3f}", c.mean_ratio),
               fmt::format("{:.3f}", c.min_ratio), fmt::format("{:.3f}", c.max_ratio)});
  }
  return out + t.render("  ") + notes;
}

std::string table(const planning::LengthPlan& plan, std::int64_t top, bool list_skipped) {
  const auto& r = plan.request;
  std::string out;
  out += fmt::format("ringsim plan-docs: {} on {}, mesh {}x{} ({} devices), n_seq {}, {} packing\n", r.model, r.hardware,
                     r.mp, r.sp, r.mp * r.sp, r.n_seq, planning::to_string(r.packing));
  out += fmt::format("documents: {}: {} documents, {} tokens\n", plan.source, plan.documents, human_count(static_cast<double>(plan.tokens)));
  std::string packs;
  for (const auto& p : plan.packings) {
    double tokens = 0;
    for (const auto t : p.real_tokens) tokens += static_cast<double>(t);
    packs += fmt::format("{}{} with documents padded to multiples of {} (padding {}{})",
                         packs.empty() ? "" : "; ", count(p.size(), "sequence"), p.quantum,
                         percent(1 - tokens / (static_cast<double>(p.size()) * static_cast<double>(r.n_seq))),
                         p.cut > 0 ? ", " + count(p.cut, "document") + " longer than n_seq cut" : "");
  }
  out += "packed: " + packs + "\n";
  std::int64_t runs = 0, fits = 0;
  for (std::size_t c = 0; c < plan.candidates.size(); ++c) {
    runs += plan.candidates[c].skipped.empty();
    fits += plan.candidates[c].skipped.empty() && plan.candidates[c].fits_memory;
  }
  out += fmt::format("candidates: {} of {} (strategy x layout x implementation) run, {} of them fit in memory ({}, {} "
                     "recomputation){}\n",
                     runs, plan.candidates.size(), fits, models::to_string(r.zero), models::to_string(r.recompute),
                     list_skipped ? "" : "; --list-skipped says why the others cannot");
  if (fits == 0) {
    // Only what is not in use already.
    std::vector<std::string> tries;
    if (r.zero != models::Sharding::Zero3) tries.emplace_back("--zero 3");
    if (r.recompute != models::Recompute::Full) tries.emplace_back("--recompute full");
    tries.emplace_back("a larger mesh");
    tries.emplace_back("a shorter --seq");
    out += "no candidate fits in memory: try " + models::join_list(tries) + "\n";
  }
  out += "times at element granularity (kernels that skip every masked pair; docs/planning.md)\n";

  const auto section = [&](std::size_t b) {
    const bool all = b == plan.buckets.size();
    const auto& rows = plan.ranking[b];
    if (rows.empty()) return;
    const auto& head = plan.figures[rows.front().candidate][b];
    out += fmt::format("\n{}: {}, {}, {} of the tokens{}\n", bucket_text(all ? planning::Bucket{} : plan.buckets[b], all),
                       count(head.packs, "sequence"), count(head.documents, "document"), percent(share(static_cast<double>(head.real_tokens), static_cast<double>(plan.tokens))),
                       all ? " (one configuration for the whole dataset)" : "");
    TextTable t({{"rank", true}, {"cp"}, {"layout"}, {"impl"}, {"kernel"}, {"step", true}, {"tokens/s", true}, {"vs best", true},
                 {"imbalance", true}, {"busiest/mean", true}, {"padding", true}, {"memory", true}});
    const double best = plan.figures[rows.front().candidate][b].tokens_per_s();
    for (std::size_t i = 0; i < rows.size() && static_cast<std::int64_t>(i) < top; ++i) {
      const auto& c = plan.candidates[rows[i].candidate];
      const auto& f = plan.figures[rows[i].candidate][b];
      const auto fig = row_figures(f);
      std::vector<std::string> notes = {"why: " + f.why()};
      if (!rows[i].ties.empty()) notes.push_back("ties: " + ties_text(plan, rows[i]));
      t.add_row({std::to_string(i + 1), c.cp, c.layout, c.label.empty() ? c.impl : c.impl + " " + c.label, c.kernel,
                 human_seconds(f.mean_step_s()), human_count(f.tokens_per_s()),
                 i == 0 ? "" : relative(f.tokens_per_s() / best),
                 fmt::format("{:.2f}", f.mean_imbalance()), fmt::format("{:.2f}", fig.busiest_over_mean),
                 percent(f.padding_share(r.n_seq)), human_bytes(c.memory_bytes)},
                notes);
    }
    out += t.render("  ");
  };
  for (std::size_t b = 0; b <= plan.buckets.size(); ++b) section(b);

  out += "\nrecommended (best tokens/s of each bucket; the figures are the model's, uncalibrated profiles say so):\n";
  TextTable rec({{"sequences"}, {"use"}, {"tokens/s", true}, {"vs the one configuration", true}});
  const auto& overall = plan.ranking[plan.buckets.size()];
  for (std::size_t b = 0; b < plan.buckets.size(); ++b) {
    if (plan.ranking[b].empty()) continue;
    const auto best = plan.ranking[b].front().candidate;
    const double rate = plan.figures[best][b].tokens_per_s();
    std::string vs;
    if (!overall.empty() && overall.front().candidate == best) {
      vs = "(the same)";
    } else if (!overall.empty()) {
      const double one = plan.figures[overall.front().candidate][b].tokens_per_s();
      vs = one > 0 ? relative(rate / one) : "";
    }
    rec.add_row({bucket_text(plan.buckets[b], false), candidate_name(plan.candidates[best]), human_count(rate), vs});
  }
  if (!overall.empty()) {
    const auto best = overall.front().candidate;
    rec.add_row({"all sequences", candidate_name(plan.candidates[best]),
                 human_count(plan.figures[best][plan.buckets.size()].tokens_per_s()), ""});
  }
  out += rec.render("  ");
  bool uncalibrated = false;
  for (const auto& c : plan.candidates) uncalibrated |= c.skipped.empty() && !c.profile_calibrated;
  if (uncalibrated)
    out += "  (some profiles are not fitted on this GPU: [derived] ones copy a fitted GPU's parameters, [spec defaults] "
           "ones assume generic efficiencies)\n";
  if (list_skipped) {
    out += "\ncannot run:\n";
    for (const auto& c : plan.candidates) {
      if (!c.skipped.empty()) out += fmt::format("  {} {} ({}): {}\n", c.cp, c.layout, c.impl, c.skipped);
      else if (!c.fits_memory)
        out += fmt::format("  {} {} ({}): needs {} of {}\n", c.cp, c.layout, c.impl, human_bytes(c.memory_bytes),
                           human_bytes(c.memory_capacity_bytes));
    }
  }
  return out;
}

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> c = {
      "bucket", "longest_lo", "longest_hi", "rank", "cp", "layout", "impl", "kernel", "status", "ties", "sequences", "documents",
      "real_tokens", "padding_share", "mean_step_s", "tokens_per_s", "imbalance", "busiest_over_mean", "exposed_share",
      "attention_share", "memory_bytes", "memory_capacity_bytes", "fits_memory", "profile_calibrated", "why", "note"};
  // The mean sequence's step in parts after those (they add up to mean_step_s).
  static const std::vector<std::string> with_parts = planning::with_part_columns(c);
  return with_parts;
}

std::string csv(const planning::LengthPlan& plan) {
  std::string out = csv_line(csv_columns());
  const auto g = [](double v) { return fmt::format("{:.6g}", v); };
  for (std::size_t b = 0; b <= plan.buckets.size(); ++b) {
    const bool all = b == plan.buckets.size();
    const std::string name = all ? "all" : std::to_string(b + 1);
    const std::string lo = all ? "0" : std::to_string(plan.buckets[b].lo);
    const std::string hi = all ? std::to_string(plan.request.n_seq) : std::to_string(plan.buckets[b].hi);
    // Ranked candidates (a tie shares its group's rank), then the others with packs here.
    std::vector<std::pair<std::size_t, std::string>> ranked(plan.candidates.size(), {0, ""});
    for (std::size_t i = 0; i < plan.ranking[b].size(); ++i) {
      const auto& row = plan.ranking[b][i];
      ranked[row.candidate] = {i + 1, ties_text(plan, row)};
      for (const auto t : row.ties) ranked[t] = {i + 1, candidate_name(plan.candidates[row.candidate])};
    }
    for (std::size_t c = 0; c < plan.candidates.size(); ++c) {
      const auto& cand = plan.candidates[c];
      if (!cand.skipped.empty()) {
        if (all) {
          std::vector<std::string> cells = {name, lo, hi, "", cand.cp, cand.layout, cand.impl, cand.kernel, "skipped", "", "", "", "", "", "",
                                            "", "", "", "", "", "", "", "", "", "", cand.skipped};
          planning::append_part_cells(cells, {}, false);
          out += csv_line(cells);
        }
        continue;
      }
      const auto& f = plan.figures[c][b];
      if (f.packs == 0) continue;
      const auto fig = row_figures(f);
      std::vector<std::string> cells = {name, lo, hi, ranked[c].first > 0 ? std::to_string(ranked[c].first) : "", cand.cp, cand.layout,
                       cand.impl, cand.kernel, "ok", ranked[c].second, std::to_string(f.packs), std::to_string(f.documents),
                       std::to_string(f.real_tokens), g(f.padding_share(plan.request.n_seq)), g(f.mean_step_s()),
                       g(f.tokens_per_s()), g(f.mean_imbalance()), g(fig.busiest_over_mean), g(fig.exposed_share),
                       g(fig.attention_share), g(cand.memory_bytes), g(cand.memory_capacity_bytes),
                       cand.fits_memory ? "true" : "false", cand.profile_calibrated ? "true" : "false", f.why(),
                       cand.fits_memory ? "" : "does not fit in memory"};
      planning::append_part_cells(cells, f.mean_parts());
      out += csv_line(cells);
    }
  }
  return out;
}

std::string json(const planning::LengthPlan& plan, const std::vector<planning::TileCheck>& checks) {
  const auto& r = plan.request;
  nlohmann::json j;
  j["hardware"] = r.hardware;
  j["model"] = r.model;
  j["mp"] = r.mp;
  j["sp"] = r.sp;
  j["n_seq"] = r.n_seq;
  j["packing"] = planning::to_string(r.packing);
  j["lengths"] = {{"source", plan.source}, {"documents", plan.documents}, {"tokens", plan.tokens}};
  j["granularity"] = "element (kernels that skip every masked pair)";
  j["packings"] = nlohmann::json::array();
  for (const auto& p : plan.packings) {
    std::int64_t tokens = 0;
    for (const auto t : p.real_tokens) tokens += t;
    j["packings"].push_back({{"quantum", p.quantum}, {"sequences", p.size()}, {"real_tokens", tokens}, {"cut", p.cut}});
  }
  j["candidates"] = nlohmann::json::array();
  for (const auto& c : plan.candidates) {
    nlohmann::json x = {{"cp", c.cp}, {"layout", c.layout}, {"impl", c.impl}, {"status", c.skipped.empty() ? "ok" : "skipped"}};
    if (!c.skipped.empty()) x["note"] = c.skipped;
    else
      x.update({{"quantum", c.quantum}, {"memory_bytes", c.memory_bytes}, {"memory_capacity_bytes", c.memory_capacity_bytes},
                {"fits_memory", c.fits_memory}, {"profile_calibrated", c.profile_calibrated}});
    j["candidates"].push_back(x);
  }
  j["buckets"] = nlohmann::json::array();
  for (std::size_t b = 0; b <= plan.buckets.size(); ++b) {
    const bool all = b == plan.buckets.size();
    nlohmann::json bj;
    bj["bucket"] = all ? "all" : std::to_string(b + 1);
    bj["longest_lo"] = all ? 0 : plan.buckets[b].lo;
    bj["longest_hi"] = all ? r.n_seq : plan.buckets[b].hi;
    bj["ranking"] = nlohmann::json::array();
    for (std::size_t i = 0; i < plan.ranking[b].size(); ++i) {
      const auto& row = plan.ranking[b][i];
      const auto& c = plan.candidates[row.candidate];
      const auto& f = plan.figures[row.candidate][b];
      const auto fig = row_figures(f);
      nlohmann::json x = {{"rank", i + 1}, {"cp", c.cp}, {"layout", c.layout}, {"impl", c.impl}, {"kernel", c.kernel}, {"deployability", c.label},
                          {"sequences", f.packs}, {"documents", f.documents}, {"real_tokens", f.real_tokens},
                          {"padding_share", f.padding_share(r.n_seq)}, {"mean_step_s", f.mean_step_s()},
                          {"tokens_per_s", f.tokens_per_s()}, {"imbalance", f.mean_imbalance()},
                          {"busiest_over_mean", fig.busiest_over_mean}, {"exposed_share", fig.exposed_share},
                          {"attention_share", fig.attention_share}, {"why", f.why()}};
      planning::add_parts_json(x, f.mean_parts());
      x["ties"] = nlohmann::json::array();
      for (const auto t : row.ties)
        x["ties"].push_back({{"cp", plan.candidates[t].cp}, {"layout", plan.candidates[t].layout}, {"impl", plan.candidates[t].impl}});
      bj["ranking"].push_back(x);
    }
    j["buckets"].push_back(bj);
  }
  j["tile_check"] = nlohmann::json::array();
  for (const auto& c : checks) {
    const auto& cand = plan.candidates[c.candidate];
    if (!c.not_checked.empty()) {
      j["tile_check"].push_back({{"cp", cand.cp}, {"layout", cand.layout}, {"impl", cand.impl}, {"sequences", 0},
                                 {"not_checked", c.not_checked}});
      continue;
    }
    j["tile_check"].push_back({{"cp", cand.cp}, {"layout", cand.layout}, {"impl", cand.impl}, {"sequences", c.sequences},
                               {"tile", fmt::format("{}x{}", c.tile.q, c.tile.k)}, {"mean_ratio", c.mean_ratio}, {"min_ratio", c.min_ratio}, {"max_ratio", c.max_ratio}});
  }
  return j.dump(2) + "\n";
}

}  // namespace

int run_plan_docs(int argc, char** argv) {
  cxxopts::Options o("ringsim plan-docs",
                     "From a dataset's document lengths: pack them into sequences of --seq tokens, predict every packed "
                     "sequence under each context-parallel strategy, document layout and implementation of the mesh, "
                     "and rank them per bucket of sequences by their longest document (docs/planning.md)");
  o.positional_help("LENGTHS");
  o.add_options()("lengths", "a file of document lengths (LENGTH or LENGTH,COUNT per line) or lognormal:MEAN:SIGMA:SEED:COUNT",
                  cxxopts::value<std::string>()->default_value(""))
                 ("hardware", "hardware name or JSON file", cxxopts::value<std::string>()->default_value("h100-sxm"))
                 ("model", "model name or JSON file", cxxopts::value<std::string>()->default_value("llama3-8b"))
                 ("seq", "tokens per packed sequence (n_seq: 131072, 128k or 1M)", cxxopts::value<std::string>()->default_value("131072"))
                 ("mesh", "MPxSP: tensor- x context-parallel degrees", cxxopts::value<std::string>()->default_value("1x8"))
                 ("cp", "strategies (comma-separated; default: ring, allgather, ulysses and every usp and double-ring split of sp)",
                  cxxopts::value<std::string>())
                 ("layout", "layouts (default: contiguous, striped, zigzag, doc-zigzag, doc-zigzag-docmajor, ptrr)",
                  cxxopts::value<std::string>())
                 ("impl", "implementations (default: the catalog's choice of production library for each strategy and layout)", cxxopts::value<std::string>())
                 ("include-research", "with no --impl, let the catalog choose a research kernel or ringsim's reference kernels where no production library offers the pair")
                 ("profile", "profile name or file (default: each hardware x implementation's own)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("zero", "ZeRO stage of the model states, sharded over the sp ranks (memory)", cxxopts::value<std::string>()->default_value("3"))
                 ("recompute", "none | selective | full | attention (memory; full also repeats the forward, attention the attention forward)",
                  cxxopts::value<std::string>()->default_value("selective"))
                 ("packing", "first-fit (in file order) | first-fit-decreasing | first-fit-shuffle[:SEED] | next-fit", cxxopts::value<std::string>()->default_value("first-fit"))
                 ("buckets", "upper edges of the buckets by longest document (default: powers of two from 1024)",
                  cxxopts::value<std::string>())
                 ("top", "candidates shown per bucket", cxxopts::value<std::string>()->default_value("3"))
                 ("threads", "worker threads (default: every core)", cxxopts::value<std::string>()->default_value("0"))
                 ("list-skipped", "list the candidates that cannot run, and why")
                 ("tile-check", "also predict N sequences per candidate with the full model at the profile's tile "
                                "(slow: one workload each) and report its step over this plan's",
                  cxxopts::value<std::string>()->default_value("0"))
                 ("format", "table|csv|json", cxxopts::value<std::string>()->default_value("table"))
                 ("o,output", "write to FILE (atomically) instead of stdout", cxxopts::value<std::string>()->default_value("-"))
                 ("h,help", "show help");
  add_memory_flags(o);
  o.parse_positional({"lengths"});
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto format = one_of(r, "format", {"table", "csv", "json"});
  planning::LengthPlanRequest req;
  req.hardware = r["hardware"].as<std::string>();
  req.model = r["model"].as<std::string>();
  req.n_seq = models::parse_token_count(r["seq"].as<std::string>(), "seq");
  const auto [mp, sp] = models::parse_pair(r["mesh"].as<std::string>(), "mesh");
  req.mp = mp;
  req.sp = sp;
  req.strategies = models::parse_strategies(list_of(r, "cp"));
  req.layouts = models::parse_layouts(list_of(r, "layout"));
  req.impls = list_of(r, "impl");
  req.include_research = r.count("include-research") > 0;
  req.profile = r["profile"].as<std::string>();
  req.zero = models::parse_sharding(r["zero"].as<std::string>());
  req.recompute = models::parse_recompute(r["recompute"].as<std::string>());
  req.memory = memory_settings_from(r);
  req.packing = planning::parse_packing(r["packing"].as<std::string>());
  for (const auto& e : list_of(r, "buckets")) req.bucket_edges.push_back(models::parse_positive_int(e, "buckets"));
  req.top = models::parse_positive_int(r["top"].as<std::string>(), "top");
  req.threads = models::parse_int(r["threads"].as<std::string>(), "threads");
  planning::check_request(req);
  const auto spec = r["lengths"].as<std::string>();
  if (spec.empty()) throw InputError({}, 0, "lengths", "give the document lengths: a file or lognormal:MEAN:SIGMA:SEED:COUNT");
  const auto sample = planning::read_lengths(spec);
  const models::Catalog catalog;
  const auto plan = planning::plan_from_lengths(req, sample, catalog);
  // Timing goes to stderr (the output is the same bytes on every run), only on a terminal: a
  // script reading stderr sees one line exactly when something went wrong.
  if (isatty(fileno(stderr)) != 0)
    std::fprintf(stderr, "ringsim plan-docs: %lld packed sequences (%lld documents) predicted in %.3f s: %s documents/s\n",
               static_cast<long long>(plan.predictions), static_cast<long long>(plan.documents_counted), plan.seconds,
               human_count(plan.seconds > 0 ? static_cast<double>(plan.documents_counted) / plan.seconds : 0).c_str());
  const std::int64_t tile_n = models::parse_int(r["tile-check"].as<std::string>(), "tile-check");
  if (tile_n < 0) throw InputError({}, 0, "tile-check", "expected a non-negative count of sequences");
  const auto checks = planning::tile_check(plan, catalog, tile_n);
  const std::string out = format == "json"  ? json(plan, checks)
                          : format == "csv" ? csv(plan)
                                            : table(plan, req.top, r.count("list-skipped") > 0) + tile_section(plan, checks);
  write_output(r["output"].as<std::string>(), out);
  return 0;
}

}  // namespace ringsim::cli
