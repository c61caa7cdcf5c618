#include "calibration/attention_times.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "calibration/holdout_coverage.hpp"
#include "models/catalog/resolve.hpp"
#include "models/analytic/analytic.hpp"
#include "models/analytic/interval.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "models/implementations/strategy.hpp"

namespace ringsim::calibration {

using models::InputError;

std::string TimeRow::heads_key() const {
  return std::to_string(heads) + "/" + std::to_string(kv_heads) + "/" + std::to_string(head_dim);
}

bool TimeRow::layout_matters() const {
  if (single()) return false;
  return cp.has_ring() && cp.ring_degree(sp) > 1;
}

std::string TimeRow::config_key() const {
  return table + "|" + hardware + "|" + impl + "|" + cp.text() + "|" + pass + "|" + mask + "|" + heads_key() + "|" +
         std::to_string(batch) + "|" +
         std::to_string(sp) + "|" + std::to_string(n_seq) + "|" + packing;
}

std::string TimeRow::group(const std::string& by) const {
  if (by == "hardware") return hardware;
  if (by == "table") return table;
  if (by == "heads") return heads_key();
  // sp: the ring's size, which on a cluster of 8-GPU nodes is its node count (1, 2, 4, 8 nodes).
  if (by == "sp") return std::to_string(sp);
  if (by == "mask") return mask;
  if (by == "pass") return pass;
  throw InputError({}, 0, "by", "unknown grouping '" + by + "' (known: hardware, table, heads, sp, mask, pass)");
}

std::vector<TimeRow> time_rows(const std::string& file, const std::vector<std::string>& header,
                               const std::vector<std::vector<std::string>>& cells,
                               const std::vector<std::int64_t>& lines) {
  auto col = [&](const char* name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw InputError(file, 1, name, std::string("missing column '") + name + "'");
    return static_cast<std::size_t>(it - header.begin());
  };
  const auto c_table = col("table"), c_hw = col("hardware"), c_impl = col("impl"), c_layout = col("layout"),
             c_pass = col("pass"), c_heads = col("heads"), c_kv = col("kv_heads"), c_dim = col("head_dim"),
             c_batch = col("batch"), c_sp = col("sp"), c_n = col("n_seq"), c_pack = col("packing"),
             c_s = col("seconds");
  const auto cp_it = std::find(header.begin(), header.end(), "cp");
  const auto mask_it = std::find(header.begin(), header.end(), "mask");
  std::vector<TimeRow> rows;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto line = i < lines.size() ? lines[i] : 0;
    const auto& r = cells[i];
    auto cell = [&](std::size_t c, const char* name) {
      if (c >= r.size() || models::trim(r[c]).empty()) throw InputError(file, line, name, "missing value");
      return std::string(models::trim(r[c]));
    };
    auto count = [&](std::size_t c, const char* name) {
      try {
        return models::parse_positive_int(cell(c, name), name);
      } catch (const InputError& e) {
        throw InputError(file, line, name, e.message());
      }
    };
    TimeRow row;
    row.line = line;
    row.table = cell(c_table, "table");
    row.hardware = cell(c_hw, "hardware");
    row.impl = cell(c_impl, "impl");
    row.layout = cell(c_layout, "layout");
    try {
      if (cp_it != header.end()) row.cp = models::Strategy::parse(cell(static_cast<std::size_t>(cp_it - header.begin()), "cp"));
      if (!row.single()) row.ring_layout = models::LayoutSpec::parse(row.layout);
    } catch (const InputError& e) {
      throw e.located(file, line);
    }
    row.pass = cell(c_pass, "pass");
    if (mask_it != header.end()) row.mask = cell(static_cast<std::size_t>(mask_it - header.begin()), "mask");
    if (row.mask != "causal" && row.mask != "full") throw InputError(file, line, "mask", "expected causal or full");
    row.packing = cell(c_pack, "packing");
    row.heads = count(c_heads, "heads");
    row.kv_heads = count(c_kv, "kv_heads");
    row.head_dim = count(c_dim, "head_dim");
    row.batch = count(c_batch, "batch");
    row.sp = count(c_sp, "sp");
    row.n_seq = count(c_n, "n_seq");
    if (row.pass != "fwd" && row.pass != "bwd" && row.pass != "fwd+bwd")
      throw InputError(file, line, "pass", "expected fwd, bwd or fwd+bwd");
    if (row.single() != (row.sp == 1))
      throw InputError(file, line, "sp", "single-GPU rows (layout single) have sp 1, ring rows sp > 1");
    if (row.n_seq % row.sp != 0) throw InputError(file, line, "n_seq", "n_seq is not divisible by sp");
    if (row.heads % row.kv_heads != 0) throw InputError(file, line, "kv_heads", "heads must be a multiple of kv_heads");
    try {
      row.seconds = models::parse_double(cell(c_s, "seconds"), "seconds");
    } catch (const InputError& e) {
      throw InputError(file, line, "seconds", e.message());
    }
    if (!(row.seconds > 0) || !std::isfinite(row.seconds)) throw InputError(file, line, "seconds", "expected a positive time");
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw InputError(file, 0, "rows", "no rows");
  return rows;
}

void TimePredictor::set_library_terms(const std::string& impl, const std::string& hardware, LibraryTerms terms) {
  library_[{impl, hardware}] = terms;
}

models::Profile TimePredictor::with_library_terms(models::Profile p, const std::string& impl,
                                                  const std::string& hardware) const {
  if (const auto it = library_.find({impl, hardware}); it != library_.end()) {
    p.host_collective_s = it->second.host_collective_s;
    p.host_collective_peer_s = it->second.host_collective_peer_s;
  }
  return p;
}

double TimePredictor::operator()(const TimeRow& row, const models::Profile& profile_of_gpu) {
  const models::Profile profile = with_library_terms(profile_of_gpu, row.impl, row.hardware);
  models::ScenarioSpec spec;
  spec.hardware = row.hardware;
  spec.model = "attn:" + std::to_string(row.heads) + ":" + std::to_string(row.kv_heads) + ":" + std::to_string(row.head_dim);
  spec.mp = 1;
  spec.sp = row.sp;
  spec.n_seq = row.n_seq;
  spec.batch = row.batch;
  spec.impl = row.impl;
  spec.cp = row.cp;
  spec.mask = models::MaskSpec::parse(row.mask);
  const bool forward = row.pass != "bwd";
  const bool backward = row.pass != "fwd";
  if (row.single()) {
    // One flash-attention call on the GPU's shard, as the benchmark's plain flash_attn call runs.
    spec.layout = models::LayoutSpec{};
    spec.cp = models::Strategy{};
    models::AttentionCall c;
    c.q_len = c.k_len = row.n_seq;
    c.causal = row.mask == "causal";
    c.heads = row.heads;
    c.kv_heads = row.kv_heads;
    c.batch = row.batch;
    models::Profile q = profile;
    q.implementation = row.impl;
    const auto t = scenarios_.call(spec, q, c);
    return (forward ? t.fwd_s : 0.0) + (backward ? t.bwd_s : 0.0);
  }
  spec.layout = row.ring_layout;
  // The GPU's fitted parameters under this row's implementation (the same kernel's).
  models::Profile q = profile;
  q.implementation = row.impl;
  const auto p = scenarios_.prediction(spec, q);
  return (forward ? p.attention_fwd_s : 0.0) + (backward ? p.attention_bwd_s : 0.0);
}

std::string TimeParameter::label() const {
  return name + "[" + (hardware.empty() ? (cycles ? std::string("cycles") : std::string("shared")) : hardware) + "]";
}

namespace {

// Sums the absolute errors of groups as they are scored and turns each into its means; `all` is
// the mean over every point of every group.
class ScoreTally {
 public:
  void add(GroupScore& s) {
    sum_t_ += s.time_mape;
    sum_r_ += s.ratio_mape;
    all_.time_points += s.time_points;
    all_.ratio_points += s.ratio_points;
    if (s.time_points) s.time_mape /= static_cast<double>(s.time_points);
    if (s.ratio_points) s.ratio_mape /= static_cast<double>(s.ratio_points);
  }
  [[nodiscard]] GroupScore all() const {
    GroupScore a = all_;
    a.group = "all";
    if (a.time_points) a.time_mape = sum_t_ / static_cast<double>(a.time_points);
    if (a.ratio_points) a.ratio_mape = sum_r_ / static_cast<double>(a.ratio_points);
    return a;
  }

 private:
  double sum_t_ = 0, sum_r_ = 0;
  GroupScore all_;
};

double clock_of(const models::Catalog& cat, const std::string& hw) {
  const auto h = cat.hardware(hw);
  if (h.sm_clock_hz <= 0) throw InputError({}, 0, "hardware", hw + " gives no SM clock for cycle-counted parameters");
  return h.sm_clock_hz;
}

std::vector<TimeParameter> parameters_of(const TimeFitSetup& setup, const std::set<std::string>& hardware) {
  std::vector<TimeParameter> out;
  for (const auto& hw : hardware)
    for (const auto& n : setup.per_hardware) {
      const auto& fp = find_parameter(n);
      out.push_back({n, hw, false, fp.lower, fp.upper});
    }
  for (const auto& n : setup.shared) {
    const auto& fp = find_parameter(n);
    out.push_back({n, "", false, fp.lower, fp.upper});
  }
  // A cycle parameter's bounds: the seconds bounds at 1 GHz (generous for any GPU clock).
  for (const auto& n : setup.shared_cycles) {
    const auto& fp = find_parameter(n);
    out.push_back({n, "", true, fp.lower * 1e9, fp.upper * 1e9});
  }
  return out;
}

// The profile of `hw` with the parameter vector's values in.
models::Profile profile_for(const TimeFitSetup& setup, const std::vector<TimeParameter>& params, const Eigen::VectorXd& x,
                            const std::string& hw, double clock_hz) {
  models::Profile p = setup.base.at(hw);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& q = params[i];
    if (!q.hardware.empty() && q.hardware != hw) continue;
    const double v = x[static_cast<Eigen::Index>(i)];
    set_parameter(p, q.name, q.cycles ? v / clock_hz : v);
  }
  return p;
}

double start_of(const TimeFitSetup& setup, const TimeParameter& q, double clock_hz) {
  const std::string hw = q.hardware.empty() ? setup.base.begin()->first : q.hardware;
  double v = get_parameter(setup.base.at(hw), q.name);
  // 0 means "no limit": a fit starts from the largest limit it may find, which changes nothing
  // where the rows do not reach it (and stays there when they never do).
  if (q.name == "p2p_bandwidth_bytes_per_s" && v <= 0) v = q.upper;
  return std::clamp(q.cycles ? v * clock_hz : v, q.lower, q.upper);
}

}  // namespace

TimeFit fit_times(const std::vector<TimeRow>& rows, const TimeFitSetup& setup, TimePredictor& predictor) {
  if (rows.empty()) throw InputError({}, 0, "rows", "no rows to fit");
  std::set<std::string> hardware;
  for (const auto& r : rows) {
    if (!setup.base.count(r.hardware))
      throw InputError({}, r.line, "hardware", "no base profile for " + r.hardware);
    hardware.insert(r.hardware);
  }
  const models::Catalog cat;
  std::map<std::string, double> clock;
  for (const auto& hw : hardware) clock[hw] = setup.shared_cycles.empty() ? 1.0 : clock_of(cat, hw);
  TimeFit out;
  out.params = parameters_of(setup, hardware);
  // Nothing free: the rows are predicted from the base profiles as they are (component fits),
  // every row out of sample; the result has the shape of a fit with no parameters.
  if (out.params.empty()) {
    const auto n = static_cast<Eigen::Index>(rows.size());
    out.fit.predicted.resize(n);
    out.fit.residuals.resize(n);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double t = predictor(rows[i], setup.base.at(rows[i].hardware));
      out.predicted.push_back(t);
      out.fit.predicted[static_cast<Eigen::Index>(i)] = std::log(t);
      out.fit.residuals[static_cast<Eigen::Index>(i)] = std::log(t / rows[i].seconds);
    }
    out.fit.rss = out.fit.residuals.squaredNorm();
    out.fit.mae = out.fit.residuals.cwiseAbs().mean();
    out.fit.converged = true;
    for (const auto& hw : hardware) out.profiles.emplace(hw, setup.base.at(hw));
    return out;
  }
  const double ref_clock = clock.begin()->second;
  std::vector<Parameter> all;
  for (const auto& q : out.params)
    all.push_back({q.label(), q.lower, q.upper, start_of(setup, q, q.hardware.empty() ? ref_clock : clock[q.hardware])});
  Eigen::VectorXd x0(static_cast<Eigen::Index>(all.size()));
  for (std::size_t i = 0; i < all.size(); ++i) x0[static_cast<Eigen::Index>(i)] = all[i].start;
  Eigen::VectorXd y(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) y[static_cast<Eigen::Index>(i)] = std::log(rows[i].seconds);
  auto predict_all = [&](const Eigen::VectorXd& x) {
    std::map<std::string, models::Profile> profiles;
    for (const auto& hw : hardware) profiles.emplace(hw, profile_for(setup, out.params, x, hw, clock[hw]));
    Eigen::VectorXd v(static_cast<Eigen::Index>(rows.size()));
    for (std::size_t i = 0; i < rows.size(); ++i)
      v[static_cast<Eigen::Index>(i)] = std::log(predictor(rows[i], profiles.at(rows[i].hardware)));
    return v;
  };
  // A parameter that moves no row (a GPU's transfer limit when only its single-GPU rows are
  // left, say) is not identified by these rows: it keeps its start value and is not fitted.
  // Tested across its whole range, not only at the start: a limit starts where it binds nothing.
  std::vector<std::size_t> free;
  {
    const Eigen::VectorXd base = predict_all(x0);
    for (std::size_t i = 0; i < all.size(); ++i) {
      bool moves = false;
      for (const double v : {all[i].lower, all[i].upper, 0.5 * (all[i].lower + all[i].upper)}) {
        Eigen::VectorXd x = x0;
        x[static_cast<Eigen::Index>(i)] = v;
        moves = moves || (predict_all(x) - base).cwiseAbs().maxCoeff() > 1e-12;
      }
      if (moves) free.push_back(i);
    }
  }
  if (free.empty())
    throw InputError({}, 0, "free", "none of the free parameters changes any row's predicted time (not identified by these rows)");
  if (rows.size() < free.size())
    throw InputError({}, 0, "rows",
                     std::to_string(rows.size()) + " rows for " + std::to_string(free.size()) + " free parameters");
  std::vector<Parameter> fit_params;
  for (const auto i : free) fit_params.push_back(all[i]);
  auto expand = [&](const Eigen::VectorXd& xf) {
    Eigen::VectorXd x = x0;
    for (std::size_t k = 0; k < free.size(); ++k) x[static_cast<Eigen::Index>(free[k])] = xf[static_cast<Eigen::Index>(k)];
    return x;
  };
  const ModelFn model = [&](const Eigen::VectorXd& xf) { return predict_all(expand(xf)); };
  const FitResult reduced = fit_least_squares(model, y, fit_params, setup.options);
  // Back to every parameter: the frozen ones with their start, no standard error, no covariance.
  const auto n = static_cast<Eigen::Index>(all.size());
  out.fit = reduced;
  out.fit.params = expand(reduced.params);
  out.fit.std_errors = Eigen::VectorXd::Constant(n, std::numeric_limits<double>::quiet_NaN());
  out.fit.covariance = Eigen::MatrixXd::Zero(n, n);
  out.fit.at_bound.assign(all.size(), false);
  for (std::size_t a = 0; a < free.size(); ++a) {
    const auto ia = static_cast<Eigen::Index>(free[a]);
    out.fit.std_errors[ia] = reduced.std_errors[static_cast<Eigen::Index>(a)];
    out.fit.at_bound[free[a]] = reduced.at_bound[a];
    for (std::size_t b = 0; b < free.size(); ++b)
      out.fit.covariance(ia, static_cast<Eigen::Index>(free[b])) =
          reduced.covariance(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b));
  }
  for (const auto& hw : hardware) out.profiles.emplace(hw, profile_for(setup, out.params, out.fit.params, hw, clock[hw]));
  for (std::size_t i = 0; i < rows.size(); ++i)
    out.predicted.push_back(std::exp(out.fit.predicted[static_cast<Eigen::Index>(i)]));
  return out;
}

void fill_uncertainty(const TimeFit& fit, const std::string& hardware, models::Profile& profile) {
  const double clock = fit.params.end() != std::find_if(fit.params.begin(), fit.params.end(),
                                                        [](const TimeParameter& q) { return q.cycles; })
                           ? models::Catalog().hardware(hardware).sm_clock_hz
                           : 1.0;
  std::vector<std::size_t> idx;
  std::vector<double> scale;
  for (std::size_t i = 0; i < fit.params.size(); ++i) {
    const auto& q = fit.params[i];
    if (!q.hardware.empty() && q.hardware != hardware) continue;
    idx.push_back(i);
    scale.push_back(q.cycles ? 1.0 / clock : 1.0);
  }
  auto& u = profile.uncertainty;
  u.parameters.clear();
  u.covariance.assign(idx.size(), std::vector<double>(idx.size(), 0.0));
  for (std::size_t a = 0; a < idx.size(); ++a) {
    u.parameters.push_back(fit.params[idx[a]].name);
    for (std::size_t b = 0; b < idx.size(); ++b)
      u.covariance[a][b] = fit.fit.covariance(static_cast<Eigen::Index>(idx[a]), static_cast<Eigen::Index>(idx[b])) *
                           scale[a] * scale[b];
  }
}

std::vector<RatioPoint> layout_ratios(const std::vector<TimeRow>& rows) {
  std::vector<RatioPoint> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].layout != "contiguous" || !rows[i].layout_matters()) continue;
    for (std::size_t j = 0; j < rows.size(); ++j) {
      if (j == i || rows[j].single() || rows[j].layout == "contiguous") continue;
      if (rows[j].config_key() != rows[i].config_key()) continue;
      out.push_back({i, j, rows[i].seconds / rows[j].seconds});
    }
  }
  return out;
}

HeldOut leave_one_group_out(const std::vector<TimeRow>& rows, const TimeFitSetup& setup, TimePredictor& predictor,
                            const std::string& by) {
  HeldOut h;
  h.by = by;
  h.predicted.assign(rows.size(), std::numeric_limits<double>::quiet_NaN());
  std::set<std::string> groups;
  for (const auto& r : rows)
    if (!r.single()) groups.insert(r.group(by));
  const auto ratios = layout_ratios(rows);
  // Every fold starts from the fit to all rows (and the fit's own spread of starts): the folds
  // differ from it by a group, and the objective has kinks (max of compute and transfer) where a
  // start far away can end in another local minimum.
  TimeFitSetup warm = setup;
  const TimeFit full = fit_times(rows, setup, predictor);
  for (const auto& [hw, p] : full.profiles) warm.base[hw] = p;
  ScoreTally tally;
  for (const auto& g : groups) {
    std::vector<TimeRow> train;
    std::vector<std::size_t> test;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!rows[i].single() && rows[i].group(by) == g)
        test.push_back(i);
      else
        train.push_back(rows[i]);
    }
    GroupScore s;
    s.group = g;
    // A group holding every row (one table, or one GPU without single-GPU rows) leaves nothing
    // to fit: its rows cannot be predicted without them, and are not scored.
    // Likewise when what is left identifies none of the free parameters (only single-GPU rows
    // against ring-only parameters): the fold would predict with the full fit's values.
    if (train.empty() && !full.params.empty()) {
      h.groups.push_back(s);
      continue;
    }
    TimeFit f;
    if (full.params.empty()) {  // nothing fitted: a held-out row is predicted as in the full run
      f.profiles = full.profiles;
    } else {
      try {
        f = fit_times(train, warm, predictor);
      } catch (const InputError&) {  // the full fit succeeded: only identifiability fails here
        h.groups.push_back(s);
        continue;
      }
    }
    for (const auto i : test) {
      const auto it = f.profiles.find(rows[i].hardware);
      if (it == f.profiles.end()) continue;  // no row of this GPU left to fit it: not predictable
      h.predicted[i] = predictor(rows[i], it->second);
      s.time_mape += std::abs(h.predicted[i] / rows[i].seconds - 1);
      ++s.time_points;
    }
    for (const auto& rp : ratios) {
      const double a = h.predicted[rp.contiguous], b = h.predicted[rp.other];
      if (rows[rp.contiguous].group(by) != g || !std::isfinite(a) || !std::isfinite(b)) continue;
      s.ratio_mape += std::abs((a / b) / rp.measured - 1);
      ++s.ratio_points;
    }
    tally.add(s);
    h.groups.push_back(s);
  }
  h.all = tally.all();
  return h;
}

DerivedScore derived_from_other_gpus(const std::vector<TimeRow>& rows, const TimeFit& fit, const TimeFitSetup& setup,
                                     TimePredictor& predictor) {
  DerivedScore d;
  const auto ratios = layout_ratios(rows);
  ScoreTally tally;
  for (const auto& [target, own] : fit.profiles)
    for (const auto& [source, theirs] : fit.profiles) {
      if (source == target) continue;
      models::Profile p = own;
      for (const auto& n : setup.per_hardware) set_parameter(p, n, get_parameter(theirs, n));
      for (const auto& n : setup.copied) set_parameter(p, n, get_parameter(theirs, n));
      GroupScore s;
      s.group = target + " from " + source;
      std::map<std::size_t, double> predicted;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].single() || rows[i].hardware != target) continue;
        const double t = predictor(rows[i], p);
        predicted[i] = t;
        d.log_time.push_back(std::log(t / rows[i].seconds));
        d.time_pair.push_back(d.pairs.size());
        s.time_mape += std::abs(t / rows[i].seconds - 1);
        ++s.time_points;
      }
      for (const auto& rp : ratios) {
        const auto a = predicted.find(rp.contiguous), b = predicted.find(rp.other);
        if (a == predicted.end() || b == predicted.end()) continue;
        const double r = a->second / b->second / rp.measured;
        d.log_ratio.push_back(std::log(r));
        s.ratio_mape += std::abs(r - 1);
        ++s.ratio_points;
      }
      tally.add(s);
      d.pairs.push_back(s);
    }
  d.all = tally.all();
  return d;
}

double grouped_interval_coverage(const std::vector<TimeRow>& rows, const HeldOut& h, double level) {
  std::map<std::string, std::vector<double>> by_group;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (std::isfinite(h.predicted[i])) by_group[rows[i].group(h.by)].push_back(std::log(h.predicted[i] / rows[i].seconds));
  return other_groups_coverage(by_group, level).share;
}

double derived_interval_coverage(const DerivedScore& d, double level) {
  std::map<std::string, std::vector<double>> by_pair;
  // Keyed by the pair's index: its name need not be unique.
  for (std::size_t k = 0; k < d.log_time.size(); ++k) by_pair[std::to_string(d.time_pair[k])].push_back(d.log_time[k]);
  return other_groups_coverage(by_pair, level).share;
}

}  // namespace ringsim::calibration
