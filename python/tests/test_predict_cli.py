"""predict from Python is `ringsim predict`: on a grid of scenarios (strategies x layout lists x
defaults) every field of the CLI's JSON and CSV equals the module's result for that row: the same
rows, run by the same implementations (one per strategy for all the layouts), from the same
defaults.

Not compared, as the module does not carry them per row: the JSON's `rounds_fwd_one_layer` (the
per-round detail of one layer: ringsim.workload and ringsim.simulate give it per device and
round), and the scenario block's `tile_clamped`, `block_tokens` and full `profile` parameters
(ringsim.profile(impl, hardware) gives the profile; its name is compared)."""
import csv
import io
import json

import pytest

import ringsim
from support import cli

# (CLI flags, the same as Python keywords)
SCENARIOS = [
    ([], {}),
    (["--layout", "contiguous,striped,zigzag,cyclic:2"], {"layouts": ["contiguous", "striped", "zigzag", "cyclic:2"]}),
    (["--hardware", "h100-sxm", "--model", "llama3-8b", "--cp", "ring,ulysses,allgather"],
     {"hardware": "h100-sxm", "model": "llama3-8b", "cp": ["ring", "ulysses", "allgather"]}),
    (["--hardware", "h100-sxm", "--model", "llama3-8b", "--cp", "ring,allgather",
      "--layout", "contiguous,striped,zigzag,cyclic:2"],
     {"hardware": "h100-sxm", "model": "llama3-8b", "cp": ["ring", "allgather"],
      "layouts": ["contiguous", "striped", "zigzag", "cyclic:2"]}),
    (["--hardware", "h100-sxm", "--model", "llama3-8b", "--cp", "usp:2x4,double-ring:2", "--seq", "65536"],
     {"hardware": "h100-sxm", "model": "llama3-8b", "cp": ["usp:2x4", "double-ring:2"], "seq": 65536}),
    (["--mesh", "2x4", "--seq", "65536", "--dp", "2", "--zero", "1", "--recompute", "full", "--layout", "zigzag,striped"],
     {"mesh": (2, 4), "seq": 65536, "dp": 2, "zero": 1, "recompute": "full", "layouts": ["zigzag", "striped"]}),
    (["--hardware", "h100-sxm", "--model", "llama3-8b", "--mesh", "1x16", "--cp", "ring,ulysses", "--layout", "zigzag"],
     {"hardware": "h100-sxm", "model": "llama3-8b", "mesh": "1x16", "cp": ["ring", "ulysses"], "layouts": ["zigzag"]}),
    (["--hardware", "h100-sxm", "--model", "llama2-7b", "--mesh", "1x2", "--seq", "16384", "--dp", "2", "--pp", "2",
      "--micro-batches", "8", "--topology", "nodes:1x8", "--layout", "zigzag", "--precision", "fp8", "--zero", "1",
      "--impl", "te-p2p"],
     {"hardware": "h100-sxm", "model": "llama2-7b", "mesh": (1, 2), "seq": 16384, "dp": 2, "pp": 2, "micro_batches": 8,
      "topology": "nodes:1x8", "layouts": ["zigzag"], "precision": "fp8", "zero": 1, "impl": "te-p2p"}),
]


def close(a, b):
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return a == b
    return a == pytest.approx(b, rel=1e-9, abs=1e-12)


def cell_matches(cell, value):
    """A CLI CSV cell (%.6g or %.4f) against the module's value."""
    if value is None:
        return cell == ""
    if isinstance(value, bool):
        return cell == ("true" if value else "false")
    if isinstance(value, (int, float)):
        return cell != "" and abs(float(cell) - value) <= 1e-5 * abs(value) + 5e-5
    return cell == str(value)


def reason(row):
    """A skipped row's note as the CLI's not_runnable reason ("field 'X': message")."""
    field, sep, message = row.note.partition(": ")
    return "field '%s': %s" % (field, message) if sep and " " not in field else row.note


@pytest.mark.parametrize("flags, keywords", SCENARIOS, ids=[" ".join(f) or "defaults" for f, _ in SCENARIOS])
def test_every_field_of_the_cli_equals_the_module(flags, keywords):
    expected = json.loads(cli("predict", "--format", "json", *flags))
    rows = ringsim.predict(**keywords)
    ran = [r for r in rows if r.ok]
    skipped = [r for r in rows if not r.ok]
    assert len(ran) == len(expected["results"]) and len(skipped) == len(expected["not_runnable"])
    for got, want in zip(ran, expected["results"]):
        for key, value in want.items():
            if key == "rounds_fwd_one_layer":
                continue
            mine = got.why if key == "why" else getattr(got, key)
            assert close(mine, value), (key, mine, value)
    for got, want in zip(skipped, expected["not_runnable"]):
        assert (got.cp, got.layout, reason(got)) == (want["cp"], want["layout"], want["reason"])
    first, scenario = ran[0], expected["scenario"]
    for key in ("hardware", "model", "mp", "sp", "n_seq", "batch", "mask", "tile_q", "tile_k", "impl", "cp", "docs"):
        assert close(getattr(first, key), scenario[key]), key
    assert first.profile == expected["profile"]["name"]
    assert all(r.pred_tms == pytest.approx(expected["pred_tms"], rel=1e-12) for r in ran)
    assert all(r.pred_engine == expected["pred_engine"] for r in rows)

    table = list(csv.DictReader(io.StringIO(cli("predict", "--format", "csv", *flags))))
    assert len(table) == len(rows)
    for got, want in zip(ran + skipped, table):
        for column, cell in want.items():
            if not got.ok:
                value = {"layout": got.layout, "cp": got.cp, "not_runnable": reason(got)}.get(column, "")
                assert cell == value, column
                continue
            value = got.why if column == "why" else "" if column == "not_runnable" else getattr(got, column)
            assert cell_matches(cell, value), (column, cell, value)


def test_one_implementation_for_all_the_layouts_of_a_strategy():
    # The case: with a mixed list the CLI runs every layout on one library; so does the module.
    rows = ringsim.predict(layouts=["contiguous", "striped", "zigzag", "cyclic:2"])
    assert len({r.impl for r in rows}) == 1
    # The defaults are the CLI's: 131072 tokens, and Ulysses compares the first default layout its
    # library offers, only (its work does not depend on the layout).
    assert {r.n_seq for r in rows} == {131072}
    ulysses = ringsim.predict(hardware="h100-sxm", model="llama3-8b", cp=["ulysses"])
    expected = json.loads(cli("predict", "--format", "json", "--hardware", "h100-sxm", "--model", "llama3-8b", "--cp",
                              "ulysses"))["results"]
    assert len(ulysses) == 1 and [r.layout for r in ulysses] == [x["layout"] for x in expected]


def test_workload_and_simulate_take_the_cli_defaults():
    text = cli("workload")
    rows = text.splitlines()[1:]
    w = ringsim.workload()
    assert w["allowed_pairs"].size == len(rows)
    n = 131072
    assert int(w["allowed_pairs"].sum()) == n * (n + 1) // 2
    (expected,) = json.loads(cli("simulate", "--format", "json", "--layout", "contiguous"))
    s = ringsim.simulate()
    assert s["step_s"] == pytest.approx(expected["step_s"], rel=1e-12)
