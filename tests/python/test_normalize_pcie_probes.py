"""Tests of scripts/normalize-pcie-probes.py and the machine files it names (data/components/machines/):
the committed CSV is what the script writes; every raw row is kept or excluded; every kept value is
the published text of its raw line; every row's machine has a file whose GPUs cover the row's
transfers; every free path names a sourced figure of that file; and a raw file with a row no handler
maps fails with one located line and exit 2, writing nothing.

Standard library only; `python3 -m unittest tests/python/test_normalize_pcie_probes.py`.
"""
import csv
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "normalize-pcie-probes.py")
RAW = os.path.join(ROOT, "data", "components", "links", "pcie")
CSV = os.path.join(ROOT, "data", "components", "links", "pcie_probes.csv")
MACHINES = os.path.join(ROOT, "data", "components", "machines")
sys.path.insert(0, os.path.join(ROOT, "scripts"))


def load_script():
    spec = importlib.util.spec_from_file_location("normalize_pcie_probes", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows():
    with open(CSV, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def machines():
    out = {}
    for name in sorted(os.listdir(MACHINES)):
        if name.endswith(".json"):
            with open(os.path.join(MACHINES, name)) as f:
                out[name[:-len(".json")]] = json.load(f)
    return out


def resolve(doc, path):
    """The object at a dotted path with [index] steps ('machine.switches[0].uplink.bytes_per_s'), or None."""
    cur = doc
    for part in path.split("."):
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?", part)
        if not m or not isinstance(cur, dict) or m.group(1) not in cur:
            return None
        cur = cur[m.group(1)]
        if m.group(2) is not None:
            if not isinstance(cur, list) or int(m.group(2)) >= len(cur):
                return None
            cur = cur[int(m.group(2))]
    return cur


def devices(row):
    """The device indices a row's transfers name."""
    if row["pattern"] in ("uni", "bidir", "latency", "flows", "staggered", "single_reader", "all_pairs"):
        return [int(d) for t in row["transfers"].split(";") for d in t.split(">")]
    return [int(d) for d in row["transfers"].split(",")]


class Regenerate(unittest.TestCase):
    def test_the_committed_csv_is_what_the_script_writes(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "pcie_probes.csv")
            r = subprocess.run([sys.executable, SCRIPT, "--out", out], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, "rb") as a, open(CSV, "rb") as b:
                self.assertEqual(a.read(), b.read(), "run python3 scripts/normalize-pcie-probes.py and commit the result")

    def test_every_raw_row_is_kept_or_excluded_never_both(self):
        sheets = load_script().normalize(RAW)
        self.assertEqual(len(sheets), len([n for n in os.listdir(RAW) if n.endswith(".csv")]))
        for s in sheets:
            lines = {line for line, _ in s.rows}
            self.assertEqual(s.used | set(s.excluded), lines, s.name)
            self.assertFalse(s.used & set(s.excluded), s.name)
            self.assertTrue(all(reason for reason in s.excluded.values()), s.name)

    def test_every_value_is_the_published_text_of_its_line(self):
        for row in rows():
            name, line = re.fullmatch(r"(.+):L(\d+)", row["source"]).groups()
            with open(os.path.join(RAW, name), newline="") as f:
                text = f.readlines()[int(line) - 1]
            self.assertRegex(text, r"(?<![\d.])~?" + re.escape(row["value"]) + r"(?![\d.])", row["source"])
            self.assertGreater(float(row["value"]), 0, row["source"])


class Machines(unittest.TestCase):
    def test_every_row_has_a_machine_file_and_every_file_rows(self):
        files = machines()
        used = {r["machine"] for r in rows()}
        self.assertEqual(sorted(used - set(files)), [], "rows whose machine has no file")
        self.assertEqual(sorted(set(files) - used), [], "machine files without rows")
        for name, doc in files.items():
            self.assertEqual(doc["name"], name)

    def test_every_transfer_is_a_device_of_its_machine(self):
        files = machines()
        for row in rows():
            doc = files[row["machine"]]
            n = doc["gpus"]["value"] * doc["nodes"]["value"]
            ds = devices(row)
            self.assertTrue(all(0 <= d < n for d in ds), f"{row['source']}: {row['transfers']} outside {n} devices")
            if ">" in row["transfers"]:
                self.assertTrue(all(a != b for a, b in (t.split(">") for t in row["transfers"].split(";"))), row["source"])

    def test_every_free_path_names_a_sourced_figure(self):
        for name, doc in machines().items():
            for entry in doc["free"]:
                group = [entry] if isinstance(entry, str) else entry
                self.assertTrue(group, name)
                values = set()
                for path in group:
                    fig = resolve(doc, path)
                    self.assertIsInstance(fig, dict, f"{name}: {path}")
                    self.assertIsInstance(fig.get("value"), (int, float), f"{name}: {path}")
                    self.assertTrue(fig.get("source"), f"{name}: {path}")
                    values.add(fig["value"])
                # A tied group starts from one value.
                self.assertEqual(len(values), 1, f"{name}: {group}")

    def test_machine_blocks_have_what_machine_spec_parse_requires(self):
        # The checks of models/hardware/machine.cpp MachineSpec::parse that the files could break.
        for name, doc in machines().items():
            m = doc["machine"]
            if m["fabric"] == "nvswitch":
                self.assertIn("nvlink_port", doc, name)
                continue
            gpus = doc["gpus"]["value"]
            switches = {s["name"]: s for s in m["switches"]}
            self.assertEqual(len(m["gpu_parents"]), gpus, name)
            for parent in m["gpu_parents"] + [s["parent"] for s in m["switches"]]:
                self.assertTrue(parent in switches or re.fullmatch(r"socket\d{1,3}", parent), f"{name}: {parent}")
            for link in [m["gpu_link"]] + [s["uplink"] for s in m["switches"]] + ([m["socket_link"]] if "socket_link" in m else []):
                if "duplex_bytes_per_s" in link:
                    one, both = link["bytes_per_s"]["value"], link["duplex_bytes_per_s"]["value"]
                    self.assertTrue(one <= both <= 2 * one, f"{name}: duplex {both} outside [{one}, {2 * one}]")
            sockets = {p for p in m["gpu_parents"] + [s["parent"] for s in m["switches"]] if p.startswith("socket")}
            if len(sockets) > 1 or sockets - {"socket0"}:
                self.assertIn("socket_link", m, name)
            peer = m["peer_access"]["value"]
            self.assertIn("p2p_latency_s" if peer else "staged_latency_s", m, name)


class BadInput(unittest.TestCase):
    def test_an_unmapped_row_fails_with_its_file_and_line_and_writes_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            raw = os.path.join(tmp, "raw")
            shutil.copytree(RAW, raw)
            path = os.path.join(raw, "v100sxm2x4_plx_allreduce_small.csv")
            with open(path) as f:
                count = len(f.readlines())
            with open(path, "a") as f:
                f.write("allreduce_fp16_4ranks_cudagraph,4 KB,mystery_us,1.0,us,\n")
            out = os.path.join(tmp, "out.csv")
            r = subprocess.run([sys.executable, SCRIPT, "--raw", raw, "--out", out], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertIn(f"v100sxm2x4_plx_allreduce_small.csv:{count + 1}:", r.stderr)
            self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
