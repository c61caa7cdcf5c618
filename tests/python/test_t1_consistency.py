"""Tests of scripts/t1_consistency.py: its bounds hold on tables made by a consistent system (planted
host, transfer and kernel terms), they fail to when a planted 32K cost is added, and the probe
interpolation returns the probed rates.

Standard library only; `python3 -m unittest tests/python/test_t1_consistency.py`.
"""
import os
import random
import sys
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import ringsim_util as util  # noqa: E402
import t1_consistency as tc  # noqa: E402

BATCH, HEADS, D = 2, 32, 32
PEER = BATCH * (32768 // 8) * (HEADS // 8) * D * 2
CALLS = [PEER] * 4


def ulysses_times(host, a2a32, rate, extra32=0.0):
    """A Ulysses call at 8K, 32K and 128K: host + all-to-alls (linear in tokens) + kernel (quadratic)."""
    f32 = 2.0 * BATCH * (HEADS // 8) * D * 32768.0 ** 2
    k = lambda s: f32 * (s / 32768.0) ** 2 / rate
    a = lambda s: a2a32 * s / 32768.0
    return [host + a(s) + k(s) + (extra32 if s == 32768 else 0.0) for s in (8192, 32768, 131072)]


class Bounds(unittest.TestCase):
    def test_flat_branch_bound_holds_on_consistent_tables(self):
        rng = random.Random(7)
        for _ in range(200):
            host, a2a, rate = rng.uniform(0, 5e-3), rng.uniform(1e-4, 2e-2), rng.uniform(50e12, 300e12)
            b = tc.ulysses_bounds(*ulysses_times(host, a2a, rate), BATCH, HEADS, D, CALLS, lambda m: 1e12)
            self.assertLessEqual(b["flat_min_rate"], rate * (1 + 1e-9))
            self.assertLessEqual(b["min_rate_128k"], rate * (1 + 1e-9))

    def test_probed_branch_brackets_the_rate_when_transfers_are_within_the_probe(self):
        rng = random.Random(11)
        probe = lambda m: 50e9
        bound = 4 * 7 * PEER / 50e9
        for _ in range(200):
            host, a2a, rate = rng.uniform(0, 5e-3), rng.uniform(0, bound), rng.uniform(50e12, 300e12)
            b = tc.ulysses_bounds(*ulysses_times(host, a2a, rate), BATCH, HEADS, D, CALLS, probe)
            self.assertAlmostEqual(b["probed_a2a_s"], bound)
            self.assertGreaterEqual(b["probed_max_rate_32k"], rate * (1 - 1e-9))
            self.assertLessEqual(b["min_rate_128k"], rate * (1 + 1e-9))

    def test_a_cost_only_at_32k_breaks_the_probed_bracket(self):
        # 6 ms more at 32K only: the 32K kernel's bound falls below what 128K requires.
        probe = lambda m: 50e9
        t = ulysses_times(3e-3, 3e-4, 140e12, extra32=6e-3)
        b = tc.ulysses_bounds(*t, BATCH, HEADS, D, CALLS, probe)
        self.assertLess(b["probed_max_rate_32k"], b["min_rate_128k"])
        self.assertGreater(tc.ulysses_bounds(*ulysses_times(3e-3, 3e-4, 140e12), BATCH, HEADS, D, CALLS,
                                             probe)["probed_max_rate_32k"], 140e12)

    def test_ring_bound_brackets_the_rate(self):
        rate, host, msg_rate = 140e12, 4e-3, 100e9
        block = lambda c: 4.0 * BATCH * HEADS * D * c * c
        msg = lambda c: BATCH * c * HEADS * D * 2
        step = lambda c: max(block(c) / rate, 2 * msg(c) / msg_rate)
        t = [host + 7.5 * step(s // 8) for s in (8192, 32768, 131072)]
        b = tc.ring_bounds(*t, BATCH, HEADS, HEADS, D, lambda m: msg_rate)
        self.assertGreaterEqual(b["probed_max_rate_32k"], rate)
        self.assertLessEqual(b["min_rate_128k"], rate * (1 + 1e-9))


class Floor(unittest.TestCase):
    def test_floor_is_the_least_error_of_any_single_value(self):
        rng = random.Random(3)
        for _ in range(100):
            groups = [[rng.uniform(1, 2) for _ in range(rng.choice((1, 2, 3)))] for _ in range(rng.randint(1, 6))]
            n = sum(len(v) for v in groups)
            floor = tc.floor_of(groups)
            # No value on a fine grid does better than the floor, and one measured value reaches it.
            best = 0.0
            for v in groups:
                grid = [0.5 + 0.01 * i for i in range(251)]
                best += min(sum(abs(p / m - 1) for m in v) for p in grid + v)
            self.assertAlmostEqual(best / n, floor, places=12)

    def test_single_measurements_cost_nothing(self):
        self.assertEqual(tc.floor_of([[1.0], [2.0]]), 0.0)
        self.assertAlmostEqual(tc.floor_of([[1.0, 2.0]]), 0.25)  # p = 1: (0 + 1/2) / 2; p = 2: (1 + 0) / 2


class Probe(unittest.TestCase):
    def setUp(self):
        self.rows = util.read_csv(tc.LINKS)

    def test_probed_sizes_return_their_rate_and_between_is_between(self):
        pts = sorted((int(r["size_bytes"]), float(r["gbps_per_directed_pair"]) * 1e9) for r in self.rows
                     if r["hardware"].startswith("A100") and r["pattern"].startswith(tc.RING_PROBE))
        self.assertGreater(len(pts), 10)
        for s, b in pts:
            self.assertAlmostEqual(tc.probe_rate(self.rows, s), b)
        for (s0, b0), (s1, b1) in zip(pts, pts[1:]):
            mid = tc.probe_rate(self.rows, (s0 + s1) // 2)
            self.assertGreaterEqual(mid, min(b0, b1) * (1 - 1e-12))
            self.assertLessEqual(mid, max(b0, b1) * (1 + 1e-12))
        with self.assertRaises(ValueError):
            tc.probe_rate(self.rows, pts[-1][0] * 2)


class Table(unittest.TestCase):
    def test_the_documented_finding_holds_on_the_table(self):
        # docs/validation.md states it: the no_packed Ulysses rows need a kernel faster than the die's
        # best FlashAttention-2 forward under a flat transport, and under the probed NVLink a 32K rate
        # below what 128K requires.
        links, kernels = util.read_csv(tc.LINKS), util.read_csv(tc.KERNELS)
        best = tc.best_fa2_forward(kernels)
        rows = tc.t1_rows()
        for method in ("basic", "zigzag", "stripe"):
            t = [rows[(8, method, "no_packed", n)] for n in (8192, 32768, 131072)]
            b = tc.ulysses_bounds(*t, BATCH, HEADS, D, CALLS, lambda m: tc.probe_rate(links, m))
            self.assertGreater(b["flat_min_rate"], best)
            self.assertLess(b["probed_max_rate_32k"], b["min_rate_128k"])
        self.assertEqual(len(tc.report_lines()), 1 + 6 + 1)


if __name__ == "__main__":
    unittest.main()
