#!/usr/bin/env python3
"""Turn the published PCIe and multi-NIC probes into one CSV of probe rows per probed machine.

Input: data/components/links/pcie/*.csv (byte-for-byte copies of the published probes; each file's
'#' header names its source and caveats). Output: data/components/links/pcie_probes.csv with
'#' header lines (generated-by, source, conventions, every exclusion and why) and the columns
  machine,source,pattern,transfers,bytes,metric,value,note
one row per published number that a machine of data/components/machines/ can describe.
`ringsim calibrate --from-machine-probes` fits each machine's free capacities to its rows.

What each raw file becomes is in scripts/pcie_probe_sources.py (one handler per file); every raw
data row is either kept or excluded with a reason, else the script fails. Standard library only;
the output is deterministic. Bad input: one line on stderr (file:line: field: what was expected),
exit 2, and no output file is written (the CSV is written to a temporary and renamed).

usage: python3 scripts/normalize-pcie-probes.py [--raw DIR] [--out FILE]
"""
import argparse
import csv
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pcie_probe_sheet import COLUMNS, CPU_TIMER, DIAGONAL, InputError, Sheet  # noqa: E402
from pcie_probe_sources import HANDLERS  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RAW = os.path.join("data", "components", "links", "pcie")
OUT = os.path.join("data", "components", "links", "pcie_probes.csv")

CONVENTIONS = """\
# Probe rows of PCIe and multi-NIC machines for `ringsim calibrate --from-machine-probes` (issue 51).
# generated-by: python3 scripts/normalize-pcie-probes.py (standard library, deterministic); do not edit by hand
# source: data/components/links/pcie/*.csv (byte-for-byte copies of the published probes; sources, setups and
#   caveats in each file's '#' header and data/components/links/pcie/README.md); machines: data/components/machines/
# columns:
#   machine   = data/components/machines/<machine>.json: one physical configuration and driver state
#   source    = raw file and line (file.csv:L12)
#   pattern   = uni (one transfer) | bidir (a pair both ways at once) | latency (one small copy) | flows (the listed
#               transfers at once) | staggered (p2pmark: every GPU i reads from GPU i+d at once) | single_reader
#               (p2pmark: one GPU reads from all peers at once) | all_pairs (every ordered pair at once) | all_reduce |
#               all_gather | reduce_scatter | alltoall | sendrecv (NCCL) | oneshot_all_reduce (a custom one-shot
#               kernel, not NCCL) | ep_dispatch, ep_combine, ep_ll_dispatch, ep_ll_combine (DeepEP's kernels)
#   transfers = point-to-point patterns: the transfers that run at once, src>dst joined by ';' (data direction; GPU
#               indices of the machine, multi-node device = node * gpus + gpu); collectives: the group's devices in
#               rank order, comma-separated
#   bytes     = bytes per transfer (collectives: nccl-tests' size_bytes, the buffer per rank); empty where the source
#               does not state it (rate rows: fit them as steady rates)
#   metric    = flow_GBps (rate of the first transfer listed) | sum_GBps (sum over the listed transfers) | latency_us
#               (one transfer) | time_us (one collective call) | busbw_GBps (nccl-tests bus bandwidth) |
#               bottleneck_GBps (DeepEP: bytes over the bottleneck link per GPU / time) | rdma_GBps (DeepEP low-latency
#               kernels: RDMA bytes per GPU / time)
#   value     = as published (a leading '~' is dropped and the note says 'approx'); note = how it was measured, the
#               raw file's flags (PARTIAL, INFERRED, approx) and the assumptions made for this row
# units: GB/s = 1e9 B/s in p2pBandwidthLatencyTest (NVIDIA/cuda-samples p2pBandwidthLatencyTest.cu), p2pmark
#   (lukealonso/p2pmark@3c39f36 p2pmark.cu) and nccl-tests; where the tool is not named the note says so and the
#   base is as printed. Message sizes printed as KB/MB/GB are read as 1024-based.
# bytes of p2pBandwidthLatencyTest rows: 160,000,000 (40,000,000 int32, main()'s numElems default since cuda-samples
#   commit e6ce58fe, tag v11.1, 2020; these runs were posted 2023-2026) although the raw headers say 40 MB
#   (10,000,000 int32, the default before v11.1); latency rows copy 4 ints = 16 B. The TITAN run
#   used wohlbier/gpu-micro's modified copy with --nElements=1073741824: 4 GiB per copy.
# collectives: one row per published measurement (time_us where nccl-tests printed the time, out-of-place and
#   in-place separately; busbw_GBps where only the bus bandwidth was published). The NCCL collective time model
#   takes its latencies from NCCL's constants, so all_reduce rows identify bandwidths, not the machine's latencies.
"""


def ranges(lines):
    """[3, 4, 5, 9] -> 'L3-L5,L9'."""
    out, start, prev = [], None, None
    for n in sorted(lines):
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            out.append(f"L{start}" if start == prev else f"L{start}-L{prev}")
            start = prev = n
    if start is not None:
        out.append(f"L{start}" if start == prev else f"L{start}-L{prev}")
    return ",".join(out)


def normalize(raw_dir):
    """The sheets of every raw file, each run through its handler; raises InputError."""
    names = sorted(n for n in os.listdir(raw_dir) if n.endswith(".csv"))
    missing = sorted(set(HANDLERS) - set(names))
    if missing:
        raise InputError(os.path.join(raw_dir, missing[0]), 0, "file", "expected this raw probe file")
    sheets = []
    for name in names:
        if name not in HANDLERS:
            raise InputError(name, 0, "file", "a raw probe file no handler of scripts/pcie_probe_sources.py reads")
        sheet = Sheet(os.path.join(raw_dir, name), name)
        HANDLERS[name](sheet)
        left = sheet.unmapped()
        if left:
            raise InputError(name, left[0], "row", "neither kept nor excluded by its handler")
        sheets.append(sheet)
    return sheets


def render(sheets):
    out = io.StringIO()
    out.write(CONVENTIONS)
    excluded = sum(len(s.excluded) for s in sheets)
    out.write(f"# excluded: {excluded} raw rows, by file and reason (lines of the raw file):\n")
    for s in sheets:
        by_reason = {}
        for line, reason in s.excluded.items():
            by_reason.setdefault(reason, []).append(line)
        for reason, lines in sorted(by_reason.items(), key=lambda kv: min(kv[1])):
            # Diagonal cells and cpu-timer rows say which they are; their line lists would be long.
            where = "" if reason in (DIAGONAL, CPU_TIMER) else f" ({ranges(lines)})"
            out.write(f"#   {s.name}: {len(lines)} row{'s' if len(lines) > 1 else ''}{where}: {reason}\n")
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for s in sheets:
        writer.writerows(s.emitted)
    return out.getvalue()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--raw", default=os.path.join(ROOT, RAW), help="folder of the raw probe CSVs")
    ap.add_argument("--out", default=os.path.join(ROOT, OUT), help="the normalized CSV to write")
    args = ap.parse_args(argv)
    try:
        text = render(normalize(args.raw))
    except InputError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    except OSError as e:
        sys.stderr.write(f"{e.filename}: 0: file: {e.strerror}\n")
        return 2
    tmp = args.out + ".tmp"
    with open(tmp, "w", newline="") as f:
        f.write(text)
    os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
