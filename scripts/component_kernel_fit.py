"""The kernel-time fits of the component study (scripts/fit_components.py): which parameters each
(family, GPU) identifies, the prediction of a row with its gradient, the bounded fit and its
leave-one-shape-group-out score."""

from component_numerics import least_squares, logo, mape, rnd, standard_errors
from component_kernel_model import Kernel, cta_pattern, makespan_coeffs, splitkv_pattern

# ----------------------------------------------------------------------------------------------
# Kernel parameter sets per (family, GPU): which efficiencies exist, which fixed costs are fitted.
# Each parameter has a physical reason (said in PARAM_DOC) and bounds.

PARAM_DOC = {
    "e": "sustained tensor-core efficiency (fraction of the dense fp16/bf16 peak) of the tile products",
    "c_cta_s": "fixed cost per CTA, SM-seconds (prologue, first Q/K/V tile loads, epilogue)",
    "L_fwd_s": "fixed cost per forward call (launch, grid start and drain)",
    "L_bwd_s": "fixed cost per backward call (its 3 launches, grid start and drain)",
}


def param_names(family, gpu, rows):
    """Parameters the rows of one (family, GPU) identify. Charts that only give fwd+bwd cannot split
    the two directions: one efficiency per head dim is shared by both (e_fb_d)."""
    names = []
    fwd_d = sorted({r["head_dim"] for r in rows if r["pass_"] == "fwd"})
    bwd_d = sorted({r["head_dim"] for r in rows if r["pass_"] in ("bwd", "fwd_bwd")})
    has_fwd_only = any(r["pass_"] == "fwd" for r in rows)
    if not has_fwd_only:
        names += [f"e_fb_{d}" for d in bwd_d]
    else:
        names += [f"e_fwd_{d}" for d in fwd_d]
        if family == "cudnn-fused":
            # three fwd+bwd rows (two head dims): one backward efficiency for all head dims.
            names += ["e_bwd_all"] if bwd_d else []
        else:
            names += [f"e_bwd_{d}" for d in bwd_d]
    names.append("c_cta_s")
    # Per-call fixed costs only where calls are short enough for them to show (> 1 % of a call):
    # the single-GPU profile (A800/H800) has 16 us calls; the charts' shortest calls are ~0.1-1 ms.
    if any(r["pass_"] == "fwd" and r["time_s"] < 1e-4 for r in rows):
        names.append("L_fwd_s")
    if any(r["pass_"] == "bwd" and r["time_s"] < 1e-4 for r in rows):
        names.append("L_bwd_s")
    return names


def bounds_of(name):
    if name.startswith("e_"):
        return 0.02, 1.0, 0.5
    if name == "c_cta_s":
        return 0.0, 1e-4, 2e-6
    return 0.0, 1e-3, 1e-5


def eff_index(names, backward, d):
    for key in ([f"e_bwd_{d}", "e_bwd_all"] if backward else [f"e_fwd_{d}"]) + [f"e_fb_{d}"]:
        if key in names:
            return names.index(key)
    raise KeyError(f"no efficiency for {'bwd' if backward else 'fwd'} d={d} in {names}")


def kernel_predict(kern, names, theta, row, want_grad=False):
    """Seconds per call of a row's pass (fwd, bwd or both) and, optionally, d time / d theta."""
    passes = {"fwd": [False], "bwd": [True], "fwd_bwd": [False, True]}[row["pass_"]]
    total, grad = 0.0, [0.0] * len(names)
    ic = names.index("c_cta_s")
    c = theta[ic]
    for backward in passes:
        br, bc, k = kern.tile(backward, row["head_dim"], row["causal"])
        ie = eff_index(names, backward, row["head_dim"])
        e = theta[ie]
        flops = 4.0 * br * bc * row["head_dim"] * (2.5 if backward else 1.0)
        ts = flops / (e * kern.peak_sm)
        pat = cta_pattern(backward, row["sq"], row["skv"], row["causal"], br, bc)
        if kern.family == "flash-attn-2" and not backward:
            split = splitkv_pattern(row, kern.hw["sm"])
            if split is not None:
                br, bc, pat = split
                k = 2  # the split-KV kernel runs 4 warps: 2 CTAs per SM by registers
                ts = 4.0 * br * bc * row["head_dim"] / (e * kern.peak_sm)
        slots = kern.hw["sm"] * k
        # FA3: full calls use the static persistent scheduler, causal ones the dynamic one (an atomic
        # tile counter: the next tile goes to the first free CTA, i.e. the greedy list schedule).
        cnt, nv = makespan_coeffs(pat, row["batch"] * row["heads"], slots, c, ts, kern.persistent and not row["causal"])
        total += k * (c * cnt + ts * nv)
        grad[ic] += k * cnt
        grad[ie] += -k * ts * nv / e
        lname = "L_bwd_s" if backward else "L_fwd_s"
        if lname in names:
            total += theta[names.index(lname)]
            grad[names.index(lname)] += 1.0
        if backward and kern.bwd_mem_bytes:
            total += kern.bwd_mem_bytes * row["sq"] * row["heads"] * row["batch"] * row["head_dim"] / kern.hw["hbm"]
    return (total, grad) if want_grad else total


def fit_kernel(kern, names, rows, theta0=None):
    """Fit theta on rows (relative error of time). Returns (theta, cost, jac)."""
    lo = [bounds_of(n)[0] for n in names]
    hi = [bounds_of(n)[1] for n in names]
    start = theta0 if theta0 is not None else [bounds_of(n)[2] for n in names]

    def fun(theta):
        res, jac = [], []
        for r in rows:
            t, g = kernel_predict(kern, names, theta, r, want_grad=True)
            res.append((t - r["time_s"]) / r["time_s"])
            jac.append([v / r["time_s"] for v in g])
        return res, jac

    theta, cost, jac = least_squares(fun, start, lo, hi)
    return theta, cost, jac, lo, hi


def kernel_fits(root, rows):
    out = {}
    keys = sorted({(r["family"], r["gpu"]) for r in rows})
    for family, gpu in keys:
        rs = [r for r in rows if r["family"] == family and r["gpu"] == gpu]
        kern = Kernel(root, family, gpu)
        names = param_names(family, gpu, rs)
        theta, cost, jac, lo, hi = fit_kernel(kern, names, rs)
        se = standard_errors(jac, cost, names, theta, lo, hi)
        # The held-out fits start from the full fit (same optimum basin; faster) and must reach
        # their own optimum on their own rows.
        preds, folds = logo(rs, lambda tr: fit_kernel(kern, names, tr, theta0=theta)[0],
                            lambda th, r: kernel_predict(kern, names, th, r))
        insample = {r["id"]: kernel_predict(kern, names, theta, r) for r in rs}
        by_pass = {}
        for r in rs:
            by_pass.setdefault(r["pass_"], []).append((preds[r["id"]], r["time_s"]))
        params = {}
        for i, n in enumerate(names):
            params[n] = {"value": rnd(theta[i]), "se": rnd(se[i], 3) if se[i] is not None else None,
                         "at_bound": se[i] is None, "bounds": [lo[i], hi[i]],
                         "meaning": PARAM_DOC["e" if n.startswith("e_") else n]}
        tiles = {}
        for d in sorted({r["head_dim"] for r in rs}):
            for backward in (False, True):
                if backward and not any(r["pass_"] != "fwd" for r in rs if r["head_dim"] == d):
                    continue
                for causal in sorted({r["causal"] for r in rs if r["head_dim"] == d}):
                    br, bc, k = kern.tile(backward, d, causal)
                    tiles[f"{'bwd' if backward else 'fwd'} d={d}{' causal' if causal else ''}"] = \
                        {"block_m": br, "block_n": bc, "ctas_per_sm": k}
        out[f"{family}/{gpu}"] = {
            "family": family, "gpu": gpu, "hardware_config": f"configs/hardware/{kern.hw['config']}.json",
            "sm_count": kern.hw["sm"], "peak_flops_per_s": kern.hw["peak"],
            "schedule": "persistent, 132 CTAs: static round robin (full), atomic counter = greedy (causal)" if kern.persistent else "greedy list schedule in launch order",
            "tiles": tiles, "parameters": params,
            "rows": len(rs), "groups": len(folds), "grouping": "seqlen" if rs[0]["group"].startswith("seqlen") else "(sq, skv) shape",
            "in_sample_mape_pct": {p: rnd(mape((insample[r["id"]], r["time_s"]) for r in rs if r["pass_"] == p), 4)
                                   for p in sorted(by_pass)},
            "logo_mape_pct": {p: rnd(mape(v), 4) for p, v in sorted(by_pass.items())},
            "logo_mape_pct_all": rnd(mape(v for vs in by_pass.values() for v in vs), 4),
            "fitted_rows": [{"src": r["src"], "pass": r["pass_"], "causal": r["causal"], "head_dim": r["head_dim"],
                             "heads": r["heads"], "batch": r["batch"], "sq": r["sq"], "skv": r["skv"],
                             "measured_s": rnd(r["time_s"]), "fit_s": rnd(insample[r["id"]]),
                             "held_out_s": rnd(preds[r["id"]]), "group": r["group"]} for r in rs],
        }
    return out
