"""ringsim from Python: predictions, sweeps, plans, exact workloads and simulations of
context-parallel attention, computed by the same C++ core as the `ringsim` command line.

Every function takes the vocabulary of a sweep file (docs/planning.md): hardware, model, impl,
cp, mesh, dp, n_seq, batch, layout, mask, tile, topology, zero, recompute, profile, kv_buffers,
engine, intervals, precision, sequence_parallel, offload_optimizer, headroom_gib; a list where the
sweep file takes a list. Bad input raises ringsim.InputError with the command line's one-line
message. See docs/python.md.
"""
import io
import json

from . import _core

InputError = _core.InputError
OutputError = _core.OutputError

__all__ = ["InputError", "OutputError", "Result", "Plan", "predict", "sweep", "plan", "workload", "simulate",
           "results_frame", "hardware", "models", "implementations", "profile"]


def _mesh(mesh):
    """(mp, sp) -> "MPxSP"; strings pass as they are; a list of either stays a list."""
    if isinstance(mesh, tuple) and len(mesh) == 2 and all(isinstance(x, int) for x in mesh):
        return "%dx%d" % mesh
    if isinstance(mesh, list):
        return [_mesh(m) for m in mesh]
    return mesh


def _request(fields):
    """A sweep file's JSON from keyword arguments; None leaves the field at its default."""
    out = {}
    for key, value in fields.items():
        if value is None:
            continue
        if key == "mesh":
            value = _mesh(value)
        out[key] = value
    return json.dumps(out)


class Result:
    """One predicted configuration: every column of the sweep CSV as an attribute (step_s,
    tokens_per_s, mfu, memory_bytes, step_s_lo, step_s_hi, fits_memory, ...), plus `why` (the
    one-line reason: bound, exposed communication, imbalance, memory; for a skipped row, why it
    cannot run) and `csv` (its row of the sweep CSV)."""

    __slots__ = ("_fields", "why", "csv")

    def __init__(self, fields, csv, why):
        self._fields = fields
        self.csv = csv
        self.why = why

    def __getattr__(self, name):
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(name) from None

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


def _results(request, threads):
    return [Result(json.loads(fields), csv, why) for fields, csv, why in _core.sweep_results(request, threads)]


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
    """A pandas DataFrame of results (or plans) with the sweep CSV's column names, one row each."""
    header = ",".join(_core.sweep_columns()) + "\n"
    return _frame(header + "".join(r.csv for r in results))


def predict(hardware="a100-80gb", model="ringattn-1b", mesh=(1, 8), seq=65536, layouts=None, cp=None, impl=None,
            threads=0, **fields):
    """Predict one configuration under several layouts and strategies, as `ringsim predict` does
    (ZeRO-3, the profile's recomputation, unless given): a list of Result, layouts inner.

    layouts: default contiguous, striped, zigzag; cp: default the hardware's ring library;
    further keyword arguments are sweep-file fields (dp, zero, recompute, batch, mask, tile,
    topology, engine, precision, headroom_gib, ...)."""
    fields.update(hardware=hardware, model=model, mesh=mesh, n_seq=seq,
                  layout=list(layouts) if layouts is not None else ["contiguous", "striped", "zigzag"],
                  cp=list(cp) if isinstance(cp, (list, tuple)) else cp, impl=impl)
    return _results(_request(fields), threads)


def sweep(grid=None, threads=0, as_frame=True, **fields):
    """Every combination of a sweep's axes, on every core. grid: a dict in the sweep file's
    vocabulary, or the path of a sweep file (JSON); keyword arguments add or replace fields.
    Returns a pandas DataFrame with the CSV's columns (as_frame), else a dict of NumPy arrays."""
    spec = {}
    if isinstance(grid, str):
        with open(grid) as f:
            spec = json.load(f)
    elif grid is not None:
        spec = dict(grid)
    spec.update(fields)
    frame = _frame(_core.sweep_csv(_request(spec), threads))
    if as_frame:
        return frame
    return {c: frame[c].to_numpy() for c in frame.columns}


class Plan(Result):
    """A row of the planner's answer: a Result with, for a ranked plan, its rank and the
    configurations that tie with it (ties: a list of dicts); maturity and profile_origin say what
    a user could deploy as predicted."""

    __slots__ = ()

    def __init__(self, entry):
        entry = dict(entry)
        csv = entry.pop("csv")
        super().__init__(entry, csv, entry.get("why", ""))


class PlanAnswer(list):
    """The ranked plans (a list of Plan), with best_per_strategy, best_per_implementation and the
    search's counts (searched, evaluated, fit_memory, feasible, excluded: skipped without evaluation)
    and the goal, as `ringsim plan --format json` gives them."""


def plan(hardware="h100-sxm", model="llama3-8b", goal="max-throughput", seq=131072, devices=8, threads=0,
         **fields):
    """The best configurations for a goal, as `ringsim plan`: goal max-throughput (on `devices`),
    min-devices (target_tokens_per_s=...) or max-context (max_context=...); further keyword
    arguments are plan-file fields (impl, cp, layout, tile, topology, zero, recompute, mp, top,
    include_research, batch, mask, ...). Returns a PlanAnswer (a list of Plan, best first)."""
    fields.update(hardware=hardware, model=model, goal=goal, n_seq=seq, devices=devices)
    answer = json.loads(_core.plan_json(_request(fields), threads))
    out = PlanAnswer(Plan(p) for p in answer["plans"])
    out.best_per_strategy = [Plan(p) for p in answer["best_per_strategy"]]
    out.best_per_implementation = [Plan(p) for p in answer["best_per_implementation"]]
    for key in ("goal", "searched", "evaluated", "fit_memory", "feasible", "excluded"):
        setattr(out, key, answer[key])
    return out


def workload(hardware="a100-80gb", model="ringattn-1b", mesh=(1, 8), seq=65536, layout="contiguous", cp=None,
             impl=None, max_rows=1e7, **fields):
    """The exact work of one scenario, as `ringsim workload`: a dict of int64 NumPy arrays of shape
    (rounds, devices) (kv_block, tiles_total, tiles_computed, allowed_pairs, kv_bytes,
    tiles_visited, visited_area, masked_area), and strategy, impl, ring. A strategy without a ring
    gives one round: each device's kernel calls in total."""
    fields.update(hardware=hardware, model=model, mesh=mesh, n_seq=seq, layout=layout, cp=cp, impl=impl)
    return _core.workload(_request(fields), float(max_rows))


def simulate(hardware="a100-80gb", model="ringattn-1b", mesh=(1, 8), seq=65536, layout="contiguous", cp=None,
             impl=None, sync="async", granularity="round", trace=None, max_events=2e10, **fields):
    """One training step through the discrete-event simulator, as `ringsim simulate`: step_s,
    tokens_per_s, mfu, exposed_communication_s, imbalance, analytic_step_s, events; busy_s and
    idle_s per device; compute_s, wait_s and transfer_s as (devices, rounds) arrays. trace: a
    path to write the Chrome trace to."""
    fields.update(hardware=hardware, model=model, mesh=mesh, n_seq=seq, layout=layout, cp=cp, impl=impl)
    return _core.simulate(_request(fields), sync, granularity, trace or "", float(max_events))


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
    return json.loads(_core.profile_json(impl, hardware_name))
