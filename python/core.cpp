// ringsim._core: the compiled half of `import ringsim`. It only converts: requests arrive as the
// JSON of a sweep file or a plan file (the same vocabulary and the same checks as the CLI's files),
// answers leave as the sweep's CSV rows, the rows' JSON and plain arrays. Everything that
// computes is the core the CLI and the GUI call (planning's sweep, planner and evaluator, models'
// workload rows, sim's step). Long work runs without the GIL.
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "io/build_info.hpp"
#include "io/output_file.hpp"
#include "models/analytic/analytic.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "models/program/program.hpp"
#include "models/program/workload_rows.hpp"
#include "planning/evaluate.hpp"
#include "planning/plan.hpp"
#include "planning/predict_grid.hpp"
#include "planning/predict_runs.hpp"
#include "planning/sweep.hpp"
#include "sim/step.hpp"
#include "sim/step_size.hpp"
#include "sim/trace.hpp"

namespace py = pybind11;
using namespace ringsim;

namespace {

// Errors name this where the CLI names a file: the request came from Python arguments.
constexpr const char* kSource = "<python>";

nlohmann::json parse_request(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw models::InputError(kSource, 0, "request", std::string("not JSON: ") + e.what());
  }
}

planning::SweepGrid grid_of(const std::string& request, const models::Catalog& catalog) {
  auto grid = planning::SweepGrid::from_json(parse_request(request), kSource);
  grid.validate(catalog, kSource);
  return grid;
}

// One scenario (workload, simulate): the scenario commands' defaults where the request names
// nothing (planning/predict_runs.hpp: the command line's), one layout.
planning::SweepGrid scenario_grid(const std::string& request, const models::Catalog& catalog) {
  auto grid = planning::scenario_request_from_json(parse_request(request), kSource, planning::kDefaultLayout).grid;
  grid.validate(catalog, kSource);
  return grid;
}

planning::SweepOptions options(std::int64_t threads) {
  if (threads < 0) throw models::InputError(kSource, 0, "threads", "expected 0 (every core) or a positive count");
  planning::SweepOptions o;
  o.threads = threads;
  return o;
}

std::string csv_header(bool inference) {
  std::string h;
  for (const auto& c : planning::sweep_columns(inference)) h += (h.empty() ? "" : ",") + c;
  return h + "\n";
}

// The sweep's CSV (header, then every row in the sweep's order): the bytes `ringsim sweep`
// writes after its comment lines (with the inference columns when a phase is prefill or decode).
std::string sweep_csv(const std::string& request, std::int64_t threads) {
  const models::Catalog catalog;
  const auto grid = grid_of(request, catalog);
  const auto opts = options(threads);
  std::string out = csv_header(grid.has_inference());
  {
    py::gil_scoped_release release;
    (void)planning::run_points(grid, catalog, opts, 0, [&](const std::string& rows) { out += rows; });
  }
  return out;
}

// A row for Python: its JSON fields, its row of a sweep of its own phase (with the inference
// columns for a prefill or decode row) and its row with the inference columns whatever its phase
// (results_frame puts rows of several phases in one frame).
using Row = std::tuple<std::string, std::string, std::string>;

std::pair<std::string, std::string> csv_rows(const planning::SweepResult& r) {
  std::string own, all;
  planning::append_csv_row(r, own, r.point.phase != models::RunPhase::Train);
  planning::append_csv_row(r, all, true);
  return {own, all};
}

// predict: the comparison `ringsim predict` makes (planning/predict_runs: its rows, libraries and
// defaults) for every combination of the other fields (planning::predict_grid).
std::vector<Row> predict_results(const std::string& request, std::int64_t threads) {
  const models::Catalog catalog;
  const auto req = planning::scenario_request_from_json(parse_request(request), kSource, planning::kDefaultPredictLayouts);
  req.grid.validate(catalog, kSource);
  const auto opts = options(threads);
  std::vector<planning::PredictRow> found;
  {
    py::gil_scoped_release release;
    found = planning::predict_grid(req.grid, req.layouts_given, catalog, opts.threads);
  }
  std::vector<Row> rows;
  for (const auto& row : found) {
    auto [own, all] = csv_rows(row.result);
    rows.emplace_back(planning::predict_row_json(row).dump(), std::move(own), std::move(all));
  }
  return rows;
}

// The planner's answer: the same JSON as `ringsim plan --format json` (planning::plan_json).
std::string plan_json(const std::string& request, std::int64_t threads) {
  const models::Catalog catalog;
  const auto req = planning::plan_request_from_json(parse_request(request), kSource);
  const auto grid = planning::plan_grid(req, catalog);
  grid.validate(catalog, kSource);
  const auto opts = options(threads);
  planning::PlanSearch found;
  {
    py::gil_scoped_release release;
    found = planning::search_plans(grid, catalog, req, opts);
  }
  auto j = planning::plan_json(req, found);
  // Each row's CSV lines too, so plans go into results_frame with the sweep's columns.
  const auto csv = [](nlohmann::json& entry, const planning::SweepResult& r) {
    auto [own, all] = csv_rows(r);
    entry["csv"] = std::move(own);
    entry["csv_all_phases"] = std::move(all);
  };
  for (std::size_t i = 0; i < found.plans.size(); ++i) csv(j["plans"][i], found.plans[i].plan);
  for (std::size_t i = 0; i < found.best_per_strategy.size(); ++i)
    csv(j["best_per_strategy"][i], found.best_per_strategy[i]);
  for (std::size_t i = 0; i < found.best_per_implementation.size(); ++i)
    csv(j["best_per_implementation"][i], found.best_per_implementation[i]);
  return j.dump();
}

// The one scenario of a request (a sweep file whose every axis has one value).
models::ResolvedScenario scenario_of(const planning::SweepGrid& grid, const models::Catalog& catalog, const char* what) {
  if (grid.size() != 1)
    throw models::InputError(kSource, 0, "request",
                             fmt::format("{} takes one scenario; this request has {} (give one value per argument)",
                                         what, grid.size()));
  return planning::resolve_point(grid.point(0), catalog, grid.memory.precision);
}

template <typename T>
py::array_t<T> matrix(const std::vector<T>& values, std::int64_t rows, std::int64_t cols) {
  py::array_t<T> a({rows, cols});
  auto m = a.template mutable_unchecked<2>();
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) m(i, j) = values[static_cast<std::size_t>(i * cols + j)];
  return a;
}

// `ringsim workload` as arrays of shape (rounds, devices): a ring's rounds by its positions, or
// one round by the devices for strategies without a ring.
py::dict workload(const std::string& request, double max_rows) {
  const models::Catalog catalog;
  const auto grid = scenario_grid(request, catalog);
  const auto s = scenario_of(grid, catalog, "workload");
  if (!std::isfinite(max_rows) || max_rows <= 0)
    throw models::InputError(kSource, 0, "max_rows", fmt::format("expected a positive number, got {}", max_rows));
  const std::int64_t total = models::workload_row_count(s);
  if (static_cast<double>(total) > max_rows)
    throw models::InputError(kSource, 0, "max_rows",
                             fmt::format("{} (round, device) rows exceed max_rows = {:g}", total, max_rows));
  const std::int64_t devices = s.program->has_ring() ? s.ring_scenario().workload->devices() : s.spec.sp;
  const std::int64_t rounds = total / devices;
  const char* names[] = {"kv_block", "tiles_total", "tiles_computed", "allowed_pairs", "kv_bytes",
                         "tiles_visited", "visited_area", "masked_area"};
  std::vector<std::vector<std::int64_t>> cols(std::size(names));
  for (auto& c : cols) c.reserve(static_cast<std::size_t>(total));
  {
    py::gil_scoped_release release;
    models::for_each_workload_row(s, [&](const models::WorkloadRow& w) {
      const auto& b = w.stats;
      const std::int64_t v[] = {w.kv_block, b.tiles_total, b.tiles_computed, b.allowed_pairs, w.kv_bytes,
                                b.tiles_visited, b.visited_area, b.masked_area};
      for (std::size_t k = 0; k < cols.size(); ++k) cols[k].push_back(v[k]);
    });
  }
  py::dict out;
  for (std::size_t k = 0; k < cols.size(); ++k) out[names[k]] = matrix(cols[k], rounds, devices);
  out["strategy"] = s.strategy.spec;
  out["impl"] = s.impl.name;
  out["ring"] = s.program->has_ring();
  return out;
}

// One simulated step: its figures, the per-device times and the (device, round) matrices; with
// `trace` a Chrome trace written there (atomically, as the CLI writes it).
py::dict simulate(const std::string& request, const std::string& sync, const std::string& granularity,
                  const std::string& trace, double max_events) {
  const models::Catalog catalog;
  const auto grid = scenario_grid(request, catalog);
  const auto point = grid.point(0);
  const auto s = scenario_of(grid, catalog, "simulate");
  if (!std::isfinite(max_events) || max_events <= 0)
    throw models::InputError(kSource, 0, "max_events", fmt::format("expected a positive number, got {}", max_events));
  sim::StepOptions o;
  o.topology = point.topology;
  o.buffers = grid.kv_buffers;
  if (sync != "async" && sync != "barrier") throw models::InputError(kSource, 0, "sync", "expected async or barrier");
  if (granularity != "round" && granularity != "tile")
    throw models::InputError(kSource, 0, "granularity", "expected round or tile");
  o.sync = sync == "barrier" ? sim::Sync::Barrier : sim::Sync::Async;
  o.granularity = granularity == "tile" ? sim::Granularity::Tile : sim::Granularity::Round;
  o.record_trace = !trace.empty();
  try {
    sim::check_step_size(s, o, max_events, "this scenario", "raise max_events to simulate larger steps");
  } catch (const models::InputError& e) {
    // The limit is Python's keyword here, not the command line's flag.
    throw e.field() == "max-events" ? e.with_field("max_events") : e;
  }
  // Opened before the simulation: an unusable path fails at once.
  std::unique_ptr<io::Output> trace_out;
  if (!trace.empty()) trace_out = std::make_unique<io::Output>(trace);
  sim::StepResult res;
  double analytic = 0;
  {
    py::gil_scoped_release release;
    res = sim::simulate_step(s, o);
    analytic = models::predict(s).step_s;
  }
  if (trace_out) {
    trace_out->write(sim::chrome_trace_json(res));
    trace_out->commit();
  }
  py::dict out;
  out["step_s"] = res.step_s;
  out["tokens_per_s"] = res.tokens_per_s;
  out["mfu"] = res.mfu;
  out["exposed_communication_s"] = res.exposed_communication_s;
  out["imbalance"] = res.imbalance;
  out["analytic_step_s"] = analytic;
  out["events"] = res.events;
  out["topology"] = res.topology;
  out["devices"] = res.devices;
  out["rounds"] = res.rounds;
  out["impl"] = s.impl.name;
  out["busy_s"] = py::array_t<double>(static_cast<py::ssize_t>(res.busy_s.size()), res.busy_s.data());
  out["idle_s"] = py::array_t<double>(static_cast<py::ssize_t>(res.idle_s.size()), res.idle_s.data());
  out["compute_s"] = matrix(res.compute_s, res.devices, res.rounds);
  out["wait_s"] = matrix(res.wait_s, res.devices, res.rounds);
  out["transfer_s"] = matrix(res.transfer_s, res.devices, res.rounds);
  return out;
}

std::string profile_json(const std::string& impl, const std::string& hardware) {
  const models::Catalog catalog;
  return catalog.profile("", catalog.hardware(hardware), catalog.implementation(impl).name).to_json().dump();
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "ringsim's core (use the ringsim package, not this module)";
  static py::exception<models::InputError> input_error(m, "InputError", PyExc_ValueError);
  static py::exception<io::OutputError> output_error(m, "OutputError", PyExc_OSError);
  // The message is the CLI's one line after "error: ": file, line, field and what was expected;
  // the exception carries them apart too (file, field, reason), so the package can name the
  // Python keyword a field came from.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const models::InputError& e) {
      py::object error = py::handle(input_error.ptr())(e.what());
      error.attr("file") = e.file();
      error.attr("field") = e.field();
      error.attr("reason") = e.message();
      PyErr_SetObject(input_error.ptr(), error.ptr());
    } catch (const io::OutputError& e) {
      output_error(e.what());
    }
  });
  m.def("sweep_csv", &sweep_csv, py::arg("request"), py::arg("threads") = 0);
  m.def("predict_results", &predict_results, py::arg("request"), py::arg("threads") = 0);
  m.def("plan_json", &plan_json, py::arg("request"), py::arg("threads") = 0);
  m.def("workload", &workload, py::arg("request"), py::arg("max_rows") = 1e7);
  m.def("simulate", &simulate, py::arg("request"), py::arg("sync") = "async", py::arg("granularity") = "round",
        py::arg("trace") = "", py::arg("max_events") = 2e10);
  m.def("sweep_columns", [](bool inference) { return planning::sweep_columns(inference); }, py::arg("inference") = false);
  m.def("inference_columns", [] { return planning::inference_columns(); });
  const auto build = io::build_info();
  m.attr("version") = build.version;
  m.attr("commit") = build.commit;
  m.attr("build_type") = build.build_type;
  m.def("hardware_names", [] { return models::Catalog().hardware_names(); });
  m.def("model_names", [] { return models::Catalog().model_names(); });
  m.def("implementation_names", [] { return models::Catalog().implementation_names(); });
  m.def("profile_json", &profile_json, py::arg("impl"), py::arg("hardware"));
}
