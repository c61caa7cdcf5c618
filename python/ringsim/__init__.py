"""ringsim from Python: predictions, sweeps, plans, exact workloads and simulations of
context-parallel attention, computed by the same C++ core as the `ringsim` command line.

Every function takes the vocabulary of a sweep file (docs/planning.md): hardware, model, impl,
cp, mesh, dp, n_seq, batch, layout, mask, tile, topology, zero, recompute, profile, kv_buffers,
engine, intervals, precision, sequence_parallel, offload_optimizer, headroom_gib; a list where the
sweep file takes a list. Python and NumPy numbers, 0-d and 1-d arrays are taken for their values.
A wrong type raises TypeError and a bad value ringsim.InputError (a ValueError), each naming the
keyword. See docs/python.md.
"""
import io
import json
import os

from . import _arguments as _args
from . import _core

InputError = _core.InputError
OutputError = _core.OutputError

# The build: version (CMakeLists.txt), the commit of its sources (git describe; "unknown" outside a
# git checkout) and CMake's build type, as `ringsim --version` prints them.
__version__ = _core.version
__commit__ = _core.commit
__build_type__ = _core.build_type

__all__ = ["InputError", "OutputError", "Result", "Plan", "PlanAnswer", "predict", "sweep", "plan", "workload",
           "simulate", "results_frame", "hardware", "models", "implementations", "profile"]


def _restore(cls, fields, csv, why, row):
    r = cls.__new__(cls)
    r._fields, r.csv, r.why, r._row = fields, csv, why, row
    return r


class Result:
    """One predicted configuration: every column of the sweep CSV as an attribute (step_s,
    tokens_per_s, mfu, memory_bytes, step_s_lo, step_s_hi, fits_memory, ...; a prefill or decode
    row also phase, cached_tokens, ttft_s or tpot_s, variant, kv_cache_bytes, kernel), plus `why` (the
    one-line reason: what bounds the step; for a skipped row, why it cannot run) and `csv` (its
    row of the sweep CSV). predict's rows also carry predict's comparison fields (speedup_vs_first,
    its _lo and _hi, pred_tms, exposed_allgather_s, ...). dir() lists the fields; results pickle
    and copy (multiprocessing, joblib)."""

    __slots__ = ("_fields", "why", "csv", "_row")

    def __init__(self, fields, csv, why, row=None):
        self._fields = fields
        self.csv = csv
        self.why = why
        self._row = csv if row is None else row  # with the inference columns, whatever the phase

    def __getattr__(self, name):
        # Only for names that are not attributes: a field, else AttributeError. Private names never
        # reach the fields (an object being copied or unpickled has none yet).
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError("%s has no field %r" % (type(self).__name__, name)) from None

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(self._fields))

    def __reduce__(self):
        return _restore, (type(self), self._fields, self.csv, self.why, self._row)

    @property
    def ok(self):
        return self._fields["status"] == "ok"

    @property
    def interval(self):
        """The 90 % prediction interval of the step (lo, hi) in seconds; None where the profile has none."""
        lo, hi = self._fields.get("step_s_lo"), self._fields.get("step_s_hi")
        return None if lo is None or hi is None else (lo, hi)

    def to_dict(self):
        d = dict(self._fields)
        d["why"] = self.why
        return d

    def __repr__(self):
        f = self._fields
        if not self.ok:
            return "Result(%s %s %s: skipped, %s)" % (f["cp"], f["layout"], f["impl"], f["note"])
        return "Result(%s %s %s, dp %s x mesh %sx%s: step %.4g s, %.4g tokens/s, MFU %.1f%%)" % (
            f["cp"], f["layout"], f["impl"], f["dp"], f["mp"], f["sp"], f["step_s"], f["tokens_per_s"], 100 * f["mfu"])


def _frame(csv_text):
    """The sweep CSV as a DataFrame: empty cells (a skipped row's figures) are missing values, and
    the true/false columns are pandas' nullable booleans, so `~frame.fits_memory` works with
    skipped rows present."""
    import pandas
    frame = pandas.read_csv(io.StringIO(csv_text), keep_default_na=False, na_values=[""], low_memory=False)
    for column in ("fits_memory", "profile_calibrated"):
        if column in frame:
            frame[column] = frame[column].map({True: True, False: False, "true": True, "false": False}).astype("boolean")
    return frame


def results_frame(results):
    """A pandas DataFrame of results (or plans) with the sweep CSV's column names, one row each;
    with the inference columns (phase, cached_tokens, ttft_s, tpot_s, ...) when a row is a prefill
    or decode."""
    results = list(results)
    header = ",".join(_core.sweep_columns(True)) + "\n"
    frame = _frame(header + "".join(r._row for r in results))
    if all(r._fields.get("phase", "train") == "train" for r in results):
        frame = frame.drop(columns=_core.inference_columns())
    return frame


def _mesh_labels(given):
    """Core fields -> the keyword they came from, when mp and sp came from `mesh`."""
    return {} if given & {"mp", "sp"} else {"mp": _args.keyword("mesh"), "sp": _args.keyword("mesh")}


def _scenario_fields(function, fields, reserved):
    """A scenario function's **fields: sweep-file fields, but not the ones it names otherwise."""
    for name, instead in reserved.items():
        if name in fields:
            raise TypeError("ringsim.%s: keyword '%s': this function takes %s=" % (function, name, instead))
    return fields


def predict(hardware=None, model=None, mesh=None, seq=None, layouts=None, cp=None, impl=None, threads=0, **fields):
    """Predict configurations as `ringsim predict` does, through the same core call: for each
    combination of the arguments given as lists, the command's comparison of strategies (cp) and
    layouts, each strategy run by the one implementation that offers all the layouts. A list of
    Result, strategies outer, layouts inner.

    Defaults are the command line's: hardware a100-80gb, model ringattn-1b, mesh (1, 8), seq
    131072, cp ring, ZeRO-3, the profile's recomputation; layouts (a list, not a string) default to
    contiguous, striped, zigzag, each strategy keeping those its library offers (Ulysses the first).
    A row that cannot run is a skipped Result (ok False, why says why) when others run; when none
    can (one scenario, say), ringsim.InputError names the keyword and the reason. Further keyword
    arguments are sweep-file fields (dp, zero, recompute, batch, mask, tile, topology, engine,
    precision, headroom_gib, phase, cached_tokens, ...)."""
    fields = dict(_scenario_fields("predict", fields, {"n_seq": "seq", "layout": "layouts"}))
    threads = _args.one("predict", "threads", threads, _args.INT)
    given = set(fields)
    fields.update(hardware=hardware, model=model, mesh=mesh, n_seq=seq, cp=cp, impl=impl)
    names = {"n_seq": "seq", "layout": "layouts"}
    labels = lambda field: _args.keyword(names.get(field, field))
    many = lambda field: _args.LIST if field == "layout" else _args.sweep_many(field)
    if layouts is not None:
        fields["layout"] = layouts
    text = _args.request("predict", fields, many, labels)
    core_labels = dict(_mesh_labels(given), n_seq=labels("n_seq"), seq=labels("n_seq"), layout=labels("layout"))
    rows = _args.call("predict", core_labels, _core.predict_results, text, threads)
    out = []
    for fields_json, csv, row in rows:
        f = json.loads(fields_json)
        out.append(Result(f, csv, f.pop("why"), row))
    return out


def _grid_spec(grid):
    """The sweep's fields from `grid` (a dict, whose keys are the sweep's keywords, or a sweep
    file's path), and the file they came from (None for a dict)."""
    if grid is None:
        return {}, None
    if isinstance(grid, (str, os.PathLike)):
        path = os.fspath(grid)
        with open(path) as f:
            try:
                spec = json.load(f)
            except ValueError as e:
                raise InputError("ringsim.sweep: %s: not JSON: %s" % (path, e)) from None
        if not isinstance(spec, dict):
            raise InputError("ringsim.sweep: %s: expected a JSON object of sweep fields" % path)
        return spec, path
    if isinstance(grid, dict):
        return dict(grid), None
    raise TypeError("ringsim.sweep: keyword 'grid': expected a dict of sweep fields or a sweep file's path, got a %s"
                    % type(grid).__name__)


def sweep(grid=None, threads=0, as_frame=True, **fields):
    """Every combination of a sweep's axes, on every core, as `ringsim sweep` (the sweep file's
    defaults: n_seq 65536, layouts contiguous and striped). grid: a dict in the sweep file's
    vocabulary, or the path of a sweep file (JSON); keyword arguments add or replace fields.
    Returns a pandas DataFrame with the CSV's columns (as_frame), else a dict of NumPy arrays;
    with a prefill or decode phase, the inference columns too. A point that cannot run is a row
    with status 'skipped' and its reason in `note`."""
    spec, path = _grid_spec(grid)
    threads = _args.one("sweep", "threads", threads, _args.INT)
    from_file = set(spec) - set(fields) if path else set()
    spec.update(fields)
    labels = lambda field: "%s: field '%s'" % (path, field) if field in from_file else _args.keyword(field)
    text = _args.request("sweep", spec, _args.sweep_many, labels, from_file)
    frame = _frame(_args.call("sweep", labels, _core.sweep_csv, text, threads))
    if as_frame:
        return frame
    return {c: frame[c].to_numpy() for c in frame.columns}


class Plan(Result):
    """A row of the planner's answer: a Result with, for a ranked plan, its rank and the
    configurations that tie with it (ties: a list of dicts), its fold (a dict: the ranks the model
    cannot tell apart, this plan's tokens/s ratio to the fastest of them and its 90 % interval; None
    outside any) and memory_spare_bytes; maturity and profile_origin say what a user could deploy as
    predicted."""

    __slots__ = ()

    def __init__(self, entry):
        entry = dict(entry)
        csv = entry.pop("csv")
        row = entry.pop("csv_all_phases", csv)
        super().__init__(entry, csv, entry.get("why", ""), row)


class PlanAnswer(list):
    """The ranked plans (a list of Plan), with best_per_strategy, best_per_implementation and the
    search's counts (searched, evaluated, fit_memory, feasible, excluded: skipped without evaluation,
    same_step: a FlashAttention library's tiles other than its own, which predict its own tile's step)
    and the goal, as `ringsim plan --format json` gives them."""


def plan(hardware=None, model=None, goal=None, seq=None, devices=None, threads=0, **fields):
    """The best configurations for a goal, as `ringsim plan` (its defaults: h100-sxm, llama3-8b,
    max-throughput, seq 131072, 8 devices): goal max-throughput (on `devices`), min-devices
    (target_tokens_per_s=...) or max-context (max_context=...); further keyword arguments are
    plan-file fields (impl, cp, layout, tile, topology, zero, recompute, mp (a list), global_batch,
    pp (a list), top, include_research, fold, batch, mask, phase, cached_tokens, ttft, tpot, ...). Returns a PlanAnswer
    (a list of Plan, best first)."""
    fields = dict(_scenario_fields("plan", fields, {"n_seq": "seq"}))
    threads = _args.one("plan", "threads", threads, _args.INT)
    fields.update(hardware=hardware, model=model, goal=goal, n_seq=seq, devices=devices)
    labels = lambda field: _args.keyword("seq" if field == "n_seq" else field)
    text = _args.request("plan", fields, _args.plan_many, labels)
    answer = json.loads(_args.call("plan", labels, _core.plan_json, text, threads))
    out = PlanAnswer(Plan(p) for p in answer["plans"])
    out.best_per_strategy = [Plan(p) for p in answer["best_per_strategy"]]
    out.best_per_implementation = [Plan(p) for p in answer["best_per_implementation"]]
    for key in ("goal", "searched", "evaluated", "fit_memory", "feasible", "excluded", "same_step"):
        setattr(out, key, answer[key])
    return out


def _one_scenario(function, fields):
    """The request of one scenario (workload, simulate): one value per keyword."""
    labels = lambda field: _args.keyword("seq" if field == "n_seq" else field)
    text = _args.request(function, fields, lambda field: _args.ONE, labels)
    core = dict(_mesh_labels(set(fields)), n_seq=labels("n_seq"), seq=labels("n_seq"))
    return text, core


def workload(hardware=None, model=None, mesh=None, seq=None, layout=None, cp=None, impl=None, max_rows=1e7,
             **fields):
    """The exact work of one scenario, as `ringsim workload` (its defaults: a100-80gb,
    ringattn-1b, (1, 8), seq 131072, contiguous): a dict of int64 NumPy arrays of shape
    (rounds, devices) (kv_block, tiles_total, tiles_computed, allowed_pairs, kv_bytes,
    tiles_visited, visited_area, masked_area), and strategy, impl, ring. A strategy without a ring
    gives one round: each device's kernel calls in total. A scenario that cannot run raises
    ringsim.InputError naming the keyword."""
    fields = dict(_scenario_fields("workload", fields, {"n_seq": "seq"}))
    fields.update(hardware=hardware, model=model, mesh=mesh, n_seq=seq, layout=layout, cp=cp, impl=impl)
    max_rows = _args.one("workload", "max_rows", max_rows, _args.NUMBER)
    text, labels = _one_scenario("workload", fields)
    return _args.call("workload", labels, _core.workload, text, float(max_rows))


def simulate(hardware=None, model=None, mesh=None, seq=None, layout=None, cp=None, impl=None, sync="async",
             granularity="round", trace=None, max_events=2e10, **fields):
    """One training step through the discrete-event simulator, as `ringsim simulate` (its
    defaults: a100-80gb, ringattn-1b, (1, 8), seq 131072; one layout, contiguous unless given):
    step_s, tokens_per_s, mfu, exposed_communication_s, imbalance, analytic_step_s, events; busy_s
    and idle_s per device; compute_s, wait_s and transfer_s as (devices, rounds) arrays. trace: a
    path to write the Chrome trace to. max_events: the simulation's event limit."""
    fields = dict(_scenario_fields("simulate", fields, {"n_seq": "seq"}))
    fields.update(hardware=hardware, model=model, mesh=mesh, n_seq=seq, layout=layout, cp=cp, impl=impl)
    sync = _args.one("simulate", "sync", sync, _args.TEXT)
    granularity = _args.one("simulate", "granularity", granularity, _args.TEXT)
    trace = "" if trace is None else _args.one("simulate", "trace", trace, _args.TEXT)
    max_events = _args.one("simulate", "max_events", max_events, _args.NUMBER)
    text, labels = _one_scenario("simulate", fields)
    return _args.call("simulate", labels, _core.simulate, text, sync, granularity, trace, float(max_events))


def hardware():
    """The catalog's hardware names (configs/hardware)."""
    return _core.hardware_names()


def models():
    """The catalog's model names (configs/models)."""
    return _core.model_names()


def implementations():
    """The catalog's implementation names (configs/implementations)."""
    return _core.implementation_names()


def profile(impl, hardware_name):
    """The profile an implementation runs with on a hardware, with its provenance (a dict)."""
    impl = _args.one("profile", "impl", impl, _args.TEXT)
    hardware_name = _args.one("profile", "hardware_name", hardware_name, _args.TEXT)
    labels = {"hardware": _args.keyword("hardware_name"), "impl": _args.keyword("impl")}
    return json.loads(_args.call("profile", labels, _core.profile_json, impl, hardware_name))
