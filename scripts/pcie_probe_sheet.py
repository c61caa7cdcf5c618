"""One raw probe file of data/components/links/pcie/ as a sheet of numbered rows, and the normalized
rows made from it (scripts/normalize-pcie-probes.py writes them; pcie_probe_sources.py says, file by
file, what each raw row becomes).

Every data row of a raw file is either turned into one or more normalized rows or excluded with a
reason; a row that is neither is an error, so a raw file that gains rows cannot be half read.
Standard library only.
"""
import csv
import math
import re

# p2pBandwidthLatencyTest's copy sizes (NVIDIA/cuda-samples, Samples/5_Domain_Specific/
# p2pBandwidthLatencyTest/p2pBandwidthLatencyTest.cu): since commit e6ce58fe (2020-06-30, first in
# tag v11.1) main() defaults numElems to 40,000,000 int32 = 160 MB per bandwidth copy (it was
# 10,000,000 = 40 MB before); the latency test copies numElems = 4 ints = 16 B ("1-int4 transfer");
# GB/s there is bytes / 1e9 / s.
SAMPLE_COPY_BYTES = 40_000_000 * 4
SAMPLE_LATENCY_BYTES = 16
# lukealonso/p2pmark @ 3c39f36 (p2pmark.cu): TRANSFER_SIZE = 64 * 1024 * 1024 per cudaMemcpyPeerAsync,
# GB/s = bytes / 1e9 / s.
P2PMARK_BYTES = 64 * 1024 * 1024

COLUMNS = ["machine", "source", "pattern", "transfers", "bytes", "metric", "value", "note"]


class InputError(Exception):
    """A raw file that is not what its handler expects: file, line, field and what was expected."""

    def __init__(self, file, line, field, message):
        super().__init__(f"{file}:{line}: {field}: {message}")


class Sheet:
    """The data rows of one raw CSV (comment lines start with '#'; the first other line is the
    header), each with its 1-based line number in the file."""

    def __init__(self, path, name):
        self.name = name
        self.rows = []  # (line number, {column: text})
        self.emitted = []  # normalized rows, in the order made
        self.used = set()
        self.excluded = {}  # line number -> reason
        header = None
        with open(path, newline="") as f:
            for number, text in enumerate(f, start=1):
                if not text.strip() or text.startswith("#"):
                    continue
                cells = next(csv.reader([text]))
                if header is None:
                    header = cells
                    continue
                if len(cells) != len(header):
                    raise InputError(name, number, "row", f"expected {len(header)} cells as the header names, got {len(cells)}")
                self.rows.append((number, dict(zip(header, cells))))
        if header is None:
            raise InputError(name, 0, "header", "expected a CSV header line after the '#' comments")
        self.header = header

    def fail(self, line, field, message):
        raise InputError(self.name, line, field, message)

    def exclude(self, line, reason):
        self.excluded[line] = reason

    def emit(self, line, machine, pattern, transfers, nbytes, metric, value, note):
        """A normalized row from raw line `line`; `value` is the published text (a leading '~'
        is dropped and said in the note)."""
        text = value.strip()
        approx = text.startswith("~")
        if approx:
            text = text[1:].strip()
        try:
            number = float(text)
        except ValueError:
            self.fail(line, "value", f"expected a number as published, got '{value}'")
        if not math.isfinite(number) or number <= 0:
            self.fail(line, "value", f"expected a positive finite number, got '{value}'")
        notes = [n for n in (("approx ('~' as published)" if approx else ""), note) if n]
        self.emitted.append({
            "machine": machine, "source": f"{self.name}:L{line}", "pattern": pattern, "transfers": transfers,
            "bytes": "" if nbytes is None else str(int(nbytes)), "metric": metric, "value": text,
            "note": "; ".join(notes)})
        self.used.add(line)

    def unmapped(self):
        return [line for line, _ in self.rows if line not in self.used and line not in self.excluded]


def group(n, first=0):
    """The devices of a collective in rank order: "0,1,...,n-1"."""
    return ",".join(str(d) for d in range(first, first + n))


def pairs(devices):
    """Every ordered pair of distinct devices at once: "a>b;..."."""
    return ";".join(f"{a}>{b}" for a in devices for b in devices if a != b)


def number_in(sheet, line, field, pattern, text):
    """The number a published text cell holds where `pattern`'s group 1 finds it."""
    m = re.search(pattern, text)
    if not m:
        sheet.fail(line, field, f"expected text matching {pattern!r}, got '{text}'")
    return m.group(1)


def size_bytes(sheet, line, text):
    """A message size as the pages print it ('256B', '4 KB', '32MB'); KB/MB/GB read as 1024-based
    (the benchmarks size their buffers in powers of two; the pages do not say)."""
    m = re.fullmatch(r"(\d+)\s*(B|KB|MB|GB)", text.strip())
    if not m:
        sheet.fail(line, "size", f"expected a size like '4 KB' or '32MB', got '{text}'")
    return int(m.group(1)) * {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}[m.group(2)]


def gpu_pair(sheet, line, text):
    """'GPU0->GPU4' (or 'GPU0->GPU2 (same source GPU)') -> '0>4'."""
    m = re.fullmatch(r"GPU(\d+)->GPU(\d+)(?:\s*\(.*\))?", text.strip())
    if not m:
        sheet.fail(line, "flow", f"expected 'GPUa->GPUb', got '{text}'")
    return f"{m.group(1)}>{m.group(2)}"


DIAGONAL = "diagonal cell: a local device-to-device copy, not a link"
CPU_TIMER = ("latency_timer=cpu: the host's time to enqueue the copies while the stream is held by the "
             "sample's delay kernel (p2pBandwidthLatencyTest outputLatencyMatrix), not a transfer's latency; "
             "the gpu-timer matrix of the same run is kept")
TOPOLOGY = "nvidia-smi topo -m label, not a measurement: used for the machine file's topology"


def p2p_matrix(sheet, plan, copy_bytes, copy_note, rows=None):
    """The rows of a p2pBandwidthLatencyTest file (run,test,latency_timer,row_gpu,col_gpu,value,unit,flag).

    `plan(row)` returns (machine, note) for a row to keep or (None, reason) for one to exclude.
    Write mode: the row GPU copies to the column GPU; read mode (`*_reads`): the row GPU pulls from
    the column GPU, so the data flow column -> row. Bidirectional cells time both directions at
    once and print their sum; latency cells are one copy of SAMPLE_LATENCY_BYTES. `rows`: the
    sheet's rows that are matrix cells (default: all of them).
    """
    for line, r in sheet.rows if rows is None else rows:
        if r["run"] == "topology":
            sheet.exclude(line, TOPOLOGY)
            continue
        test, timer = r["test"], r["latency_timer"]
        try:
            i, j = int(r["row_gpu"]), int(r["col_gpu"])
        except ValueError:
            i = j = None
        machine, note = plan(r)
        if machine is None and note is None:
            sheet.fail(line, "run", f"unexpected run '{r['run']}' / test '{test}'")
        if i is not None and i == j:
            sheet.exclude(line, DIAGONAL)
            continue
        if machine is None:
            sheet.exclude(line, note)
            continue
        if i is None:
            sheet.fail(line, "row_gpu", "expected GPU indices")
        if test.startswith("latency") and timer == "cpu":
            sheet.exclude(line, CPU_TIMER)
            continue
        flag = r["flag"].strip()
        notes = [f"p2pBandwidthLatencyTest {test}" + (f" ({timer} timer)" if timer else ""), note]
        if flag:
            notes.append(f"flag: {flag}")
        reads = test.endswith("_reads")
        if reads:
            notes.append("P2P reads: the row GPU pulls from the column GPU")
        flow = f"{j}>{i}" if reads else f"{i}>{j}"
        if test.startswith("uni_"):
            expect, pattern, transfers, metric, nbytes = "GB/s", "uni", flow, "flow_GBps", copy_bytes
            notes.append(copy_note)
        elif test.startswith("bidir_"):
            expect, pattern, transfers, metric, nbytes = "GB/s", "bidir", f"{i}>{j};{j}>{i}", "sum_GBps", copy_bytes
            notes.append(copy_note)
        elif test.startswith("latency_"):
            expect, pattern, transfers, metric, nbytes = "us", "latency", flow, "latency_us", SAMPLE_LATENCY_BYTES
        else:
            sheet.fail(line, "test", f"expected a uni_*, bidir_* or latency_* matrix, got '{test}'")
        if r["unit"] != expect:
            sheet.fail(line, "unit", f"expected '{expect}' for {test}, got '{r['unit']}'")
        sheet.emit(line, machine, pattern, transfers, nbytes, metric, r["value"], "; ".join(n for n in notes if n))
