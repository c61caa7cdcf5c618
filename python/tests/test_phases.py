"""Rows of every phase (train, prefill, decode) in one frame: the columns of each phase, aligned
with the CLI's CSV, from a sweep and from results."""
import io
import json

import pandas
import pytest

import ringsim
from support import cli, data_rows

PHASES = {"phase": ["train", "prefill", "decode"], "hardware": "h100-sxm", "model": "llama3-8b",
          "mesh": ["1x4", "1x8"], "n_seq": 32768, "cached_tokens": [0, 16384], "layout": ["zigzag"]}


def cli_frame(tmp_path, grid):
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(grid))
    out = tmp_path / "out.csv"
    cli("sweep", str(path), "-o", str(out))
    return data_rows(out.read_text())


def test_a_sweep_over_phases_has_every_column_aligned_with_the_cli(tmp_path):
    expected = cli_frame(tmp_path, PHASES)
    header = expected.splitlines()[0].split(",")
    assert {"ttft_s", "tpot_s", "phase", "kv_cache_bytes"} <= set(header)
    frame = ringsim.sweep(PHASES)
    assert list(frame.columns) == header
    want = pandas.read_csv(io.StringIO(expected), keep_default_na=False, na_values=[""])
    assert len(frame) == len(want) == 3 * 2 * 2
    # Every cell: the CLI's value for that row and column (the frame's booleans are nullable).
    for column in header:
        got = frame[column].astype(object).where(frame[column].notna(), None).tolist()
        exp = want[column].astype(object).where(want[column].notna(), None).tolist()
        exp = [{"true": True, "false": False}.get(v, v) if isinstance(v, str) else v for v in exp]
        assert got == exp, column
    # The row a user reads: the hardware is the hardware, a prefill has its TTFT.
    assert set(frame.hardware) == {"h100-sxm"}
    prefill = frame[(frame.phase == "prefill") & (frame.status == "ok")]
    assert len(prefill) > 0 and (prefill.ttft_s > 0).all() and prefill.tpot_s.isna().all()
    assert (prefill.step_s == prefill.ttft_s).all()


def test_results_frame_of_prefill_results_keeps_the_inference_columns():
    results = ringsim.predict(hardware="h100-sxm", model="llama3-8b", mesh=(1, 8), seq=32768, phase="prefill",
                              cached_tokens=16384)
    assert len(results) == 1 and results[0].ok and results[0].phase == "prefill"
    frame = ringsim.results_frame(results)
    assert frame.ttft_s[0] == pytest.approx(results[0].ttft_s, rel=1e-5)
    assert frame.phase[0] == "prefill" and frame.cached_tokens[0] == 16384
    assert frame.variant[0] == results[0].variant
    # Mixed with a training row: one frame with the columns of both, each row aligned.
    train = ringsim.predict(hardware="h100-sxm", model="llama3-8b", mesh=(1, 8), seq=32768, layouts=["zigzag"])
    both = ringsim.results_frame(train + results)
    assert list(both.phase) == ["train", "prefill"] and both.hardware.tolist() == ["h100-sxm"] * 2
    assert both.ttft_s.isna()[0] and both.ttft_s[1] == pytest.approx(results[0].ttft_s, rel=1e-5)
    assert both.step_s[0] == pytest.approx(train[0].step_s, rel=1e-5)
    # Training rows alone keep the training sweep's columns.
    assert "ttft_s" not in ringsim.results_frame(train).columns
    assert list(ringsim.results_frame(train).columns) == ringsim._core.sweep_columns(False)


def test_fp8_weights_and_cache_reach_decode_as_on_the_command_line(tmp_path):
    # Llama 3 405B decoding on 16 H100s (8-way tensor parallelism, a ring of 2): its bf16 weights do
    # not fit; with the feed-forward matrices in FP8 (weights="fp8-ffn") they do, as `ringsim sweep`
    # says for the same point.
    point = {"phase": "decode", "hardware": "h100-sxm", "model": "llama3-405b", "mesh": "8x2",
             "cached_tokens": 131072, "layout": "contiguous", "intervals": False}
    bf16 = ringsim.sweep(point)
    fp8 = ringsim.sweep(dict(point, weights="fp8-ffn", kv_cache="fp8"))
    assert not bf16.fits_memory[0] and fp8.fits_memory[0]
    assert fp8.tpot_s[0] < bf16.tpot_s[0]
    expected = pandas.read_csv(io.StringIO(cli_frame(tmp_path, dict(point, weights="fp8-ffn", kv_cache="fp8"))))
    assert fp8.tpot_s[0] == pytest.approx(expected.tpot_s[0], rel=1e-5)
    with pytest.raises(ringsim.InputError, match="weights"):
        ringsim.sweep(dict(point, weights="int4"))
