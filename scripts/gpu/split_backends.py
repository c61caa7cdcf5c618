#!/usr/bin/env python3
"""Selects one backend's rows of scripts/gpu/sdpa_curves.py's measurements into a file of its own,
for `ringsim calibrate --from-kernels` (which fits one kernel family per file). Rows are copied as
measured; decode rows (forward only) stay out. Usage:
  python3 scripts/gpu/split_backends.py OUT.csv BACKEND MEASURED.csv [MEASURED.csv ...]"""
import csv
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, backend, sources = sys.argv[1], sys.argv[2], sys.argv[3:]
    comments, header, rows = [], None, []
    for path in sources:
        with open(path, newline="") as fh:
            lines = fh.read().splitlines()
        comments += [l for l in lines if l.startswith("#")]
        body = list(csv.reader(l for l in lines if not l.startswith("#")))
        if header is None:
            header = body[0]
        elif body[0] != header:
            sys.exit(f"{path}: columns differ from {sources[0]}")
        b, g = header.index("backend"), header.index("group")
        rows += [r for r in body[1:] if r[b] == backend and r[g] != "decode"]
    if not rows:
        sys.exit(f"no rows of backend {backend}")
    with open(out, "w", newline="") as fh:
        fh.write(f"# The {backend} backend's rows (forward and backward; decode rows left out) of "
                 f"{', '.join(sources)}, selected by scripts/gpu/split_backends.py, copied as measured.\n")
        for c in dict.fromkeys(comments):
            fh.write(c + "\n")
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


if __name__ == "__main__":
    main()
