#!/usr/bin/env bash
# Sparse masks on a ring: per (ring size, tile, mask, layout) the per-round imbalance
# (max/mean visited area, averaged over rounds), the tiles the kernel visits and the tiles that
# hold an allowed pair (ringsim workload, summed over rounds, devices and heads), the sum over
# rounds of the busiest device's visited tiles (what a lock-step ring waits for), the share of
# visited area in partly masked tiles, and the attention forward and forward+backward speedups over
# dense causal Ring Attention (contiguous layout) under the scfa/a100-40gb profile (--impl scfa). Markdown on stdout.
# Usage: scripts/sparse-ring-study.sh [path/to/ringsim] [model] [tokens per device] [ring sizes]
set -euo pipefail
bin=${1:-build/cli/ringsim}
model=${2:-attn:8:8:64}
per_dev=${3:-32768}
rings=${4:-8 16}
layouts=(contiguous striped zigzag cyclic:4 bucket-striped bucket-rotated)
# The named columns of a `predict --format csv` output (header and one row), comma-separated.
cols() {
  awk -F, -v want="$2" 'NR == 1 {for (i = 1; i <= NF; i++) at[$i] = i; next}
    {n = split(want, w, ","); out = ""; for (j = 1; j <= n; j++) out = out (j > 1 ? "," : "") $(at[w[j]]); print out}' <<<"$1"
}
for N in $rings; do
  n=$((N * per_dev))
  for T in 128x128 512x512; do
    common=(--hardware a100-40gb --impl scfa --model "$model" --mesh "1x$N" --seq "$n" --batch 1 --tile "$T")
    base=$(cols "$("$bin" predict "${common[@]}" --mask causal --layout contiguous --format csv)" attention_fwd_s,attention_bwd_s)
    base_f=$(cut -d, -f1 <<<"$base")
    base_s=$(awk -F, '{print $1 + $2}' <<<"$base")
    echo "#### N = $N, $n tokens, tile $T (dense causal ring: attention forward ${base_f} s, fwd+bwd ${base_s} s)"
    echo
    echo "| mask | layout | imbalance | visited tiles | computed tiles | sum of round max | masked share | fwd vs causal ring | fwd+bwd vs causal ring |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for m in causal hash:8 hash:8:zipf:1.5 hash:64 qkdrop:0.5; do
      for l in "${layouts[@]}"; do
        # The mask-derived layouts need the buckets (or kept tokens) of an index-based mask.
        [[ $l == bucket-* && $m == causal ]] && continue
        [[ $l == bucket-rotated && $m != hash* ]] && continue
        p=$("$bin" predict "${common[@]}" --mask "$m" --layout "$l" --format csv)
        imb=$(cols "$p" imbalance)
        f=$(cols "$p" attention_fwd_s)
        t=$(cols "$p" attention_fwd_s,attention_bwd_s | awk -F, '{print $1 + $2}')
        stats=$("$bin" workload "${common[@]}" --mask "$m" --layout "$l" |
          awk -F, 'NR > 1 {v += $8; c += $5; a += $9; k += $10; if ($8 > mx[$1]) mx[$1] = $8}
                   END {for (r in mx) s += mx[r]; printf "%d | %d | %d | %.3f", v, c, s, k / a}')
        echo "| $m | $l | $imb | $stats | $(awk -v b="$base_f" -v t="$f" 'BEGIN {printf "%.2fx", b / t}') |" \
          "$(awk -v b="$base_s" -v t="$t" 'BEGIN {printf "%.2fx", b / t}') |"
      done
    done
    echo
  done
done
