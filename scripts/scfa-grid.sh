#!/usr/bin/env bash
# Predicted SCFA speedups over dense causal FlashAttention (same tile, one A100 40GB) for the
# published grid, as a Markdown table: every number comes from `ringsim predict --compare-mask`.
# Usage: scripts/scfa-grid.sh [path/to/ringsim]   (default build/cli/ringsim)
set -euo pipefail
bin=${1:-build/cli/ringsim}
common=(--hardware a100-40gb --impl scfa --model attn:48:48:64 --mesh 1x1 --batch 4 --tile 128x128
        --layout contiguous --compare-mask causal)
echo "| mask | 8k fwd | 8k fwd+bwd | 16k fwd | 16k fwd+bwd | 32k fwd | 32k fwd+bwd |"
echo "|---|---|---|---|---|---|---|"
for m in hash:2 hash:4 hash:8 hash:16 hash:32 hash:64 qkdrop:0.2 qkdrop:0.4 qkdrop:0.6 qkdrop:0.8; do
  row="| $m |"
  for n in 8192 16384 32768; do
    # The comparison table's last line: layout, fwd, base fwd, speedup, fwd+bwd, base f+b, speedup.
    line=$("$bin" predict "${common[@]}" --seq "$n" --mask "$m" | grep '^contiguous' | tail -1)
    row+=" $(awk '{print $(NF-5)}' <<<"$line" | head -1) |"
    row+=" $(awk '{print $NF}' <<<"$line") |"
  done
  echo "$row"
done
