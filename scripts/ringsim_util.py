"""Helpers the calibration scripts share (validation.py, fit_collective_host.py): running a
command from the repository root, and reading the data/ CSVs whose comment lines start with '#'."""
import csv
import io
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def run(args):
    """The command's standard output; on a non-zero exit its command line and output go to
    standard error and the script exits 1 (a half-done fit is never written)."""
    r = subprocess.run(list(args), cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(" ".join(args) + "\n" + (r.stdout or "") + (r.stderr or ""))
        sys.exit(1)
    return r.stdout


def read_csv(path_or_text, is_text=False):
    """The rows of a CSV (a path, or the text itself) as dicts, blank and '#' lines skipped."""
    if is_text:
        lines = io.StringIO(path_or_text).readlines()
    else:
        with open(path_or_text, newline="") as f:
            lines = f.readlines()
    return list(csv.DictReader(l for l in lines if l.strip() and not l.startswith("#")))
