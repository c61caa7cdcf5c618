#!/usr/bin/env bash
# The worked examples of docs/planning.md: their plans (printed) and their pictures
# (docs/images/planning-*.png). Run from anywhere after a build; RINGSIM overrides the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
R=${RINGSIM:-build/cli/ringsim}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
img=docs/images

echo "== 1. 8 x A100 80GB in one node: llama2-7b"
$R plan --hardware a100-80gb --model llama2-7b --seq 131072 --devices 8 --top 3
$R sweep --hardware a100-80gb --model llama2-7b --mesh 1x8,2x4,4x2 --seq 16384,32768,65536,131072,262144,524288 \
  --layout contiguous,striped,zigzag --impl ringsim-tiles --zero 3 --recompute selective,full -o "$out/a100.csv"
$R plot "$out/a100.csv" --kind speedup --where recompute=full --layout striped \
  --title "llama2-7b on 8 x A100 80GB: striped over contiguous (ringsim-tiles)" --png $img/planning-a100-speedup.png
$R plot "$out/a100.csv" --kind memory --where layout=zigzag --where mp=1 \
  --title "llama2-7b on 8 x A100 80GB (1x8, ZeRO-3): memory per device" --png $img/planning-a100-memory.png

echo "== 2. 64 x H100 over 8 nodes, 400 Gb/s per GPU: llama3-8b at 1M tokens"
$R plan --hardware h100-sxm --model llama3-8b --seq 1048576 --devices 64 --top 3
$R plan --hardware h100-sxm --model llama3-8b --seq 1048576 --devices 64 --goal min-devices \
  --target-tokens-per-s 10000 --top 3
$R sweep --hardware h100-sxm --model llama3-8b --mp 1,2,4,8 --sp 1,2,4,8,16,32,64 \
  --seq 65536,131072,262144,524288,1048576,2097152 --layout contiguous,striped,zigzag --impl ringsim-tiles \
  --zero 3 --recompute full -o "$out/h100.csv"
$R plot "$out/h100.csv" --kind exposed --where layout=zigzag \
  --title "llama3-8b on H100 nodes (400 Gb/s per GPU), zigzag: exposed communication" --png $img/planning-h100-exposed.png
$R plot "$out/h100.csv" --kind throughput --where n_seq=1048576 \
  --title "llama3-8b, 1M tokens on H100 nodes: tokens/s vs devices (best mesh)" --png $img/planning-h100-throughput.png

echo "== 3. 16 TPU v4: the longest context for llama2-7b; the Striped paper's model"
$R plan --hardware tpu-v4 --model llama2-7b --goal max-context --seq 32768 --devices 16 --top 3
$R sweep --hardware tpu-v4 --model ringattn-1b --mesh 2x8,1x16,4x4 \
  --seq 32768,131072,262144,393216,524288,786432,1048576 --layout contiguous,striped --zero 3 -o "$out/tpu.csv"
$R plot "$out/tpu.csv" --kind speedup \
  --title "ringattn-1b on 16 TPU v4: striped over contiguous (jax-blockwise, calibrated)" --png $img/planning-tpu-speedup.png
$R plot "$out/tpu.csv" --kind memory --where layout=striped \
  --title "ringattn-1b on 16 TPU v4 (ZeRO-3 over sp, full recompute): memory" --png $img/planning-tpu-memory.png

echo "== 4. A length distribution on 2 nodes x 8 H100: strategy and layout per bucket of packed sequences"
cat > "$out/lengths.csv" <<'LENGTHS'
length,count
120,20000
350,30000
900,20000
2500,6000
9000,800
40000,120
110000,20
LENGTHS
$R plan-docs "$out/lengths.csv" --hardware h100-sxm --model llama3-8b --seq 131072 --mesh 1x16 \
  --packing first-fit-shuffle --top 3 --tile-check 3
