"""What each raw probe file of data/components/links/pcie/ becomes: one handler per file, naming the
machine (data/components/machines/<machine>.json) each kept row measures and the reason each other
row is left out. scripts/normalize-pcie-probes.py runs them; pcie_probe_sheet.py holds the shared
readers. Standard library only.
"""
from pcie_probe_sheet import (DIAGONAL, P2PMARK_BYTES, SAMPLE_COPY_BYTES, gpu_pair, group, number_in, p2p_matrix,
                              pairs, size_bytes)

SAMPLE_DEFAULT = ("160 MB per copy: cuda-samples' default since v11.1 (e6ce58fe); the sample version is not "
                  "stated, the raw header's 40 MB is the pre-v11.1 default")
SAMPLE_118 = "160 MB per copy: the default of cuda-samples 11.8, which the post names"
STAGED = "P2P=Disabled: cudaMemcpyPeer without peer access, staged through host memory"
FALLBACK = "P2P=Enabled matrix, but peer access is unavailable ('CANNOT Access Peer'): the sample's staged fallback"
BROKEN_P2P = ("P2P=Enabled on an early-2023 driver that reported peer access the GeForce 4090 does not have: "
              "simpleP2P verification failed on that driver (data corrupt, dbkinghorn run A) and the nccl#814 "
              "rates (9.6-10.5 GB/s, half the staged path) follow no route the transport model describes")
P2PMARK = "p2pmark 3c39f36 (64 MiB cudaMemcpyPeerAsync per transfer)"
P2PMARK_RATIO = "a score = ratio of two published rates; the rates are kept where the page prints them"
P2PMARK_LATENCY = ("p2pmark's latency mode: a kernel's 128-byte remote reads (loaded: all GPUs reading all peers), "
                   "a load round trip rather than a copy's latency; ranges are not kept")
STAGGERED_AVG = "avg_per_gpu = total / 8 of the same run (the total is kept)"
ONESHOT = "a custom one-shot all-reduce kernel (each rank reads or pushes every peer's buffer), not NCCL"


def rtx4090x2(s):
    def plan(r):
        if r["run"].startswith("post_table"):
            return None, ("the post's one number per platform: its 4090 figures are run A's corrupt 'P2P', the other "
                          "platforms have no matrix or topology, and the author says the table was for function, not performance")
        if r["run"].startswith("A_"):
            if "enabled" in r["test"]:
                return None, BROKEN_P2P
            return "rtx4090x2_trpro_drv52585_p2poff", (f"{STAGED}; run A (driver 525.85.05): the flag below concerns "
                                                       "its P2P=Enabled rows (excluded), these copies use no peer access")
        if r["run"].startswith("B_"):
            return "rtx4090x2_trpro_p2poff", (FALLBACK if "enabled" in r["test"] else STAGED) + "; run B (driver 525.105.17)"
        return None, None
    p2p_matrix(s, plan, SAMPLE_COPY_BYTES, SAMPLE_118)


def rtx4090x6(s):
    def plan(r):
        if "enabled" in r["test"]:
            return None, BROKEN_P2P
        return "rtx4090x6_nccl814_p2poff", STAGED
    p2p_matrix(s, plan, SAMPLE_COPY_BYTES, SAMPLE_DEFAULT)


def rtx4090x3(s):
    def plan(r):
        if r["test"] == "bidir_p2p_disabled":
            return "rtx4090x3_tinygrad_p2poff", STAGED + " (tinygrad P2P driver loaded, peer access not enabled)"
        return "rtx4090x3_tinygrad_p2pon", "peer-to-peer through tinygrad's P2P driver 550.54.15-p2p"
    p2p_matrix(s, plan, SAMPLE_COPY_BYTES, SAMPLE_DEFAULT)


def tinybox(s):
    machine = "tinybox_4090x6_p2pon"
    nccl = [(line, r) for line, r in s.rows if r["test"].startswith("nccl_all_reduce")]
    cells = [(line, r) for line, r in s.rows if not r["test"].startswith("nccl_all_reduce")]
    p2p_matrix(s, lambda r: (machine, "peer-to-peer through tinygrad's P2P driver"), SAMPLE_COPY_BYTES, SAMPLE_DEFAULT,
               rows=cells)
    for line, r in nccl:
        time_us = number_in(s, line, "flag", r"time ([\d.]+) us", r["flag"])
        place = "out-of-place" if r["test"].endswith("_oop") else "in-place"
        s.emit(line, machine, "all_reduce", group(6), 33554432, "time_us", time_us,
               f"nccl-tests all_reduce_perf -g 6, float sum, {place}; busbw {r['value']} GB/s as printed")


def kalavai(s):
    for line, _ in s.rows:
        s.exclude(line, "container runs the raw README calls degraded (busbw ~10x below the staged 4090 link, cause "
                        "unstated; CPU, sockets, PCIe generation and driver not stated): no machine file can describe them")


def rtx3090x8(s):
    def plan(r):
        return "rtx3090x8_nccl1127_p2poff", FALLBACK if "enabled" in r["test"] else STAGED
    p2p_matrix(s, plan, SAMPLE_COPY_BYTES, SAMPLE_DEFAULT)


def titanrtx(s):
    note = ("4 GiB per copy, 20 repeats (wohlbier/gpu-micro src/p2p.cu --nElements=1073741824 --nRepeat=20; the "
            "results are in README.md from commit 0914bf6a, not 57fe35b4 as the raw header says)")

    def plan(r):
        return "titanrtx_x8_lambda_p2poff", FALLBACK if "enabled" in r["test"] else STAGED
    p2p_matrix(s, plan, 1073741824 * 4, note)


def a100pcie(s):
    def plan(r):
        if "disabled" in r["test"]:
            return "a100pcie80x4_p2poff", STAGED + " (the NVLink-bridged pairs too)"
        return "a100pcie80x4_p2pon", ("P2P=Enabled: pairs (0,1), (2,3) over their NVLink bridge, the others staged "
                                      "(peer access refused across NUMA nodes)")
    p2p_matrix(s, plan, SAMPLE_COPY_BYTES, SAMPLE_DEFAULT)


def allreduce_table(s, line, r, machine, n, nccl_key, oneshot_keys, note):
    nbytes = size_bytes(s, line, r["row_key"])
    if r["col_key"] == nccl_key:
        s.emit(line, machine, "all_reduce", group(n), nbytes, "time_us", r["value"], note)
    elif r["col_key"] in oneshot_keys:
        s.emit(line, machine, "oneshot_all_reduce", group(n), nbytes, "time_us", r["value"],
               f"{ONESHOT}; {r['note']}".rstrip("; "))
    else:
        s.fail(line, "col_key", f"expected {nccl_key} or {'/'.join(oneshot_keys)}")


def staggered(s, line, r, machine):
    d = int(r["row_key"].lstrip("+"))
    if r["col_key"] == "avg_per_gpu":
        s.exclude(line, STAGGERED_AVG)
    elif r["col_key"] == "total":
        s.emit(line, machine, "staggered", ";".join(f"{(i + d) % 8}>{i}" for i in range(8)), P2PMARK_BYTES,
               "sum_GBps", r["value"], f"{P2PMARK} topology probe: every GPU i reads from GPU i+{d} at once; "
               "total = sum of the 8 readers' rates")
    else:
        s.fail(line, "col_key", "expected avg_per_gpu or total")


def single_reader(s, line, machine, n, value, note):
    s.emit(line, machine, "single_reader", ";".join(f"{p}>0" for p in range(1, n)), P2PMARK_BYTES, "sum_GBps", value,
           f"{P2PMARK} 'PCIe link score' numerator: one GPU reads from all {n - 1} peers at once, the mean over the "
           f"{n} readers (transfers shown for reader 0); {note}".rstrip("; "))


def all_pairs(s, line, machine, n, value, note):
    s.emit(line, machine, "all_pairs", pairs(range(n)), P2PMARK_BYTES, "sum_GBps", value,
           f"{P2PMARK} all GPUs read from all peers at once: sum of the {n} readers' rates; {note}".rstrip("; "))


def broadcom(s):
    m = "rtxpro6000bw_x8_pex890xx"
    default = ("NCCL's default here uses P2P only between PIX pairs and SHM through host memory for the others "
               "(page's NCCL section); fp16")
    for line, r in s.rows:
        t, key, col = r["table"], r["row_key"], r["col_key"]
        if t == "acs_effect_bidir_p2p":
            s.exclude(line, "'~' rounded restatement of the bidir matrix" if col == "ACS_OFF" else
                      "ACS on: P2P is redirected up to the root port, a routing the machine file does not describe; '~' values")
        elif t in ("bidir_p2p_enabled_acs_off", "bidir_p2p_enabled_upstream_gen2"):
            i, j = int(key), int(col)
            gen2 = t.endswith("gen2")
            s.emit(line, m + ("_gen2up" if gen2 else ""), "bidir", f"{i}>{j};{j}>{i}", SAMPLE_COPY_BYTES, "sum_GBps",
                   r["value"], "p2pBandwidthLatencyTest bidirectional P2P=Enabled, ACS off, rounded by the author; "
                   + ("CPU root ports forced to Gen2 x16; " if gen2 else "") + SAMPLE_DEFAULT)
        elif t == "p2p_write_latency":
            i = int(key.replace("GPU", ""))
            s.emit(line, m, "latency", f"{i}>{int(col)}", 16, "latency_us", r["value"],
                   "P2P-writes latency matrix as published (tool not named there; p2pBandwidthLatencyTest's 16 B copies assumed)")
        elif t == "p2pmark_scores":
            n = 4 if key.startswith("4 GPU") else 8
            if col in ("pcie_link_score", "interconnect_score"):
                s.exclude(line, P2PMARK_RATIO)
            elif col == "effective_latency":
                s.exclude(line, P2PMARK_LATENCY)
            elif col == "pcie_link_GBps":
                single_reader(s, line, m, n, r["value"], "GPUs 0-3 (NUMA 0)" if n == 4 else "")
            elif col == "all_to_all_GBps":
                all_pairs(s, line, m, n, r["value"], ("GPUs 0-3 (NUMA 0); " if n == 4 else "") + r["note"])
            else:
                s.fail(line, "col_key", "expected a p2pmark score column")
        elif t == "topology_probe_8gpu_staggered_reads":
            staggered(s, line, r, m)
        elif t == "sequential_p2p_8gpu":
            src = int(key.replace("GPU", ""))
            s.emit(line, m, "uni", f"{src}>{int(col)}", P2PMARK_BYTES, "flow_GBps", r["value"],
                   f"{P2PMARK} sequential: one transfer at a time")
        elif t in ("allreduce_fp16_4gpu", "allreduce_fp16_8gpu"):
            n = 4 if "4gpu" in t else 8
            config = ("config 'default' (raw note); GPUs not named: 0-3 (NUMA 0) assumed" if n == 4 else "config not stated")
            allreduce_table(s, line, r, m, n, "nccl_us", ("custom_oneshot_us",),
                            f"NCCL, time per call as tabulated (tool not named), {config}; {default}")
        elif t == "nccl_allreduce_busbw_32MB_4gpu":
            s.emit(line, m, "all_reduce", group(4), 32 * 1024 ** 2, "busbw_GBps", r["value"],
                   f"nccl-tests all_reduce_perf 32M, NCCL config '{key}'; GPUs 0-3 (NUMA 0) assumed")
        elif t == "misconfig_root_port_x4_bidir_p2p":
            s.exclude(line, "before a BIOS fix one root port trained at x4, and which one is not stated")
        else:
            s.fail(line, "table", f"unexpected table '{t}'")


def cpayne(s):
    m = "rtxpro6000bw_x8_cpayne"
    ambiguous = ("the flows' GPUs and directions are not stated, and they decide which leaf uplinks the flows share")
    for line, r in s.rows:
        t, key, col = r["table"], r["row_key"], r["col_key"]
        if t in ("bidir_p2p_enabled", "uni_p2p_write", "p2p_write_latency"):
            i, j = int(key), int(col)
            if i == j:
                s.exclude(line, DIAGONAL)
            elif t == "bidir_p2p_enabled":
                s.emit(line, m, "bidir", f"{i}>{j};{j}>{i}", SAMPLE_COPY_BYTES, "sum_GBps", r["value"],
                       f"p2pBandwidthLatencyTest bidirectional P2P=Enabled, rounded by the author; {SAMPLE_DEFAULT}")
            elif t == "uni_p2p_write":
                s.emit(line, m, "uni", f"{i}>{j}", SAMPLE_COPY_BYTES, "flow_GBps", r["value"],
                       f"unidirectional P2P writes (p2pBandwidthLatencyTest assumed, as the page's other matrices); {SAMPLE_DEFAULT}")
            else:
                s.emit(line, m, "latency", f"{i}>{j}", 16, "latency_us", r["value"],
                       "p2pBandwidthLatencyTest P2P=Enabled write latency, GPU timer")
        elif t == "p2pmark_read_latency_128B":
            s.exclude(line, P2PMARK_LATENCY)
        elif t == "p2pmark_scores":
            n = 4 if key.startswith("4 GPU") else 8
            if col == "pcie_link_score":
                rate = number_in(s, line, "note", r"link ([\d.]+) GB/s", r["note"])
                single_reader(s, line, m, n, rate, f"rate from the row's note (page: '{r['value']} ({rate} GB/s)')"
                              + ("; GPUs 0-3 assumed" if n == 4 else ""))
            elif col == "interconnect_score":
                s.exclude(line, P2PMARK_RATIO)
            elif col == "all_to_all_GBps":
                all_pairs(s, line, m, n, r["value"], ("GPUs 0-3 assumed; " if n == 4 else "") + r["note"])
            else:
                s.fail(line, "col_key", "expected a p2pmark score column")
        elif t == "topology_probe_8gpu_staggered_reads":
            staggered(s, line, r, m)
        elif t == "allreduce_bf16_tp4_sglang_autotune":
            allreduce_table(s, line, r, m, 4, "nccl_us", ("custom_oneshot_us",),
                            "NCCL time per call from SGLang's startup auto-tune (includes its overhead), bf16, TP=4; "
                            "GPUs not named: 0-3 assumed")
        elif t == "multi_flow_scaling":
            if col == "per_flow":
                s.exclude(line, "per_flow = total / flows of the same run (the total is kept)")
            elif key.startswith("1 flows: PIX"):
                s.emit(line, m, "uni", "0>1", None, "flow_GBps", r["value"],
                       "multi-flow scaling, 1 flow within a leaf switch (pair not stated: 0>1 stands for any); tool and size not stated")
            elif key.startswith("2 flows: PIX (diff leaf"):
                s.emit(line, m, "flows", "0>1;2>3", None, "sum_GBps", r["value"],
                       "multi-flow scaling, 2 flows each within its own leaf switch (pairs not stated: 0>1 and 2>3 "
                       "stand for any); tool and size not stated")
            elif key.startswith("56 flows"):
                s.emit(line, m, "all_pairs", pairs(range(8)), None, "sum_GBps", r["value"],
                       "multi-flow scaling, all 56 ordered pairs at once; tool and size not stated (p2pmark's all-pairs gives 196)")
            else:
                s.exclude(line, ambiguous)
        elif t in ("ds_port_isolation", "two_flow_patterns"):
            flows = ";".join(gpu_pair(s, line, f) for f in key.split(" + "))
            if t == "two_flow_patterns" and col not in ("write", "read"):
                s.fail(line, "col_key", "expected write or read")
            how = {"write": "P2P writes", "read": "P2P reads (the destinations pull; data flow as labelled)"}.get(col, "")
            s.emit(line, m, "flows", flows, None, "sum_GBps", r["value"],
                   "; ".join(x for x in (how, r["note"], "tool and size not stated") if x))
        elif t == "uplink_degradation":
            flow = {"PIX": "0>1", "PXB": "0>2", "NODE": "0>4"}.get(key.split()[0])
            if flow is None or col not in ("uplinks_Gen5", "uplinks_Gen2"):
                s.fail(line, "row_key", "expected PIX/PXB/NODE rows and uplinks_Gen5/uplinks_Gen2 columns")
            gen2 = col == "uplinks_Gen2"
            s.emit(line, m + ("_gen2up" if gen2 else ""), "uni", flow, None, "flow_GBps", r["value"],
                   f"single flow, {key} (pair not stated: {flow} stands for it"
                   + ("; the page names GPU0->GPU4 for cross-root traffic)" if flow == "0>4" else ")")
                   + ("; CPU root-port uplinks forced to Gen2" if gen2 else "") + "; tool and size not stated")
        else:
            s.fail(line, "table", f"unexpected table '{t}'")


def overview(s):
    m = "rtxpro6000bw_x8_festr_turin"
    other = ("a system whose topology the page does not describe (orangezed, luke, Grimulkan: switch tree or GPU "
             "placement not stated), or a summary cell of purplepow3r's excluded box")
    restated = "voipmonitor's Broadcom box: a '~' summary of rtxpro6000bw_x8_broadcom_pex890xx.csv, kept there"
    for line, r in s.rows:
        t, key, col, value = r["table"], r["row_key"], r["col_key"], r["value"]
        festr = key.startswith("Festr")
        if t.startswith("purplepow3r"):
            s.exclude(line, "purplepow3r's 6-device box mixes 4 RTX PRO 6000 WS and 2 RTX 5090 (which device is which is "
                            "not stated) and the stated NUMA split (0-2 | 3-5) contradicts the matrix (only device 3 is slower)")
        elif t == "uni_p2p_write_by_system" and festr and col == "same_NUMA":
            s.emit(line, m, "uni", "0>1", None, "flow_GBps", value,
                   "approx ('~' as published); summary table, a same-NUMA pair (not stated: 0>1 stands for any), "
                   "P2P writes (p2pBandwidthLatencyTest or p2pmark, not stated)")
        elif t == "p2pmark_8gpu" and festr and col == "pcie_link_score":
            single_reader(s, line, m, 8, number_in(s, line, "value", r"\(([\d.]+) GB/s\)", value), f"page: '{value}'")
        elif t in ("p2pmark_8gpu", "p2pmark_4gpu") and festr and col.startswith("interconnect_score"):
            n = 8 if t.endswith("8gpu") else 4
            all_pairs(s, line, m, n, number_in(s, line, "value", r"\(([\d.]+) /", value),
                      f"page: '{value}'" + ("; GPUs 0-3 (one NUMA node) assumed" if n == 4 else ""))
        elif t.startswith("p2pmark_") and festr:
            s.exclude(line, P2PMARK_LATENCY if col == "effective_latency" else P2PMARK_RATIO)
        elif t == "nccl_allreduce_busbw_8gpu" and festr and col == "32M fixed":
            s.emit(line, m, "all_reduce", group(8), 32 * 1024 ** 2, "busbw_GBps", value,
                   "nccl-tests all_reduce_perf -b 32M -g 8, NCCL config 'Default' as tabulated")
        elif t == "nccl_allreduce_busbw_8gpu" and "Sweep" in col:
            s.exclude(line, "one number for a size sweep (8M-2G): the average or the peak, not stated")
        elif t == "cross_gpu_latency":
            s.exclude(line, "summary of latency matrices across systems (ranges, system not named)")
        elif t == "allreduce_custom_vs_nccl_luke":
            s.exclude(line, "luke's switch system: GPU count and switch tree not stated on this page")
        elif t in ("uni_p2p_write_by_system", "bidir_p2p_by_system", "p2pmark_8gpu", "p2pmark_4gpu",
                   "nccl_allreduce_busbw_8gpu"):
            s.exclude(line, restated if key.startswith("voipmonitor") else other)
        else:
            s.fail(line, "table", f"unexpected table '{t}'")


def v100(s):
    for line, r in s.rows:
        allreduce_table(s, line, r, "v100sxm2x4_plx", 4, "nccl_PXB_us", ("oneshot_push_us",),
                        "NCCL all-reduce, 4 ranks, fp16, timed inside a CUDA graph")


def deepep(s):
    m = "deepep_h800_cx7"
    for line, r in s.rows:
        t, key, col = r["table"], r["row_key"], r["col_key"]
        if t == "v2_elastic":
            s.exclude(line, "DeepEP V2 table: 'logical bandwidth' counting local-rank traffic (not V1's bottleneck "
                            "bandwidth), the SM90 GPU is not named and SM100 rows are Blackwell nodes; cells are text")
            continue
        ep = int(number_in(s, line, "row_key", r"EP(\d+)", key))
        kind = "dispatch" if col.startswith("dispatch") else "combine"
        if t == "v1_normal_kernels":
            s.emit(line, m, f"ep_{kind}", group(ep), None, "bottleneck_GBps", r["value"],
                   f"DeepEP V1 normal kernels, bytes over the bottleneck link per GPU / time; link: {r['note']}")
        elif t == "v1_low_latency_kernels":
            metric = "time_us" if col.endswith("latency") else "rdma_GBps"
            extra = ("; above the ~50 GB/s of one NIC the README states, so it counts traffic that does not cross the NIC"
                     if metric == "rdma_GBps" and float(r["value"]) > 50 else "")
            s.emit(line, m, f"ep_ll_{kind}", group(ep), None, metric, r["value"],
                   f"DeepEP V1 low-latency kernels (all traffic over RDMA, EP8 too); {r['note']}{extra}".rstrip("; "))
        else:
            s.fail(line, "table", f"unexpected table '{t}'")


def roce(s):
    m = "h100x16_8x400g_roce"
    rows = {
        "all_reduce_perf, 16 ranks x 8 rails, 1 GiB": ("all_reduce", group(16), 1024 ** 3, ""),
        "all_reduce_perf, 16 ranks x 8 rails, 8 GiB": ("all_reduce", group(16), 8 * 1024 ** 3, ""),
        "sendrecv_perf, 2 ranks, 1 rail, 1 GiB": ("sendrecv", "0,8", 1024 ** 3,
                                                  "one rank per node on one rail (GPU 0 of each node assumed); "
                                                  "nccl-tests sendrecv busbw = algbw"),
        "all_gather_perf, 256 MiB": ("all_gather", group(16), 256 * 1024 ** 2, "16 ranks assumed (as the all_reduce rows)"),
        "reduce_scatter_perf, 256 MiB": ("reduce_scatter", group(16), 256 * 1024 ** 2, "16 ranks assumed (as the all_reduce rows)"),
        "alltoall_perf, 256 MiB": ("alltoall", group(16), 256 * 1024 ** 2, "16 ranks assumed (as the all_reduce rows)"),
    }
    for line, r in s.rows:
        if r["table"] == "context":
            s.exclude(line, "context, not a GPU transfer: a host perftest line rate, or the poster's expectation")
            continue
        if r["row_key"] not in rows:
            s.fail(line, "row_key", "unexpected summary row")
        pattern, transfers, nbytes, note = rows[r["row_key"]]
        s.emit(line, m, pattern, transfers, nbytes, "busbw_GBps", r["value"],
               "; ".join(x for x in ("nccl-tests, NCCL 2.31.2 (summary table of NVIDIA/nccl#2409); poster: ~13 GB/s per "
                                     "GPU<->GPU connection, a mis-tuned fabric", note, r["note"]) if x))


def a3mega(s):
    for line, r in s.rows:
        if r["collective"] != "all_reduce_perf" or r["n_gpus"] != "16":
            s.fail(line, "collective", "expected all_reduce_perf over 16 GPUs")
        for col, place in (("time_oop_us", "out-of-place"), ("time_ip_us", "in-place")):
            s.emit(line, "h100x16_a3mega", "all_reduce", group(16), int(r["size_bytes"]), "time_us", r[col],
                   f"nccl-tests all_reduce_perf, float sum, {place}; a hierarchical collective (NVLink in the node, NICs across)")


HANDLERS = {
    "a100pcie80x4_nvbridge_pairs_sys.csv": a100pcie,
    "deepep_h800_cx7_ep_alltoall.csv": deepep,
    "h100x16_8x400g_roce_nccl2409_summary.csv": roce,
    "h100x16_a3mega_2node_allreduce.csv": a3mega,
    "rtx3090x8_nccl1127_noP2P.csv": rtx3090x8,
    "rtx4090_container_allreduce_kalavai.csv": kalavai,
    "rtx4090x2_trpro_p2p_driver525.csv": rtx4090x2,
    "rtx4090x3_tinygrad6_bidir.csv": rtx4090x3,
    "rtx4090x6_nccl814_p2p_broken.csv": rtx4090x6,
    "rtxpro6000bw_pcie_systems_overview.csv": overview,
    "rtxpro6000bw_x8_broadcom_pex890xx.csv": broadcom,
    "rtxpro6000bw_x8_cpayne_switchtec.csv": cpayne,
    "tinybox_4090x6_p2p_patched.csv": tinybox,
    "titanrtx_x8_lambda_noP2P.csv": titanrtx,
    "v100sxm2x4_plx_allreduce_small.csv": v100,
}
