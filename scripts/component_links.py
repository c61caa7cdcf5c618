"""The link fits of the component study (scripts/fit_components.py): probe rows per hop type and
time = latency + size / bandwidth per regime, 1-3 regimes chosen by BIC, scored leave-one-size-out."""
import math
import os

from component_numerics import logo, mape, rnd
from component_kernel_model import read_csv

# ----------------------------------------------------------------------------------------------
# Links


def link_rows(root):
    """Probe rows per hop type. Time per message = size / (per-directed-pair bandwidth): the
    bandwidth column is printed (or, where the log prints none, total / pairs) and is consistent with
    time/100 in every log except qiyuan's cb_16 (inter-node A100), whose time column is 10x what its
    printed bandwidth implies (its 1 GB row would be 117 GB/s per GPU over InfiniBand with time/100:
    impossible), so the bandwidth column is used everywhere."""
    rows = read_csv(os.path.join(root, "data", "components", "links", "ultraattn_p2p_a800_h800_a100.csv"))
    out = []
    for r in rows:
        hw = "A100" if r["hardware"].startswith("A100") else r["hardware"]
        pat = r["pattern"]
        if pat.startswith("intra-node, 1 GPU pair"):
            hop = "nvlink-1pair"
        elif pat.startswith("intra-node, 8-GPU ring"):
            hop = "nvlink-8gpu-ring"
        else:
            hop = "ib-8pairs-all-gpus"
        size = int(r["size_bytes"])
        bw = float(r["gbps_per_directed_pair"]) * 1e9
        t100 = float(r["time_s_100_rounds"]) / 100
        out.append(dict(hop=f"{hw}/{hop}", gpu=hw, size=size, time_s=size / bw, time_col_s=t100,
                        src=f"data/components/links/ultraattn_p2p_a800_h800_a100.csv:{r['_line']}"))
    for i, r in enumerate(out):
        r["id"] = i
    return out


def seg_fit(pts):
    """Weighted LS of t = a + s / B on relative error over pts [(s, t)], a >= 0, 1/B >= 0.
    Returns (a, g=1/B, rss, (sums for the SE))."""
    sxx = sxy = syy = sx = sy = 0.0
    for s, t in pts:
        x1, x2 = 1.0 / t, s / t
        sxx += x1 * x1
        sxy += x1 * x2
        syy += x2 * x2
        sx += x1
        sy += x2
    det = sxx * syy - sxy * sxy
    a = g = 0.0
    if det > 0:
        a = (sx * syy - sy * sxy) / det
        g = (sy * sxx - sx * sxy) / det
    if a < 0 or det <= 0:
        a, g = 0.0, sy / syy
    if g < 0:
        a, g = sx / sxx, 0.0
    rss = sum(((a + g * s) - t) ** 2 / t ** 2 for s, t in pts)
    return a, g, rss, (sxx, sxy, syy)


MIN_REGIME = 5  # sizes per regime


def link_fit(pts, max_regimes=3):
    """Segmented fit over sizes sorted ascending; regime count by BIC (n ln(RSS/n) + p ln n,
    p = 2 per regime + 1 per breakpoint). Returns the regimes as dicts."""
    pts = sorted(pts)
    n = len(pts)
    best = None
    cache = {}

    def seg(i, j):
        if (i, j) not in cache:
            cache[(i, j)] = seg_fit(pts[i:j])
        return cache[(i, j)]

    cands = [[(0, n)]]
    if max_regimes >= 2:
        cands += [[(0, b), (b, n)] for b in range(MIN_REGIME, n - MIN_REGIME + 1)]
    if max_regimes >= 3:
        cands += [[(0, b1), (b1, b2), (b2, n)] for b1 in range(MIN_REGIME, n - 2 * MIN_REGIME + 1)
                  for b2 in range(b1 + MIN_REGIME, n - MIN_REGIME + 1)]
    for segs in cands:
        rss = sum(seg(i, j)[2] for i, j in segs)
        k = 3 * len(segs) - 1
        bic = n * math.log(max(rss, 1e-300) / n) + k * math.log(n)
        if best is None or bic < best[0] - 1e-12:
            best = (bic, segs, rss)
    _, segs, rss = best
    dof = max(1, n - (3 * len(segs) - 1))
    s2 = rss / dof
    regimes = []
    for idx, (i, j) in enumerate(segs):
        a, g, _, (sxx, sxy, syy) = seg(i, j)
        det = sxx * syy - sxy * sxy
        se_a = math.sqrt(s2 * syy / det) if det > 0 and a > 0 else None
        se_g = math.sqrt(s2 * sxx / det) if det > 0 else None
        lo = pts[i][0] if idx > 0 else 0
        hi = pts[j][0] if j < n else None  # regime covers [lo, hi)
        regimes.append(dict(from_bytes=lo, to_bytes=hi, latency_s=a, inv_bw=g, se_latency_s=se_a, se_inv_bw=se_g,
                            first_probe=pts[i][0], last_probe=pts[j - 1][0]))
    return regimes


def link_predict(regimes, size):
    for rg in regimes:
        if rg["to_bytes"] is None or size < rg["to_bytes"]:
            return rg["latency_s"] + size * rg["inv_bw"]
    raise AssertionError


def link_fits(root, rows):
    out = {}
    for hop in sorted({r["hop"] for r in rows}):
        rs = sorted([r for r in rows if r["hop"] == hop], key=lambda r: r["size"])
        pts = [(r["size"], r["time_s"]) for r in rs]
        regimes = link_fit(pts)
        one = link_fit(pts, max_regimes=1)
        scores = {}
        for label, maxr in (("selected", 3), ("one_regime", 1)):
            preds, _ = logo(rs, lambda tr: link_fit([(r["size"], r["time_s"]) for r in tr], max_regimes=maxr),
                            link_predict_row, group_of=lambda r: r["size"])
            scores[label] = (
                rnd(mape((preds[r["id"]], r["time_s"]) for r in rs if r["size"] >= 1 << 20), 4),
                rnd(mape((preds[r["id"]], r["time_s"]) for r in rs), 4), preds)
        preds = scores["selected"][2]
        reg_out = []
        for rg in regimes:
            bw = 1.0 / rg["inv_bw"] if rg["inv_bw"] > 0 else None
            se_bw = rg["se_inv_bw"] / rg["inv_bw"] ** 2 if bw and rg["se_inv_bw"] is not None else None
            reg_out.append({"from_bytes": rg["from_bytes"], "to_bytes": rg["to_bytes"],
                            "probes": [rg["first_probe"], rg["last_probe"]],
                            "latency_s": rnd(rg["latency_s"]), "se_latency_s": rnd(rg["se_latency_s"], 3),
                            "bandwidth_bytes_per_s": rnd(bw), "se_bandwidth_bytes_per_s": rnd(se_bw, 3)})
        plateau = max(r["size"] / r["time_s"] for r in rs)
        out[hop] = {
            "gpu": rs[0]["gpu"], "rows": len(rs), "regimes": reg_out,
            "one_regime": [{"latency_s": rnd(one[0]["latency_s"]), "bandwidth_bytes_per_s": rnd(1 / one[0]["inv_bw"])}],
            "largest_measured_bytes_per_s": rnd(plateau),
            "loso_mape_pct_ge_1MB": scores["selected"][0], "loso_mape_pct_all": scores["selected"][1],
            "one_regime_loso_mape_pct_ge_1MB": scores["one_regime"][0],
            "one_regime_loso_mape_pct_all": scores["one_regime"][1],
            "fitted_rows": [{"src": r["src"], "size_bytes": r["size"], "measured_s": rnd(r["time_s"]),
                             "fit_s": rnd(link_predict(regimes, r["size"])), "held_out_s": rnd(preds[r["id"]])}
                            for r in rs],
        }
    return out


def link_predict_row(regimes, r):
    return link_predict(regimes, r["size"])
