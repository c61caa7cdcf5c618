"""Tests of scripts/fit_components.py (issue 25's component fits).

Run with `python3 -m pytest tests/python` or, where pytest is not installed, with
`python3 -m unittest discover -s tests/python`. Standard library only; ctest runs it as python_fit_components.
"""
import filecmp
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import component_kernel_fit as kf  # noqa: E402
import component_kernel_model as km  # noqa: E402
import component_links as cl  # noqa: E402
import component_numerics as cn  # noqa: E402


class FlopToTime(unittest.TestCase):
    def test_chart_row_by_hand(self):
        # data/components/kernels/flash_fa2_a100.csv: FlashAttention-2, fwd_bwd, causal, hd 128, 16 heads,
        # seqlen 2048, batch 8 at the printed TFLOP/s. By hand: fwd FLOPs = 4 * 8 * 2048^2 * 16 * 128
        # = 274877906944, halved (causal) = 137438953472; fwd_bwd = 3.5 x = 481036337152 FLOPs.
        rows = [r for r in km.read_csv(os.path.join(ROOT, "data/components/kernels/flash_fa2_a100.csv"))
                if r["method"] == "FlashAttention-2" and r["causal"] == "1" and r["head_dim"] == "128"
                and r["seqlen"] == "2048"]
        self.assertEqual(len(rows), 1)
        tflops = float(rows[0]["tflops"])
        expect = 481036337152.0 / (tflops * 1e12)
        got = km.time_from_tflops(tflops, "fwd_bwd", 8, 2048, 16, 128, True)
        self.assertAlmostEqual(got / expect, 1.0, places=12)
        # and the row the fit reads is that time
        krows, _ = km.kernel_rows(ROOT)
        mine = [r for r in krows if r["src"].endswith(f"flash_fa2_a100.csv:{rows[0]['_line']}")]
        self.assertEqual(len(mine), 1)
        self.assertAlmostEqual(mine[0]["time_s"] / expect, 1.0, places=12)

    def test_conventions(self):
        # bwd is 2.5 x fwd, fwd+bwd 3.5 x fwd; non-causal counts the whole square
        f = km.time_from_tflops(100, "fwd", 1, 1024, 8, 64, False)
        self.assertAlmostEqual(km.time_from_tflops(100, "bwd", 1, 1024, 8, 64, False) / f, 2.5)
        self.assertAlmostEqual(km.time_from_tflops(100, "fwd_bwd", 1, 1024, 8, 64, False) / f, 3.5)
        self.assertAlmostEqual(km.time_from_tflops(100, "fwd", 1, 1024, 8, 64, True) / f, 0.5)
        self.assertAlmostEqual(f, 4 * 1024 * 1024 * 8 * 64 / 100e12)

    def test_ultraattn_tflops_consistent(self):
        # The profile's printed TFLOP/s agree with its microseconds under the same convention (header:
        # A800 causal S=131072 Nh=32: 575693 us -> 244.5 TFLOP/s backward).
        for r in km.read_csv(os.path.join(ROOT, "data/components/kernels/ultraattn_fa2_a800_h800.csv")):
            if r["hardware"] == "A800" and r["sq"] == "131072" and r["skv"] == "131072" and r["causal"] == "true" \
                    and r["heads_q"] == "32":
                fl = km.fwd_flops(1, 131072, 131072, 32, 128, True)
                self.assertAlmostEqual(2.5 * fl / (float(r["bwd_us"]) * 1e-6) / 1e12, float(r["bwd_tflops_printed"]),
                                       delta=0.1)
                return
        self.fail("row not found")


def synthetic_rows(kern, names, theta, shapes):
    rows = []
    for i, (pass_, causal, d, heads, batch, sq, skv) in enumerate(shapes):
        r = dict(family=kern.family, gpu=kern.gpu, pass_=pass_, causal=causal, head_dim=d, heads=heads, batch=batch,
                 sq=sq, skv=skv, group=f"sq={sq},skv={skv}", id=i, src=f"synthetic:{i}")
        r["time_s"] = kf.kernel_predict(kern, names, theta, r)
        rows.append(r)
    return rows


class SyntheticRecovery(unittest.TestCase):
    def test_fa2_profile_parameters_recovered(self):
        # Times generated from known parameters on the A800 profile's kind of shapes: the fit recovers
        # every parameter within 1 %.
        kern = km.Kernel(ROOT, "flash-attn-2", "A800")
        names = ["e_fwd_128", "e_bwd_128", "c_cta_s", "L_fwd_s", "L_bwd_s"]
        truth = [0.62, 0.48, 3.0e-6, 1.4e-5, 3.9e-5]
        shapes = []
        for s in (256, 512, 1024, 2048, 4096, 8192, 16384):
            for heads in (1, 32):
                for pass_ in ("fwd", "bwd"):
                    shapes.append((pass_, False, 128, heads, 1, s, s))
                    shapes.append((pass_, True, 128, heads, 1, s, s))
                    shapes.append((pass_, False, 128, heads, 1, s, 2 * s))
        rows = synthetic_rows(kern, names, truth, shapes)
        theta, cost, _, _, _ = kf.fit_kernel(kern, names, rows)
        for n, t, v in zip(names, truth, theta):
            self.assertAlmostEqual(v / t, 1.0, delta=0.01, msg=n)

    def test_chart_parameters_recovered(self):
        kern = km.Kernel(ROOT, "flash-attn-2", "A100")
        names = ["e_fb_64", "e_fb_128", "c_cta_s"]
        truth = [0.55, 0.66, 4.0e-6]
        shapes = [("fwd_bwd", c, d, 2048 // d, 16384 // s, s, s) for d in (64, 128) for c in (False, True)
                  for s in (512, 1024, 2048, 4096, 8192, 16384)]
        rows = synthetic_rows(kern, names, truth, shapes)
        theta, _, _, _, _ = kf.fit_kernel(kern, names, rows)
        for n, t, v in zip(names, truth, theta):
            self.assertAlmostEqual(v / t, 1.0, delta=0.01, msg=n)

    def test_link_recovered(self):
        sizes = [8192 * 2 ** (k / 2) for k in range(30)]
        # a fixed +-1 % ripple: noise-free data would leave BIC nothing to weigh
        pts = [(s, (1.5e-5 + s / 150e9) * (1 + 0.01 * (-1) ** k)) for k, s in enumerate(sizes)]
        regs = cl.link_fit(pts)
        self.assertEqual(len(regs), 1)
        self.assertAlmostEqual(regs[0]["latency_s"] / 1.5e-5, 1.0, delta=0.05)
        self.assertAlmostEqual(1 / regs[0]["inv_bw"] / 150e9, 1.0, delta=0.01)

    def test_link_knee_found(self):
        # A protocol switch at 2 MB (latency and bandwidth change): two regimes, the boundary at 2 MB.
        sizes = [8192 * 2 ** (k / 2) for k in range(34)]
        pts = [(s, ((2e-5 + s / 12e9) if s < 2 ** 21 else (3e-5 + s / 22e9)) * (1 + 0.01 * (-1) ** k))
               for k, s in enumerate(sizes)]
        regs = cl.link_fit(pts)
        self.assertEqual(len(regs), 2)
        self.assertEqual(regs[1]["first_probe"], min(s for s in sizes if s >= 2 ** 21))
        self.assertAlmostEqual(1 / regs[1]["inv_bw"] / 22e9, 1.0, delta=0.01)


class HeldOut(unittest.TestCase):
    def test_logo_never_scores_a_fitted_row(self):
        rows = [dict(id=i, group=i % 4, x=float(i)) for i in range(20)]
        seen = []

        def fit(train):
            ids = frozenset(r["id"] for r in train)
            seen.append(ids)
            return ids

        def predict(model, r):
            # the model is the set of rows it was fitted on
            self.assertNotIn(r["id"], model)
            return 0.0

        preds, folds = cn.logo(rows, fit, predict)
        self.assertEqual(sorted(preds), list(range(20)))  # every row scored exactly once
        self.assertEqual(len(folds), 4)
        for g, train_ids, test_ids in folds:
            self.assertFalse(set(train_ids) & set(test_ids))
            self.assertTrue(all(rows[i]["group"] == g for i in test_ids))
            self.assertTrue(all(rows[i]["group"] != g for i in train_ids))

    def test_held_out_differs_from_in_sample(self):
        # On the real FA3 rows, held-out predictions come from other fits than the in-sample ones.
        rows, _ = km.kernel_rows(ROOT)
        rs = [r for r in rows if r["family"] == "flash-attn-3"]
        kern = km.Kernel(ROOT, "flash-attn-3", "H100")
        names = kf.param_names("flash-attn-3", "H100", rs)
        full = kf.fit_kernel(kern, names, rs)[0]
        preds, folds = cn.logo(rs, lambda tr: kf.fit_kernel(kern, names, tr, theta0=full)[0],
                               lambda th, r: kf.kernel_predict(kern, names, th, r))
        ins = {r["id"]: kf.kernel_predict(kern, names, full, r) for r in rs}
        self.assertTrue(any(abs(preds[i] - ins[i]) > 1e-9 * ins[i] for i in ins))
        self.assertEqual({g for g, _, _ in folds}, {r["group"] for r in rs})


class Deterministic(unittest.TestCase):
    def test_two_runs_identical(self):
        with tempfile.TemporaryDirectory() as tmp:
            outs = []
            for k in range(2):
                out = os.path.join(tmp, f"fit{k}.json")
                subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "fit_components.py"), "--quiet",
                                "--out", out], check=True, cwd=tmp)
                outs.append(out)
            self.assertTrue(filecmp.cmp(outs[0], outs[1], shallow=False))
            res = json.load(open(outs[0]))
            # every parameter carries a value and a standard error field, every fit its held-out score
            for k in res["kernels"].values():
                self.assertTrue(k["fitted_rows"])
                for p in k["parameters"].values():
                    self.assertIn("se", p)
                for v in k["logo_mape_pct"].values():
                    self.assertGreaterEqual(v, 0)
            for l in res["links"].values():
                self.assertIsNotNone(l["loso_mape_pct_ge_1MB"])


class DataCopies(unittest.TestCase):
    def test_components_keep_source_headers(self):
        for sub in ("kernels", "links"):
            d = os.path.join(ROOT, "data", "components", sub)
            for f in sorted(os.listdir(d)):
                if f.endswith(".csv"):
                    with open(os.path.join(d, f)) as fh:
                        self.assertTrue(fh.readline().startswith("# "), f)


if __name__ == "__main__":
    unittest.main()
