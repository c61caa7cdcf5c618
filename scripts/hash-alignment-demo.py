#!/usr/bin/env python3
"""Bucket files (hashfile:PATH) that isolate why SCFA's range rule visits whole bucket runs on
striped blocks (docs/sparse-ring-study.md). One head, n = N * c tokens; on striped device d
(positions l * N + d) every bucket holds exactly c / nb tokens in `aligned.csv` (a multiple of
the 128-token tile for the defaults: no key tile straddles two buckets), and c / nb +- 1 in
`offby1.csv` (every other bucket end falls inside a tile). Queries and keys draw independent
shuffles. Deterministic (seeded).
Usage: scripts/hash-alignment-demo.py OUT_DIR [N] [c] [nb]
"""
import os
import random
import sys


def write(path, qb, kb):
    with open(path, "w") as f:
        f.write("head,position,q_bucket,k_bucket\n")
        for p, (q, k) in enumerate(zip(qb, kb)):
            f.write(f"0,{p},{q},{k}\n")


def side(rng, n_dev, c, sizes):
    b = [0] * (n_dev * c)
    for d in range(n_dev):
        ids = [g for g, s in enumerate(sizes) for _ in range(s)]
        rng.shuffle(ids)
        for l, g in enumerate(ids):
            b[l * n_dev + d] = g
    return b


def main():
    out = sys.argv[1]
    n_dev = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    c = int(sys.argv[3]) if len(sys.argv) > 3 else 32768
    nb = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    if c % nb or nb % 2:
        sys.exit("c must be a multiple of nb, and nb even")
    rng = random.Random(7)
    even = [c // nb] * nb
    odd = [c // nb + (1 if g % 2 == 0 else -1) for g in range(nb)]
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, "aligned.csv"), side(rng, n_dev, c, even), side(rng, n_dev, c, even))
    write(os.path.join(out, "offby1.csv"), side(rng, n_dev, c, odd), side(rng, n_dev, c, odd))


if __name__ == "__main__":
    main()
