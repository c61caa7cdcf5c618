"""`import ringsim` against the command line: the same scenarios give the same rows, arrays have
their documented shapes and types, bad input raises the documented exceptions.

Run by ctest (test python_module) with PYTHONPATH at the build's python/ folder and RINGSIM_CLI
naming the ringsim binary of the same build."""
import json

import numpy
import pytest

import ringsim
from support import cli, data_rows


GRID = {"hardware": ["a100-80gb", "h100-sxm"], "model": "llama3-8b", "mesh": ["1x4", "2x4"], "n_seq": [32768, 65536],
        "layout": ["contiguous", "zigzag"], "cp": ["ring", "ulysses"], "zero": [1, 3]}


def test_sweep_equals_the_cli_row_for_row(tmp_path):
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps(GRID))
    out = tmp_path / "out.csv"
    cli("sweep", str(grid), "-o", str(out))
    expected = data_rows(out.read_text())
    frame = ringsim.sweep(GRID)
    header, *rows = expected.splitlines()
    assert list(frame.columns) == header.split(",")
    assert len(frame) == len(rows) == 64
    # A sweep file's path works as the dict does.
    assert ringsim.sweep(str(grid)).equals(frame)


def test_predict_results_have_named_fields_and_a_frame():
    results = ringsim.predict(hardware="h100-sxm", model="llama3-8b", mesh=(1, 8), seq=131072)
    assert [r.layout for r in results] == ["contiguous", "striped", "zigzag"]
    for r in results:
        assert r.ok and r.step_s > 0 and r.tokens_per_s > 0 and 0 < r.mfu < 1
        assert r.memory_bytes > 0 and isinstance(r.fits_memory, bool)
        assert r.why and "bound" in r.why or "imbalance" in r.why
        lo, hi = r.interval
        assert lo < r.step_s < hi
        d = r.to_dict()
        assert d["tokens_per_s"] == r.tokens_per_s and d["why"] == r.why
    frame = ringsim.results_frame(results)
    assert list(frame["layout"]) == ["contiguous", "striped", "zigzag"]
    assert numpy.allclose(frame["tokens_per_s"], [r.tokens_per_s for r in results], rtol=1e-5)
    # Striped and zigzag balance the causal ring; contiguous does not.
    assert results[1].tokens_per_s > results[0].tokens_per_s


def test_a_row_of_a_comparison_that_cannot_run_is_a_skipped_result_with_its_reason():
    # Ulysses over 16 devices needs 16 KV heads; llama3-8b has 8. The ring row runs.
    ring, ulysses = ringsim.predict(hardware="h100-sxm", model="llama3-8b", mesh=(1, 16), seq=131072,
                                    layouts=["zigzag"], cp=["ring", "ulysses"])
    assert ring.ok and not ulysses.ok and ulysses.status == "skipped" and ulysses.why and ulysses.why == ulysses.note
    with pytest.raises(AttributeError):
        ulysses.step_s


def test_true_false_columns_are_nullable_booleans_with_skipped_rows():
    frame = ringsim.sweep({"hardware": "h100-sxm", "model": "llama3-8b", "mesh": ["1x8", "1x16"], "n_seq": 131072,
                           "cp": "ulysses", "impl": "te-a2a", "layout": "zigzag"})
    assert list(frame.status) == ["ok", "skipped"]
    assert str(frame.fits_memory.dtype) == "boolean"
    assert bool(frame.fits_memory[0]) is False and frame.fits_memory.isna()[1]
    assert list((~frame.fits_memory).fillna(False)) == [True, False]


def test_sweep_as_arrays():
    cols = ringsim.sweep(GRID, as_frame=False)
    assert cols["step_s"].dtype == numpy.float64 and cols["step_s"].shape == (64,)
    assert cols["devices"].dtype.kind == "i"


def test_workload_equals_the_cli_and_has_round_by_device_shape():
    args = ["--hardware", "a100-80gb", "--model", "ringattn-1b", "--mesh", "1x8", "--seq", "65536", "--layout", "zigzag"]
    text = cli("workload", *args)
    rows = [list(map(int, l.split(","))) for l in text.splitlines()[1:]]
    w = ringsim.workload(hardware="a100-80gb", model="ringattn-1b", mesh=(1, 8), seq=65536, layout="zigzag")
    assert w["ring"] and w["impl"] == "ring-flash-attn"
    names = ["kv_block", "tiles_total", "tiles_computed", "allowed_pairs", "kv_bytes", "tiles_visited", "visited_area",
             "masked_area"]
    for name in names:
        assert w[name].shape == (8, 8) and w[name].dtype == numpy.int64
    for r in rows:
        rnd, dev = r[0], r[1]
        assert [int(w[n][rnd, dev]) for n in names] == [r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9]]
    # Every causal pair is computed exactly once over the ring.
    n = 65536
    assert int(w["allowed_pairs"].sum()) == n * (n + 1) // 2
    # Without a ring: one round, each device's calls in total.
    u = ringsim.workload(mesh=(1, 8), seq=65536, cp="ulysses", layout="zigzag")
    assert not u["ring"] and u["allowed_pairs"].shape == (1, 8)


def test_simulate_matches_the_cli_and_writes_a_trace(tmp_path):
    (expected,) = json.loads(cli("simulate", "--hardware", "a100-80gb", "--model", "ringattn-1b", "--mesh", "1x4",
                                 "--seq", "16384", "--layout", "striped", "--format", "json"))
    s = ringsim.simulate(mesh=(1, 4), seq=16384, layout="striped")
    assert s["step_s"] == pytest.approx(expected["step_s"], rel=1e-12)
    assert s["analytic_step_s"] == pytest.approx(expected["analytic_step_s"], rel=1e-12)
    assert s["events"] == expected["events"]
    assert s["compute_s"].shape == (s["devices"], s["rounds"]) == (4, 4)
    assert s["busy_s"].shape == (4,) and s["busy_s"].dtype == numpy.float64
    # Recording the trace does not change the step.
    trace = tmp_path / "trace.json"
    t = ringsim.simulate(mesh=(1, 4), seq=16384, layout="striped", trace=str(trace))
    assert t["step_s"] == pytest.approx(s["step_s"], rel=1e-12)
    assert "traceEvents" in json.loads(trace.read_text())


def test_plan_equals_the_cli():
    expected = json.loads(cli("plan", "--hardware", "h100-sxm", "--model", "llama3-8b", "--devices", "8", "--seq",
                              "131072", "--top", "3", "--format", "json"))
    answer = ringsim.plan(hardware="h100-sxm", model="llama3-8b", devices=8, seq=131072, top=3)
    assert len(answer) == len(expected["plans"]) == 3
    for got, want in zip(answer, expected["plans"]):
        for key in ("rank", "cp", "layout", "impl", "mp", "sp", "dp", "step_s", "tokens_per_s", "why", "zero"):
            assert getattr(got, key) == want[key]
    assert answer.searched == expected["searched"] and answer.feasible == expected["feasible"]
    assert answer.same_step == expected["same_step"] > 0  # FlashAttention libraries at their own tile only
    assert [p.strategy for p in answer.best_per_strategy] == [p["strategy"] for p in expected["best_per_strategy"]]
    assert list(ringsim.results_frame(answer)["step_s"]) == pytest.approx([p["step_s"] for p in expected["plans"]], rel=1e-5)
    # The fold (plans the model cannot tell apart) as the CLI's, and fold=False ranks by the goal alone.
    assert [p.fold for p in answer] == [p["fold"] for p in expected["plans"]]
    plain = ringsim.plan(hardware="h100-sxm", model="llama3-8b", devices=8, seq=131072, top=3, fold=False)
    assert all(p.fold is None for p in plain)
    assert [p.tokens_per_s for p in plain] == sorted((p.tokens_per_s for p in plain), reverse=True)


def test_a_pipelined_plan_equals_the_cli():
    expected = json.loads(cli("plan", "--hardware", "h100-sxm", "--model", "llama2-7b", "--devices", "16", "--seq",
                              "16384", "--global-batch", "64", "--pp", "1,2", "--zero", "1", "--recompute", "none",
                              "--top", "4", "--format", "json"))
    answer = ringsim.plan(hardware="h100-sxm", model="llama2-7b", devices=16, seq=16384, global_batch=64, pp=[1, 2],
                          zero=1, recompute="none", top=4)
    assert len(answer) == len(expected["plans"]) == 4
    for got, want in zip(answer, expected["plans"]):
        for key in ("rank", "cp", "layout", "impl", "mp", "sp", "dp", "step_s", "tokens_per_s", "why", "zero"):
            assert getattr(got, key) == want[key]


def test_catalog():
    assert "h100-sxm" in ringsim.hardware() and "l20" in ringsim.hardware()
    assert "llama3-8b" in ringsim.models()
    assert "ring-flash-attn" in ringsim.implementations()
    p = ringsim.profile("ring-flash-attn", "h800")
    assert p["name"] == "ring-flash-attn/h800" and p["provenance"]["calibrated"]


@pytest.mark.parametrize("call, field", [
    (lambda: ringsim.predict(hardware="no-such-gpu"), "hardware"),
    (lambda: ringsim.predict(layouts=["no-such-layout"]), "layout"),
    (lambda: ringsim.predict(mesh=(1, 3), seq=65536, layouts=["zigzag"], bogus_field=1), "bogus_field"),
    (lambda: ringsim.sweep({"n_seq": 0}), "n_seq"),
    (lambda: ringsim.sweep({"hardware": "a100-80gb"}, threads=-1), "threads"),
    (lambda: ringsim.simulate(sync="sometimes"), "sync"),
    (lambda: ringsim.plan(goal="fastest"), "goal"),
    (lambda: ringsim.profile("no-such-impl", "h800"), "impl"),
])
def test_bad_input_raises_input_error_naming_the_field(call, field):
    with pytest.raises(ringsim.InputError) as e:
        call()
    assert "'%s'" % field in str(e.value) or field in str(e.value)
    assert "\n" not in str(e.value)
    assert isinstance(e.value, ValueError)


def test_an_unusable_trace_path_raises_output_error(tmp_path):
    with pytest.raises(ringsim.OutputError):
        ringsim.simulate(mesh=(1, 4), seq=16384, trace=str(tmp_path / "no" / "such" / "dir" / "t.json"))
