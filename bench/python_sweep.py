#!/usr/bin/env python3
"""A sweep of 10^5 scenarios from Python against the same sweep from the CLI (issue 28: Python
runs at the CLI's rate). Not a test: it prints the two wall times and checks the rows are equal.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_sweep.py build/cli/ringsim [THREADS]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import ringsim

GRID = {"hardware": ["a100-80gb", "h100-sxm"], "model": ["llama3-8b", "llama2-7b"],
        "mesh": ["1x8", "2x4", "4x2", "1x16", "2x8"], "dp": [1, 2, 4, 8], "cp": ["ring", "allgather", "ulysses"],
        "n_seq": [16384 * k for k in range(1, 11)], "layout": ["contiguous", "striped", "zigzag"],
        "zero": [0, 1, 2, 3], "recompute": ["selective", "full"], "batch": [1, 2], "intervals": False}


def main():
    cli, threads = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0
    with tempfile.TemporaryDirectory() as d:
        grid = os.path.join(d, "grid.json")
        with open(grid, "w") as f:
            json.dump(GRID, f)
        out = os.path.join(d, "out.csv")
        t0 = time.perf_counter()
        subprocess.run([cli, "sweep", grid, "-o", out, "--threads", str(threads)], check=True)
        t_cli = time.perf_counter() - t0
        t0 = time.perf_counter()
        frame = ringsim.sweep(GRID, threads=threads)
        t_py = time.perf_counter() - t0
        # The same sweep's CSV text alone (the C++ part), without the DataFrame.
        t0 = time.perf_counter()
        text = ringsim._core.sweep_csv(json.dumps(GRID), threads)
        t_core = time.perf_counter() - t0
        with open(out) as f:
            csv = "".join(l for l in f if not l.startswith("#"))
        rows, same = csv.count("\n") - 1, csv == text
    print("%d points: CLI %.2f s (%.0f rows/s); Python sweep() to a DataFrame %.2f s (%.0f rows/s, %.2fx the CLI's "
          "time), of which the rows %.2f s (%.2fx); rows equal to the CLI's byte for byte: %s"
          % (len(frame), t_cli, rows / t_cli, t_py, len(frame) / t_py, t_py / t_cli, t_core, t_core / t_cli, same))


if __name__ == "__main__":
    main()
