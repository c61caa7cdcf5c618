"""Tests of scripts/fit_collective_host.py: the fit recovers planted host terms from rows made
with them, and a held-out group's prediction comes from a fit that never saw it.

Standard library only; `python3 -m unittest tests/python/test_fit_collective_host.py`.
"""
import os
import sys
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import fit_collective_host as fch  # noqa: E402


def planted_rows(a, b, skew=None):
    """Rows shaped as the fitted ones: four calls per forward, groups of 1, 2, 4 and 8."""
    rows = []
    for u in (1, 2, 4, 8):
        for n in (512, 8192):
            x = dict(zero=1e-3 * (9 - u) / 2, ka=4.0, kb=4.0 * (u - 1), u=u, n=n, method="basic")
            x["measured"] = fch.predict(x, a, b) * (skew(x) if skew else 1.0)
            rows.append(x)
    return rows


class Fit(unittest.TestCase):
    def test_recovers_planted_terms(self):
        for a, b in ((90e-6, 80e-6), (0.0, 150e-6), (400e-6, 0.0)):
            rows = planted_rows(a, b)
            fa, fb = fch.fit(rows)
            self.assertAlmostEqual(fa, a, delta=2e-6)
            self.assertAlmostEqual(fb, b, delta=1e-6)
            for x in rows:
                self.assertAlmostEqual(fch.predict(x, fa, fb) / x["measured"], 1.0, delta=2e-3)

    def test_held_out_group_is_not_fitted(self):
        # The Ulysses-degree-8 rows measured 30 % slow: a fit that saw them would move toward them;
        # the held-out fit of that group must be the planted terms exactly, and miss them by 30 %.
        a, b = 90e-6, 80e-6
        rows = planted_rows(a, b, lambda x: 1.3 if x["u"] == 8 else 1.0)
        held = fch.held_out(rows, "u")
        mape, count, ha, hb = held[8]
        self.assertEqual(count, 2)
        self.assertAlmostEqual(ha, a, delta=2e-6)
        self.assertAlmostEqual(hb, b, delta=1e-6)
        self.assertAlmostEqual(mape, 100 * (1 - 1 / 1.3), delta=0.5)
        self.assertNotAlmostEqual(fch.fit(rows)[1], b, delta=1e-6)

    def test_standard_errors_shrink_with_a_better_fit(self):
        exact = planted_rows(90e-6, 80e-6)
        noisy = planted_rows(90e-6, 80e-6, lambda x: 1.1 if x["n"] == 512 else 0.92)
        self.assertLess(fch.standard_errors(exact, *fch.fit(exact))[1], fch.standard_errors(noisy, *fch.fit(noisy))[1])


if __name__ == "__main__":
    unittest.main()
