#!/usr/bin/env bash
# Sparse masks on a ring: per (ring size, tile, mask, layout) the per-round imbalance
# (max/mean, averaged over rounds), total visited tiles (ringsim workload, summed over rounds,
# devices and heads) and the attention forward+backward speedup over dense causal Ring
# Attention (contiguous layout) under the a100-40gb-scfa profile. Markdown on stdout.
# Usage: scripts/sparse-ring-study.sh [path/to/ringsim] [model] [tokens per device]
set -euo pipefail
bin=${1:-build/cli/ringsim}
model=${2:-attn:8:8:64}
per_dev=${3:-32768}
layouts=(contiguous striped zigzag cyclic:4)
for N in 8 16; do
  n=$((N * per_dev))
  for T in 128x128 512x512; do
    common=(--hardware a100-40gb --profile a100-40gb-scfa --model "$model" --mesh "1x$N" --seq "$n" --batch 1 --tile "$T")
    base=$("$bin" predict "${common[@]}" --mask causal --layout contiguous --format csv | tail -1 | cut -d, -f15,16)
    base_s=$(awk -F, '{print $1 + $2}' <<<"$base")
    echo "#### N = $N, $n tokens, tile $T (dense causal ring: attention fwd+bwd ${base_s} s)"
    echo
    echo "| mask | layout | imbalance | visited tiles | vs causal ring |"
    echo "|---|---|---|---|---|"
    for m in causal hash:8 hash:64 qkdrop:0.5; do
      for l in "${layouts[@]}"; do
        p=$("$bin" predict "${common[@]}" --mask "$m" --layout "$l" --format csv | tail -1)
        imb=$(cut -d, -f20 <<<"$p")
        t=$(awk -F, '{print $15 + $16}' <<<"$p")
        tiles=$("$bin" workload "${common[@]}" --mask "$m" --layout "$l" | awk -F, 'NR > 1 {s += $5} END {print s}')
        echo "| $m | $l | $imb | $tiles | $(awk -v b="$base_s" -v t="$t" 'BEGIN {printf "%.2fx", b / t}') |"
      done
    done
    echo
  done
done
