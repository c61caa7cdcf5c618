"""The fits and predictions behind docs/validation.md: every `ringsim calibrate` that writes a profile
(the Striped paper's speedups, the component kernels and link probes, SCFA), the derived profiles, and
the `ringsim predict` runs the page scores (USP's table T1, ring-flash-attention's varlen table, the
SCFA bucket grid). scripts/validation.py runs them in order and writes the page.

The ringsim binary is the script's first argument (default build/cli/ringsim)."""
import json
import os
import sys
import tempfile

import fit_collective_host as collective_host
import ringsim_util as util

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BIN = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "cli", "ringsim")
DATE = "2026-11-28"
TMP = tempfile.mkdtemp(prefix="ringsim-validation-")

# The fitted parameters of each profile (the page says why each is physical).
PAPER_FREE = {"a100-80gb": "masked_tile_penalty,skipped_tile_cost",
              "tpu-v4": "masked_tile_penalty,skipped_tile_cost,round_bytes_per_element"}
FLASH_IMPLS = "ring-flash-attn,usp"
KERNELS = "data/components/kernels"
PROBES = "data/components/links/ultraattn_p2p_a800_h800_a100.csv"
PROBE_GPUS = "A800=a800,H800=h800,A100=a100-80gb"
# What another GPU running the same kernel code copies from a kernel fit: the matrix units' and
# shared memory's efficiencies, the softmax overlap and a lone CTA's gain as they are; the per-CTA and per-launch
# fixed costs as SM cycles (rescaled by the clocks).
FLASH_KEEP = ("attention_efficiency,attention_bwd_efficiency,softmax_overlap,solo_cta_gain,shared_memory_efficiency,"
              "bwd_shared_memory_efficiency")
FLASH_KEEP_CYCLES = "cta_overhead_s,kernel_launch_s"
# The host's time per ring step and call: ring-flash-attention's loop, measured on one host
# (data/components/host/); YunChang/USP runs the same loop. Other libraries' loops are unmeasured.
HOST = "data/components/host/h100_ring_flash_attn_host.csv"
HOST_KEEP = "host_step_s,host_call_s,host_bwd_step_s,host_bwd_call_s"
HOST_IMPLS = ("ring-flash-attn", "usp")
HOST_NOTE = "the step loop's host, not this machine's (the measured H100 VM's Xeon, PyTorch 2.11)"
# Every implementation that calls FlashAttention-2 (configs/implementations: kernel_model flash-attn-2).
FA2_IMPLS = ["ring-flash-attn", "usp", "te-p2p", "te-a2a-p2p", "te-all-gather", "te-a2a", "internevo",
             "rfa-llama3", "torch-cp", "verl-ulysses"]
GPUS = ["a100-80gb", "a100-40gb", "a800", "a100-80gb-pcie", "h800", "h100-sxm", "h100-pcie", "h200-sxm", "h20", "b200",
        "l40s", "l20", "rtx-4090", "rtx-4090-p2p", "mi300x"]
FITTED = {("ring-flash-attn", "a100-80gb"), ("ring-flash-attn", "h800"), ("usp", "a100-80gb"),
          ("ring-flash-attn", "h100-sxm"), ("usp", "h100-sxm")}
# GPUs whose kernel curves were measured but that have no ring rows: their profiles are the kernel fit
# with the ring-level spread the same method measured where ring rows exist.
KERNEL_ONLY = {"h100-sxm": ("h100_sdpa_flash.csv", "NVIDIA H100", "h800")}
# Their calls were timed one at a time from Python: each pays PyTorch's dispatch before the kernel
# starts (about 40 us), which a ring's back-to-back calls do not. Calls of at least 0.5 ms, where it is
# under 8 %, fit the kernel; what those calls cannot tell (the launch, a lone CTA's gain) comes from
# the kernel profile of the same die (the third field), fitted above.
KERNEL_MIN_S = "5e-4"
KERNEL_ONLY_FREE = "attention_efficiency,attention_bwd_efficiency,softmax_overlap,cta_overhead_s"
# FlashAttention-2's rows span head dims 32 to 256, timed forward and backward apart: its backward
# tiles' shared-memory bytes per FLOP differ by 1.35 x, which tells the backward's shared-memory
# rate from its matrix unit's (KernelSpec::bwd_smem_bytes; cuDNN's kernels give no warp layout), and
# its forward tiles' by 2 x (head dim 32's 128 x 128 against 256's 64 x 64, the tile Hopper runs),
# which tells the forward's (KernelSpec::fwd_smem_bytes).
KERNEL_ONLY_FA2_FREE = KERNEL_ONLY_FREE + ",bwd_shared_memory_efficiency,shared_memory_efficiency"
# The Hopper kernels, fitted as components on H100 (configs/kernels/): cuDNN's fused attention on this
# project's measurement (PyTorch SDPA's cuDNN backend, the sm90 wgmma kernels TransformerEngine's
# FusedAttention runs), timed alone from Python as the FlashAttention-2 rows were, so the same
# --min-seconds; FlashAttention-3's forward on its chart (no library here calls it by default).
CUDNN = ("h100_sdpa_cudnn.csv", "NVIDIA H100", "h100-sxm")
FA3_CHART = "flash_fa3_h100.csv"
# TransformerEngine's libraries call cuDNN from compute capability 9.0 (configs/implementations/te-*.json
# kernel_model_from_compute_capability): on these GPUs their profiles come from the cuDNN fit.
TE_IMPLS = ["te-p2p", "te-a2a-p2p", "te-all-gather", "te-a2a"]
CUDNN_GPUS = {"h100-sxm": "", "h800": "The H800 is the H100 SXM's GH100 die (its SMs and clocks).",
              "h100-pcie": "The H100 PCIe has fewer SMs and a lower clock than the SXM part (this GPU's specs).",
              "h200-sxm": "The H200 has the H100's SMs and clocks with faster HBM (its specs).",
              "h20": "The H20 is the GH100 die with 78 SMs and its tensor rate capped at 148 TFLOPS (its specs); its kernels are refitted on its own forward timings (fit_h20).",
              "b200": "On Blackwell cuDNN runs its sm100 kernels, unmeasured here: the H100's sm90 fit stands in."}
# The serving stack (configs/implementations/cp-serve.json): FlashAttention-3 on Hopper, fitted on its
# chart on H100 and derived for the other Hopper GPUs; FlashAttention-2 elsewhere, from the same fits as
# the training libraries (no host terms: a serving stack's host is unmeasured).
SERVE = "cp-serve"
FA3_GPUS = {"h100-sxm": "", "h800": "The H800 is the H100 SXM's GH100 die (its SMs and clocks).",
            "h100-pcie": "The H100 PCIe has fewer SMs and a lower clock than the SXM part (this GPU's specs).",
            "h200-sxm": "The H200 has the H100's SMs and clocks with faster HBM (its specs).",
            "h20": "The H20 is the GH100 die with 78 SMs and its tensor rate capped at 148 TFLOPS (its specs); its kernels are refitted on its own forward timings (fit_h20).",}
# Which fitted GPU's kernel parameters a GPU borrows (the same sm80 FlashAttention-2 code path).
FA2_SOURCE = {"a100-80gb": "a100-80gb", "a100-40gb": "a100-80gb", "a800": "a100-80gb", "a100-80gb-pcie": "a100-80gb",
              "h800": "h800", "h100-sxm": "h100-sxm", "h100-pcie": "h100-sxm", "h200-sxm": "h100-sxm", "h20": "h100-sxm",
              "b200": "h100-sxm", "l40s": "a100-80gb", "l20": "a100-80gb", "rtx-4090": "a100-80gb",
              "rtx-4090-p2p": "a100-80gb"}
NOTE_GPU = {
    "a100-40gb": "The A100 40GB runs the same SMs and clocks as the fitted A100 80GB.",
    "h100-sxm": "",
    "h200-sxm": "The H200 has the H100's SMs and clocks with faster HBM (its specs).",
    "h20": "The H20 is the GH100 die with 78 SMs and its tensor rate capped at 148 TFLOPS (its specs); the sm80 code "
           "path is refitted on its own forward timings (fit_h20).",
    "b200": "Blackwell runs flash-attn 2's sm80 code too; its efficiency there is unmeasured (the H100's stands in).",
    "a800": "The A800 is the A100's GA100 die with NVLink cut to 400 GB/s; its SMs and clocks are the A100's.",
    "a100-80gb-pcie": "The A100 PCIe runs the A100's SMs and clocks; its GPUs meet over PCIe, from this GPU's specs.",
    "h100-pcie": "The H100 PCIe has fewer SMs and a lower clock than the SXM part (this GPU's specs); the sm80 code "
                 "path's efficiency is the H100 SXM's.",
    "l40s": "Ada (sm89) runs flash-attn 2's sm80 mma.sync code as Ampere does; its efficiency there is unmeasured "
            "(the A100's stands in). No NVLink: its GPUs meet over PCIe.",
    "l20": "Ada (sm89) runs flash-attn 2's sm80 mma.sync code as Ampere does; its efficiency there is unmeasured "
           "(the A100's stands in). No NVLink: its GPUs meet over PCIe.",
    "rtx-4090": "Ada (sm89) runs flash-attn 2's sm80 mma.sync code as Ampere does; its efficiency there is unmeasured "
                "(the A100's stands in). No peer-to-peer: a ring hop is staged through host memory (configs/hardware).",
    "rtx-4090-p2p": "Ada (sm89) runs flash-attn 2's sm80 mma.sync code as Ampere does; its efficiency there is unmeasured "
                    "(the A100's stands in). Peer-to-peer through tinygrad's driver: a ring hop goes card to card (configs/hardware).",
    "h800": "", "a100-80gb": "",
}
MI300X_NOTE = ("No FlashAttention-2 measurement on MI300X was handed over, and ROCm's flash-attention port (Composable "
               "Kernel) is a different kernel from the sm80 code the fits measured: spec defaults, the FlashAttention-2 "
               "tile model standing in for CK's tiles.")


run = util.run


def ringsim(*args):
    return run([BIN] + list(args))


def derive(source, hw, keep, note, impl=None, keep_cycles=""):
    """An uncalibrated profile for `hw` derived from the fitted profile `source` (IMPL/HARDWARE),
    keeping the parameters in `keep` (and `keep_cycles` as SM cycles), for `impl` (default: the
    source's implementation); written to configs/profiles/IMPL/HW.json."""
    ringsim("calibrate", "--derive-from", source, *(["--impl", impl] if impl else []),
            *(["--keep-cycles", keep_cycles] if keep_cycles else []),
            "--hardware", hw, "--keep", keep, "--date", DATE, "--note", note,
            "-o", "configs/profiles/%s/%s.json" % (impl or source.split("/")[0], hw))


read_csv = util.read_csv


def pct(x):
    return "%+.1f%%" % (100 * x)


def mape(pairs):
    v = [abs(p / m - 1) for p, m in pairs]
    return (100 * sum(v) / len(v), len(v)) if v else (float("nan"), 0)


def covered(m, lo, hi):
    return lo <= m <= hi


# ------------------------------------------------------------------------------------- profiles

def fit_paper():
    fits = {}
    for hw in ("a100-80gb", "tpu-v4"):
        # TPU v4's rows hold one mesh: a change of mesh takes the A100 fit's leave-one-mesh-out spread.
        fits[hw] = ringsim("calibrate", "--from-speedups", "data/striped_paper_calibration.csv", "--hardware", hw,
                           "--impl", "jax-blockwise", "--free", PAPER_FREE[hw], "--date", DATE,
                           *(["--mesh-spread-from", "jax-blockwise/a100-80gb"] if hw == "tpu-v4" else []),
                           "-o", "configs/profiles/jax-blockwise/%s.json" % hw,
                           "--report", os.path.join(TMP, hw + ".csv"),
                           "--plot", "docs/images/validation%s.svg" % ("" if hw == "a100-80gb" else "-tpu-v4"))
    keep = "masked_tile_penalty,skipped_tile_cost,round_bytes_per_element,attention_efficiency,matmul_efficiency," \
           "memory_efficiency,link_efficiency,overlap"
    for hw in ("tpu-v3", "tpu-v5e", "tpu-v5p"):
        derive("jax-blockwise/tpu-v4", hw, keep,
               "The paper ran the same JAX code on TPU v3 and v4 with 2048 x 2048 chunks; later TPUs run it unchanged.")
    # The JAX code on other GPUs: its implementation terms (fractions of a tile) from the A100 fit.
    for hw in ("h100-sxm", "h200-sxm", "b200", "mi300x"):
        derive("jax-blockwise/a100-80gb", hw, "masked_tile_penalty,skipped_tile_cost",
               "The JAX blockwise loop's masked and skipped tile terms are fractions of a tile's compute, "
               "kept from the A100 fit; the efficiencies are this GPU's spec defaults.")
    return fits


def fit_components():
    """The hops from the NCCL probes (configs/links) and the flash family's kernel parameters of the
    two ring-table GPUs from single-kernel timings only: A100 80GB from the A800 kernel profile (the
    same GA100 die, SMs and clocks) on the A100 chart's fit, which alone has two head dims and so
    tells the softmax overlap; H800 from its kernel profile on the H100 charts' fit (the same GH100
    die). Returns the commands' outputs and the directory of the kernel-fitted profiles."""
    os.makedirs(os.path.join(ROOT, "configs", "links"), exist_ok=True)
    out = {"links": ringsim("calibrate", "--from-probes", PROBES, "--as", PROBE_GPUS, "--date", DATE,
                            "--links-dir", "configs/links")}
    kb, kfit = os.path.join(TMP, "kb"), os.path.join(TMP, "kfit")
    out["a100-chart"] = ringsim("calibrate", "--from-kernels", KERNELS + "/flash_fa2_a100.csv", "--as", "A100=a100-80gb",
                                "--date", DATE, "--profiles-dir", kb)
    out["h100-charts"] = ringsim("calibrate", "--from-kernels",
                                 KERNELS + "/flash_fa2_h100.csv," + KERNELS + "/flash_fa3_h100.csv", "--as", "H100=h800",
                                 "--date", DATE, "--profiles-dir", kb)
    for name, hw in (("A800", "a100-80gb"), ("H800", "h800")):
        out[name] = ringsim("calibrate", "--from-kernels", KERNELS + "/ultraattn_fa2_a800_h800.csv", "--as",
                            "%s=%s" % (name, hw), "--profile", os.path.join(kb, "ring-flash-attn", hw + ".json"),
                            "--date", DATE, "--profiles-dir", kfit)
    for hw, (csv_name, gpu, die) in KERNEL_ONLY.items():
        out[hw] = ringsim("calibrate", "--from-kernels", KERNELS + "/" + csv_name, "--as", "%s=%s" % (gpu, hw),
                          "--profile", os.path.join(kfit, "ring-flash-attn", die + ".json"),
                          "--min-seconds", KERNEL_MIN_S, "--free", KERNEL_ONLY_FA2_FREE, "--date", DATE,
                          "--profiles-dir", kfit)
    gpu, hw = CUDNN[1], CUDNN[2]
    out["cudnn"] = ringsim("calibrate", "--from-kernels", KERNELS + "/" + CUDNN[0], "--impl", "te-p2p", "--as",
                           "%s=%s" % (gpu, hw), "--min-seconds", KERNEL_MIN_S, "--free", KERNEL_ONLY_FREE,
                           "--date", DATE, "--profiles-dir", kfit)
    out["fa3"] = ringsim("calibrate", "--from-kernels", KERNELS + "/" + FA3_CHART, "--method", "FlashAttention-3",
                         "--impl", SERVE, "--as", "H100=h100-sxm", "--date", DATE, "--profiles-dir", kfit)
    # The host's time per step and call of ring-flash-attention's loop, from its one measured host (the
    # H100 campaign's VM: h100-sxm's own, a stand-in for the others).
    for hw in ("a100-80gb", "h800") + tuple(KERNEL_ONLY):
        prof = os.path.join(kfit, "ring-flash-attn", hw + ".json")
        note = HOST_NOTE if hw not in KERNEL_ONLY else "this GPU's host as the campaign's VM ran it (one VM)"
        out["host"] = ringsim("calibrate", "--from-host-steps", HOST, "--impl", "ring-flash-attn", "--hardware", hw,
                              "--profile", prof, "--note", note, "--report", os.path.join(TMP, "host.csv"), "-o", prof)
    # USP's ring is ring-flash-attention's code calling the same kernel: the same parameters.
    os.makedirs(os.path.join(kfit, "usp"), exist_ok=True)
    for hw in ("a100-80gb", "h800"):
        p = json.load(open(os.path.join(kfit, "ring-flash-attn", hw + ".json")))
        p["implementation"], p["name"] = "usp", "usp/" + hw
        json.dump(p, open(os.path.join(kfit, "usp", hw + ".json"), "w"), indent=2)
    # USP's host time per all-to-all call, on the rows of its table where nothing else is unknown
    # (scripts/fit_collective_host.py); the ring's terms above stay as measured.
    a, b, lines = collective_host.report(
        collective_host.linear_rows(BIN, json.load(open(os.path.join(kfit, "usp", "a100-80gb.json")))))
    out["collective-host"] = (a, b, lines)
    for hw in ("a100-80gb", "h800"):
        set_collective_host(os.path.join(kfit, "usp", hw + ".json"), a, b)
    return out, kfit


def set_collective_host(path, a, b):
    """Writes USP's fitted host time per collective call into the profile at `path`, with its note."""
    p = json.load(open(path))
    p["host_collective_s"], p["host_collective_peer_s"] = a, b
    note = (" host_collective_s and host_collective_peer_s: YunChang/USP's all_to_all_4D calls, fitted on table T1's "
            "host-bound rows of one 8 x A100 machine (scripts/fit_collective_host.py; its host, not this GPU's).")
    if note not in p["provenance"]["notes"]:
        p["provenance"]["notes"] += note
    with open(path, "w") as f:
        json.dump(p, f, indent=2)
        f.write("\n")


def kernel_only_profile(src, impl, hw, ref, note):
    """Writes configs/profiles/IMPL/HW.json from the kernel-fitted profile at `src` for a GPU with no ring
    rows: its interval the ring-level spread of the reference profile `ref` (the same method's
    out-of-sample predictions of the ring tables), said in its notes after `note`."""
    p = json.load(open(src))
    p["implementation"], p["name"] = impl, impl + "/" + hw
    p["uncertainty"] = ref["uncertainty"]
    sd = ref["uncertainty"]["residual_log_sd"]
    p["provenance"]["notes"] += note + (
        " No ring rows on this GPU: its interval is the spread of the same method's out-of-sample predictions "
        "of the ring tables on a100-80gb and h800 (log sd time %.3f, ratio %.3f)." % (sd["time"], sd["ratio"]))
    os.makedirs(os.path.join(ROOT, "configs", "profiles", impl), exist_ok=True)
    with open(os.path.join(ROOT, "configs", "profiles", impl, hw + ".json"), "w") as f:
        json.dump(p, f, indent=2)
        f.write("\n")


def fit_flash(kfit):
    text = ringsim("calibrate", "--from-times", "data/cp_attention_times.csv", "--impl", FLASH_IMPLS,
                   "--free", "none", "--keep", FLASH_KEEP + "," + FLASH_KEEP_CYCLES, "--base-profiles", kfit,
                   "--date", DATE, "--profiles-dir", "configs/profiles", "--report", os.path.join(TMP, "flash.csv"))
    # A GPU with kernel curves but no ring rows: its kernel fit as it is, for the libraries that run
    # ring-flash-attention's loop; its interval the ring-level spread the same method measured on the
    # ring tables (the a100-80gb profile's, written by the fit above).
    ref = json.load(open(os.path.join(ROOT, "configs", "profiles", "ring-flash-attn", "a100-80gb.json")))
    for hw in KERNEL_ONLY:
        for impl in HOST_IMPLS:
            kernel_only_profile(os.path.join(kfit, "ring-flash-attn", hw + ".json"), impl, hw, ref, "")
    # TransformerEngine on Hopper and later: the cuDNN kernel fit, with the same ring-level spread.
    cudnn_hw = CUDNN[2]
    for impl in TE_IMPLS:
        kernel_only_profile(os.path.join(kfit, "te-p2p", cudnn_hw + ".json"), impl, cudnn_hw, ref,
                            " TransformerEngine runs cuDNN's fused attention on this GPU (configs/implementations/%s.json);"
                            " its host loop is unmeasured (spec defaults)." % impl)
        for hw, why in CUDNN_GPUS.items():
            if hw == cudnn_hw:
                continue
            note = ("%s calls cuDNN's fused attention on this GPU, whose sm90 kernels the source profile's fit "
                    "measured on H100; its merges, messages and strategies are its own (configs/implementations/%s.json). %s"
                    % (impl, impl, why)).strip()
            derive(impl + "/" + cudnn_hw, hw, FLASH_KEEP, note, impl, FLASH_KEEP_CYCLES)
    fit_serving(kfit, ref)
    for impl in FA2_IMPLS:
        os.makedirs(os.path.join(ROOT, "configs", "profiles", impl), exist_ok=True)
        for hw in GPUS:
            if (impl, hw) in FITTED or (impl in TE_IMPLS and hw in CUDNN_GPUS):
                continue
            if hw == "mi300x":
                derive("ring-flash-attn/a100-80gb", hw, "", MI300X_NOTE, impl)
                continue
            note = ("%s calls FlashAttention-2, whose sm80 code path the source profile's fit measured; its merges, "
                    "messages and strategies are its own (configs/implementations/%s.json). %s"
                    % (impl, impl, NOTE_GPU[hw])).strip()
            keep = FLASH_KEEP + ("," + HOST_KEEP if impl in HOST_IMPLS else "")
            derive("ring-flash-attn/" + FA2_SOURCE[hw], hw, keep, note, impl, FLASH_KEEP_CYCLES)
    fit_h20(ref)
    fit_releases()
    return text


# Earlier releases whose kernel differs from the newest's on some GPUs (configs/implementations: "releases"):
# on those GPUs their profile is the kernel they call there, from the profile of the library that is fitted
# on it for that GPU (ring-flash-attention's FlashAttention-2 fits), with the release's own spec terms; on
# the other GPUs the newest release's profile serves (models/catalog).
RELEASES = {"te-p2p@1.2": ("ring-flash-attn", CUDNN_GPUS)}


def fit_releases():
    for impl, (source, gpus) in RELEASES.items():
        os.makedirs(os.path.join(ROOT, "configs", "profiles", impl), exist_ok=True)
        for hw in gpus:
            derive("%s/%s" % (source, hw), hw, FLASH_KEEP,
                   "%s calls FlashAttention-2 on this GPU (TransformerEngine before 1.3 runs context parallelism through "
                   "flash-attn only: configs/implementations/te-p2p.json releases), whose kernel the source profile "
                   "describes on it." % impl, impl, FLASH_KEEP_CYCLES)


# The H20's forward kernels (FlashAttention's issue #1310: FlashAttention-2, -3 and cuDNN at 2,048 tokens,
# head dims 64 and 128, causal and not), refitted on the profiles derived above from H100's: its tensor
# rate is capped at 148 TFLOPS (a quarter of the H100's per SM) at the die's clock, so what binds a tile
# there is not what binds it on H100 (derived, FlashAttention-2 runs 45 % and FlashAttention-3 21 % too
# slow, docs/components.md). FlashAttention-2 frees its efficiency only (its two head dims cannot also
# tell its softmax overlap: +-0.38); the wgmma kernels free the overlap too, which the head dims' two
# exponential-per-FLOP ratios tell. Held out one shape (head dim, mask) at a time.
H20_CHART = "h20_chart.csv"
H20_KERNELS = {"FlashAttention-2": "attention_efficiency", "cuDNN": "attention_efficiency,softmax_overlap",
               "FlashAttention-3": "attention_efficiency,softmax_overlap"}


def h20_method(impl):
    if impl == SERVE:
        return "FlashAttention-3"
    return "cuDNN" if impl in TE_IMPLS else "FlashAttention-2"


def fit_h20(ref):
    """configs/profiles/IMPL/h20.json for every library with a flash kernel: its kernel refitted on the H20's
    forward rows, from its profile derived from H100's. No backward was timed: the backward's efficiency is
    the fitted forward's times the source profile's backward-to-forward ratio (FlashAttention-2's ratio is
    0.73 on the A100 fit and 0.77 on the H100 fit: the ratio carries between dies, the level does not).
    Returns the fit's output per kernel."""
    out = {}
    for impl in FA2_IMPLS + [SERVE]:
        base = os.path.join(ROOT, "configs", "profiles", impl, "h20.json")
        method = h20_method(impl)
        d = os.path.join(TMP, "h20")
        text = ringsim("calibrate", "--from-kernels", KERNELS + "/" + H20_CHART, "--method", method, "--impl", impl,
                       "--as", "H20=h20", "--free", H20_KERNELS[method], "--profile", base, "--date", DATE,
                       "--profiles-dir", d)
        out.setdefault(method, text)
        fitted = os.path.join(d, impl, "h20.json")
        p = json.load(open(fitted))
        src_hw = "h100-sxm"
        src = json.load(open(os.path.join(ROOT, "configs", "profiles", impl, src_hw + ".json")))
        note = ""
        if src.get("attention_bwd_efficiency", 0) > 0 and src["attention_efficiency"] > 0:
            ratio = src["attention_bwd_efficiency"] / src["attention_efficiency"]
            p["attention_bwd_efficiency"] = min(1.0, p["attention_efficiency"] * ratio)
            note = (" Backward untimed on H20: attention_bwd_efficiency = the fitted forward's x %s/%s's backward-to-"
                    "forward ratio %.3f = %.4g (derived)." % (impl, src_hw, ratio, p["attention_bwd_efficiency"]))
        if impl == SERVE:
            note += " Its host per layer and request is unmeasured (none charged)."
        json.dump(p, open(fitted, "w"), indent=2)
        kernel_only_profile(fitted, impl, "h20", ref, note)
    return out


def fit_serving(kfit, ref):
    """configs/profiles/cp-serve/: the FlashAttention-3 chart fit on H100 (its forward is all a prefill
    and decode call), derived for the other Hopper GPUs; FlashAttention-2's fits elsewhere, as vLLM's
    backend choice falls back to it (Blackwell included: FlashAttention-4 is not modelled)."""
    os.makedirs(os.path.join(ROOT, "configs", "profiles", SERVE), exist_ok=True)
    for hw in ["h100-sxm"] + [g for g in GPUS if g != "h100-sxm"]:  # the fitted one first: the others derive from it
        if hw == "h100-sxm":
            kernel_only_profile(os.path.join(kfit, SERVE, hw + ".json"), SERVE, hw, ref,
                                " FlashAttention-3's forward on its H100 chart: what a serving stack calls on Hopper"
                                " (configs/implementations/%s.json); its host per layer and request is unmeasured"
                                " (none charged)." % SERVE)
        elif hw in FA3_GPUS:
            derive(SERVE + "/h100-sxm", hw, FLASH_KEEP,
                   ("%s calls FlashAttention-3 on this GPU, whose sm90 kernel the source profile's chart fit measured on"
                    " H100. %s" % (SERVE, FA3_GPUS[hw])).strip(), SERVE, FLASH_KEEP_CYCLES)
        elif hw == "mi300x":
            derive("ring-flash-attn/a100-80gb", hw, "", MI300X_NOTE, SERVE)
        else:
            why = NOTE_GPU[hw]
            if hw == "b200":
                why = ("vLLM runs FlashAttention-4 on Blackwell where it is built (not modelled here) and falls back to"
                       " FlashAttention-2, priced here with the H100's sm80-path efficiency.")
            derive("ring-flash-attn/" + FA2_SOURCE[hw], hw, FLASH_KEEP,
                   ("%s calls FlashAttention-2 on this GPU, whose sm80 code path the source profile's fit measured;"
                    " a serving stack's host is unmeasured (none charged). %s" % (SERVE, why)).strip(),
                   SERVE, FLASH_KEEP_CYCLES)


def fit_scfa():
    text = ringsim("calibrate", "--from-scfa", "data/scfa_calibration.csv", "--hardware", "a100-40gb",
                   "--name", "scfa/a100-40gb", "--impl", "scfa", "--date", DATE,
                   "-o", "configs/profiles/scfa/a100-40gb.json", "--report", os.path.join(TMP, "scfa.csv"))
    for hw in ("a100-80gb", "h100-sxm", "h200-sxm", "b200", "mi300x"):
        derive("scfa/a100-40gb", hw, "sparse_kernel_efficiency,masked_tile_penalty",
               "SCFA's Triton kernel relative to dense attention and its masking penalty are properties of the "
               "code, kept from the A100 40GB fit; the dense efficiency is this GPU's spec default.")
    return text


def scfa_leave_one_out():
    """Each row of data/scfa_calibration.csv predicted by a fit to the other four (the same three
    free parameters; `calibrate --from-scfa` refits them, its report's held_out_ms): the held-out
    score of the SCFA profile and its interval's spread."""
    out = []
    for r in read_csv(os.path.join(TMP, "scfa.csv")):
        out.append((r, float(r["held_out_ms"]) if r["held_out_ms"] else None))
    return out

def predict_json(*args):
    return json.loads(ringsim("predict", "--format", "json", *args))["results"][0]


def attention_fwd(hardware, model, n_seq, batch, cp, impl, layout, docs=""):
    """Forward attention seconds of one layer's call and its relative 90 % interval (or None)."""
    args = ["--hardware", hardware, "--model", model, "--mesh", "1x8", "--seq", str(n_seq), "--batch", str(batch),
            "--cp", cp, "--impl", impl, "--layout", layout]
    if docs:
        args += ["--docs", docs]
    r = predict_json(*args)
    rel = (r["step_s_lo"] / r["step_s"], r["step_s_hi"] / r["step_s"]) if r["step_s_lo"] is not None else None
    return r["attention_fwd_s"], r["attention_bwd_s"], rel


def usp_t1():
    """Every T1 row through `predict` with the usp implementation and its split."""
    layouts = {"basic": "contiguous", "zigzag": "zigzag", "stripe": "striped", "strip": "striped"}
    out = []
    for r in read_csv(os.path.join(ROOT, "data", "usp_t1_a100_nvlink.csv")):
        if r["value"] == "OOM":
            continue
        u, ring = int(r["ulysses_degree"]), int(r["ring_degree"])
        model = "attn:%s:%s:%s" % (r["heads_q"], r["heads_kv"], r["head_dim"])
        layout = layouts[r["method_label"].split("/")[0]]
        fwd, _, rel = attention_fwd("a100-80gb", model, r["n_seq_total"], r["batch"], "usp:%dx%d" % (u, ring), "usp", layout)
        out.append(dict(n=int(r["n_seq_total"]), heads="%s/%s/%s" % (r["heads_q"], r["heads_kv"], r["head_dim"]),
                        method=r["method_label"].split("/")[0], packing=r["qkv_layout"], u=u, r=ring, layout=layout,
                        measured=1.0 / float(r["value"]), predicted=fwd, rel=rel))
    return out


def varlen():
    packings = [[65536], [2048, 59136, 4352], [32768, 32768], [24832, 25600, 12800, 1280, 1024]]
    runs = {"ring": ("ring", "ring-flash-attn", "contiguous"), "zigzag": ("ring", "ring-flash-attn", "doc-zigzag"),
            "llama3": ("allgather", "rfa-llama3", "contiguous")}
    pred = {}
    for name, (cp, impl, layout) in runs.items():
        fwd_sum, all_sum = 0.0, 0.0
        for i, lengths in enumerate(packings):
            path = os.path.join(TMP, "packing%d.csv" % i)
            with open(path, "w") as f:
                f.write("\n".join(str(x) for x in lengths) + "\n")
            fwd, bwd, _ = attention_fwd("a100-80gb", "attn:32:8:128", 65536, 1, cp, impl, layout, path)
            fwd_sum += fwd
            all_sum += fwd + bwd
        # The benchmark cycles the four packings: iterations per second over the cycle.
        pred[name] = (4 / fwd_sum, 4 / all_sum)
    rows = [r for r in read_csv(os.path.join(ROOT, "data", "ringflash_readme_varlen.csv")) if r["gpus"] == "8xA100"]
    return pred, rows


def scfa_grid():
    def speedup(mask, n, hardware_file=None, profile=None):
        args = ["predict", "--impl", "scfa", "--model", "attn:48:48:64", "--mesh", "1x1", "--batch", "4",
                "--tile", "128x128", "--layout", "contiguous", "--seq", str(n), "--mask", mask, "--compare-mask", "causal"]
        args += ["--hardware-file", hardware_file] if hardware_file else ["--hardware", "a100-40gb"]
        if profile:
            args += ["--profile", profile]
        line = [l for l in ringsim(*args).splitlines() if l.startswith("contiguous")][-1].split()
        return float(line[3].rstrip("x")), float(line[-1].rstrip("x"))

    # The same GPU with loop steps that cost nothing, and a profile without the sort and gathers:
    # what the bucket-independent work does to the curve.
    hw = json.load(open(os.path.join(ROOT, "configs", "hardware", "a100-40gb.json")))
    # The smallest latency the hardware reader accepts (1 ps): a loop step then costs nothing visible.
    hw["compute_units"]["memory_latency_s"]["value"] = 1e-12
    free_scans = os.path.join(TMP, "a100-40gb-free-scans.json")
    json.dump(hw, open(free_scans, "w"))
    prof = json.load(open(os.path.join(ROOT, "configs", "profiles", "scfa", "a100-40gb.json")))
    prof["sparse_prep_bytes_per_element"] = 0
    prof["hash_sort_bytes_per_token"] = 0
    no_prep = os.path.join(TMP, "scfa-no-prep.json")
    json.dump(prof, open(no_prep, "w"))
    buckets = [2, 4, 8, 16, 32, 64, 128, 256]
    grid = {n: [speedup("hash:%d" % b, n) for b in buckets] for n in (8192, 16384, 32768)}
    grid_free = [speedup("hash:%d" % b, 16384, free_scans, no_prep) for b in buckets]
    qk = {d: speedup("qkdrop:%s" % d, 16384) for d in ("0.2", "0.4", "0.6", "0.8")}
    return buckets, grid, grid_free, qk
