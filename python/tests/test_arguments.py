"""Arguments as a notebook passes them: NumPy scalars and arrays are taken for their values; a
wrong type raises TypeError, a bad value ringsim.InputError (a ValueError), each naming the
keyword the user wrote (not the sweep file's field or the command line's flag)."""
import math
import re

import numpy
import pytest

import ringsim

SMALL = {"mesh": (1, 4), "seq": 16384}


def test_numpy_scalars_and_arrays_are_taken_for_their_values():
    plain = ringsim.predict(hardware="h100-sxm", mesh=(1, 4), seq=16384, layouts=["zigzag"], dp=2, headroom_gib=2.5)
    for kwargs in (
        dict(mesh=(numpy.int64(1), numpy.int64(4)), seq=numpy.int64(16384), dp=numpy.int32(2),
             headroom_gib=numpy.float64(2.5)),
        dict(mesh=numpy.array([1, 4]), seq=numpy.array(16384), dp=numpy.uint8(2), headroom_gib=numpy.float32(2.5)),
        dict(mesh="1x4", seq=numpy.float64(16384.0), dp=2.0, headroom_gib=numpy.array(2.5)),
    ):
        got = ringsim.predict(hardware=numpy.str_("h100-sxm"), layouts=numpy.array(["zigzag"]), **kwargs)
        assert [r.to_dict() for r in got] == [r.to_dict() for r in plain]
    # 1-d arrays where a list is taken: a sweep's axes, predict's layouts.
    frame = ringsim.sweep({"n_seq": numpy.array([8192, 16384]), "mesh": "1x4", "layout": numpy.array(["striped"])})
    assert list(frame.n_seq) == [8192, 16384]
    assert ringsim.sweep(n_seq=numpy.arange(1, 3) * 8192, mesh="1x4", layout="zigzag").n_seq.tolist() == [8192, 16384]
    w = ringsim.workload(mesh=(numpy.int64(1), numpy.int64(4)), seq=numpy.int64(16384), max_rows=numpy.float32(1e6))
    assert w["allowed_pairs"].shape == (4, 4)
    assert ringsim.simulate(mesh=(1, 4), seq=numpy.int64(16384), max_events=numpy.float64(1e9))["step_s"] > 0


@pytest.mark.parametrize("call, keyword", [
    (lambda: ringsim.predict(layouts="zigzag", **SMALL), "layouts"),
    (lambda: ringsim.predict(threads="2", **SMALL), "threads"),
    (lambda: ringsim.sweep({"n_seq": 8192}, threads="2"), "threads"),
    (lambda: ringsim.plan(threads=2.5), "threads"),
    (lambda: ringsim.predict(mesh=(1, 4), seq="many"), "seq"),
    (lambda: ringsim.predict(mesh=(1, 4), seq=16384.5), "seq"),
    (lambda: ringsim.predict(hardware=3, **SMALL), "hardware"),
    (lambda: ringsim.predict(intervals="yes", **SMALL), "intervals"),
    (lambda: ringsim.predict(dp=True, **SMALL), "dp"),
    (lambda: ringsim.predict(layouts=[["zigzag"]], **SMALL), "layouts[0]"),
    (lambda: ringsim.predict(mesh=numpy.ones((2, 2), dtype=int), seq=16384), "mesh"),
    (lambda: ringsim.sweep({"n_seq": "many"}), "n_seq"),
    (lambda: ringsim.sweep({"hardware": object()}), "hardware"),
    (lambda: ringsim.workload(mesh=["1x4", "1x8"]), "mesh"),
    (lambda: ringsim.workload(max_rows="lots", **SMALL), "max_rows"),
    (lambda: ringsim.simulate(sync=1, **SMALL), "sync"),
    (lambda: ringsim.simulate(max_events="many", **SMALL), "max_events"),
    (lambda: ringsim.plan(mp=2), "mp"),
    (lambda: ringsim.profile(3, "h100-sxm"), "impl"),
])
def test_a_wrong_type_is_a_type_error_naming_the_keyword(call, keyword):
    with pytest.raises(TypeError) as e:
        call()
    assert "'%s'" % keyword in str(e.value) and "\n" not in str(e.value)
    assert "pybind11" not in str(e.value) and "Invoked with" not in str(e.value)


@pytest.mark.parametrize("call, keyword", [
    (lambda: ringsim.predict(mesh=(1, 4), seq=math.nan), "seq"),
    (lambda: ringsim.predict(headroom_gib=math.inf, **SMALL), "headroom_gib"),
    (lambda: ringsim.predict(headroom_gib=numpy.float64("nan"), **SMALL), "headroom_gib"),
    (lambda: ringsim.sweep({"n_seq": [8192, numpy.inf]}), "n_seq[1]"),
    (lambda: ringsim.workload(max_rows=math.nan, **SMALL), "max_rows"),
    (lambda: ringsim.simulate(max_events=math.inf, **SMALL), "max_events"),
    (lambda: ringsim.plan(target_tokens_per_s=math.nan, goal="min-devices"), "target_tokens_per_s"),
    # Values the core refuses, named by the keyword the user wrote.
    (lambda: ringsim.predict(mesh=(1, 4), seq=-5), "seq"),
    (lambda: ringsim.predict(layouts=["zigzag", "no-such-layout"], **SMALL), "layouts[1]"),
    (lambda: ringsim.workload(mesh=(1, 4), seq=0), "seq"),
    (lambda: ringsim.plan(seq=-1), "seq"),
    (lambda: ringsim.profile("ring-flash-attn", "no-such-gpu"), "hardware_name"),
])
def test_a_bad_value_is_a_value_error_naming_the_keyword(call, keyword):
    with pytest.raises(ringsim.InputError) as e:
        call()
    assert isinstance(e.value, ValueError)
    assert "keyword '%s'" % keyword in str(e.value) and "\n" not in str(e.value)
    assert "not JSON" not in str(e.value) and "'request'" not in str(e.value)
    assert e.value.keyword == "keyword '%s'" % keyword


def test_the_simulation_limit_names_the_python_keyword():
    with pytest.raises(ringsim.InputError) as e:
        ringsim.simulate(mesh=(1, 4), seq=16384, max_events=10)
    assert "keyword 'max_events'" in str(e.value) and "max-events" not in str(e.value)


def test_a_sweep_file_field_is_named_with_its_file(tmp_path):
    path = tmp_path / "grid.json"
    path.write_text('{"n_seq": "many"}')
    with pytest.raises(ringsim.InputError, match=re.escape("%s: field 'n_seq'" % path)):
        ringsim.sweep(str(path))
    path.write_text('{"n_seq": 0}')
    with pytest.raises(ringsim.InputError, match=re.escape("%s: field 'n_seq'" % path)):
        ringsim.sweep(str(path))
    # A keyword replacing the file's field is named as the keyword.
    with pytest.raises(TypeError, match="keyword 'n_seq'"):
        ringsim.sweep(path, n_seq="many")
