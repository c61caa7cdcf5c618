#!/usr/bin/env python3
"""The host's time per collective call of YunChang/USP, fitted where nothing else can tell it.

USP's forward issues four all-to-alls around its attention (Q, K, V, out: SeqAllToAll4D ->
all_to_all_4D, yunchang/comm/all_to_all.py at feifeibear/long-context-attention@b93c30e): each
reshapes, makes two transposing copies and calls NCCL, which enqueues one send and one receive per
peer and starts only once the group's last rank has issued it. Below 8k tokens the transfers are
a few microseconds on NVLink, so a call lasts what the host takes: host_collective_s +
(g - 1) x host_collective_peer_s for a group of g (models/program/collective_cost.hpp). No component
measurement has timed that host work (data/components/host/ times ring-flash-attention's loop), so
it is fitted on the rows of USP's table T1 where it is the only unknown: the no_packed rows at 512
and 8192 tokens, every ring x Ulysses split. The ring's own host terms stay as measured.

The prediction of a row is linear in the two terms while every call is host-bound, so three
predictions per row with the terms past every transfer give it exactly; the fit minimises the
squared log errors. Held out: each split (the group size, what a user changes) and each length.

    python3 scripts/fit_collective_host.py [build/cli/ringsim]
"""
import json
import math
import os
import sys
import tempfile

import ringsim_util as util

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
T1 = os.path.join(ROOT, "data", "usp_t1_a100_nvlink.csv")
LAYOUTS = {"basic": "contiguous", "zigzag": "zigzag", "stripe": "striped", "strip": "striped"}
# Probe values for the two terms: large enough to dominate every transfer of the fitted rows.
PROBE_A, PROBE_B = 1e-3, 1e-4
MAX_SEQ = 8192


def _ringsim(binary, *args):
    return util.run([binary] + list(args))


def fitted_rows():
    rows = util.read_csv(T1)
    return [r for r in rows if r["value"] != "OOM" and r["qkv_layout"] == "no_packed" and int(r["n_seq_total"]) <= MAX_SEQ]


def _forward_s(binary, profile_path, r):
    u, ring = int(r["ulysses_degree"]), int(r["ring_degree"])
    args = ["predict", "--format", "json", "--hardware", "a100-80gb",
            "--model", "attn:%s:%s:%s" % (r["heads_q"], r["heads_kv"], r["head_dim"]), "--mesh", "1x8",
            "--seq", r["n_seq_total"], "--batch", r["batch"], "--cp", "usp:%dx%d" % (u, ring), "--impl", "usp",
            "--layout", LAYOUTS[r["method_label"].split("/")[0]], "--profile", profile_path]
    return json.loads(_ringsim(binary, *args))["results"][0]["attention_fwd_s"]


def linear_rows(binary, profile):
    """Per fitted row: its measured seconds and the prediction as c + ka a + kb b, exact while every
    call is host-bound: from three predictions with both terms past every transfer of the row."""
    tmp = tempfile.mkdtemp(prefix="ringsim-collective-host-")
    probes = {"a": (PROBE_A, PROBE_B), "2a": (2 * PROBE_A, PROBE_B), "2b": (PROBE_A, 2 * PROBE_B)}
    paths = {}
    for name, (a, b) in probes.items():
        p = dict(profile)
        p["host_collective_s"], p["host_collective_peer_s"] = a, b
        paths[name] = os.path.join(tmp, name + ".json")
        with open(paths[name], "w") as f:
            json.dump(p, f)
    out = []
    for r in fitted_rows():
        t = {name: _forward_s(binary, path, r) for name, path in paths.items()}
        ka = (t["2a"] - t["a"]) / PROBE_A
        kb = (t["2b"] - t["a"]) / PROBE_B
        out.append(dict(measured=1.0 / float(r["value"]), zero=t["a"] - ka * PROBE_A - kb * PROBE_B, ka=ka, kb=kb,
                        u=int(r["ulysses_degree"]), n=int(r["n_seq_total"]), method=r["method_label"].split("/")[0]))
    return out


def _loss(rows, a, b):
    return sum(math.log((x["zero"] + x["ka"] * a + x["kb"] * b) / x["measured"]) ** 2 for x in rows)


def fit(rows):
    """Non-negative (a, b) minimising the squared log errors: a coarse grid, then two refinements."""
    best = (float("inf"), 0.0, 0.0)
    a_lo, a_hi, b_lo, b_hi = 0.0, 3e-3, 0.0, 1e-3
    for _ in range(3):
        n = 60
        for i in range(n + 1):
            a = a_lo + (a_hi - a_lo) * i / n
            for j in range(n + 1):
                b = b_lo + (b_hi - b_lo) * j / n
                loss = _loss(rows, a, b)
                if loss < best[0]:
                    best = (loss, a, b)
        _, a, b = best
        da, db = (a_hi - a_lo) / n * 2, (b_hi - b_lo) / n * 2
        a_lo, a_hi, b_lo, b_hi = max(0.0, a - da), a + da, max(0.0, b - db), b + db
    return best[1], best[2]


def predict(x, a, b):
    return x["zero"] + x["ka"] * a + x["kb"] * b


def held_out(rows, key):
    """Each group of `key` predicted by a fit to the others: {group: (MAPE %, rows, a, b)}."""
    out = {}
    for g in sorted({x[key] for x in rows}):
        train = [x for x in rows if x[key] != g]
        test = [x for x in rows if x[key] == g]
        a, b = fit(train)
        errs = [abs(predict(x, a, b) / x["measured"] - 1) for x in test]
        out[g] = (100 * sum(errs) / len(errs), len(errs), a, b)
    return out


def standard_errors(rows, a, b):
    """Of (a, b), from the log residuals' Jacobian at the fit: s^2 (J^T J)^-1."""
    j = [(x["ka"] / predict(x, a, b), x["kb"] / predict(x, a, b)) for x in rows]
    s2 = _loss(rows, a, b) / max(1, len(rows) - 2)
    saa, sab, sbb = (sum(u * u for u, _ in j), sum(u * v for u, v in j), sum(v * v for _, v in j))
    det = saa * sbb - sab * sab
    if det <= 0:
        return float("nan"), float("nan")
    return math.sqrt(s2 * sbb / det), math.sqrt(s2 * saa / det)


def report(rows):
    a, b = fit(rows)
    se_a, se_b = standard_errors(rows, a, b)
    lines = ["host_collective_s %.1f +- %.1f us, host_collective_peer_s %.1f +- %.1f us (%d rows: T1 no_packed, <= %d tokens)"
             % (a * 1e6, se_a * 1e6, b * 1e6, se_b * 1e6, len(rows), MAX_SEQ)]
    after = [abs(predict(x, a, b) / x["measured"] - 1) for x in rows]
    lines.append("fitted rows: MAPE %.1f %% in sample" % (100 * sum(after) / len(after)))
    for key, what in (("u", "Ulysses degree"), ("n", "length")):
        for g, (m, k, ga, gb) in held_out(rows, key).items():
            lines.append("held out %s %s: MAPE %.1f %% over %d rows (fit on the rest: %.1f us + %.1f us per peer)"
                         % (what, g, m, k, ga * 1e6, gb * 1e6))
    return a, b, lines


def main():
    binary = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "cli", "ringsim")
    profile = json.load(open(os.path.join(ROOT, "configs", "profiles", "usp", "a100-80gb.json")))
    _, _, lines = report(linear_rows(binary, profile))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
