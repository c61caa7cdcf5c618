#!/usr/bin/env bash
# The GPU campaign, as one call on a lent GPU machine (docs/gpu-campaign.md): ringsim's CUDA tests
# on a real device, its kernel sweep and per-round validation, and component timings of the kernels
# and ring steps that context-parallel libraries run (PyTorch's FlashAttention-2 and cuDNN
# backends). Needs .gpu/ from scripts/gpu/bundle.sh (the CUDA build and its libraries) and a
# python3 with torch. Each part has its own time limit and is appended to OUT/results.tar as soon
# as it ends, so a call stopped at its limit keeps what finished.
# Usage (repository root): OUT=DIR bash scripts/gpu/campaign.sh [PART...]
# Parts (default: environment tests measure validate sdpa ring): also ceilings, validate_calibrated
# (PROFILE=a kernel profile from `ringsim calibrate --from-timings` on the measure part's CSV),
# sdpa_more (head dims 32/64 at ring shapes, decode shapes), ring_comm (the ring steps with
# RingComm's calls on a one-rank NCCL group) and ring_fresh (one process per emulated rank).
set -uo pipefail
out=${OUT:?set OUT to the folder for results}
work=$(mktemp -d)
export RINGSIM_DATA_DIR=$PWD
export LD_LIBRARY_PATH=$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
bin=$PWD/.gpu/bin
keep() { (cd "$work" && tar -rf "$out/results.tar" "$@"); }
part() { echo; echo "=== $1 ($(date -u +%T))"; }

part_environment() {
  {
    date -u +%FT%TZ
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,persistence_mode --format=csv
    nvidia-smi -q -d CLOCK,PERFORMANCE | sed -n '1,60p'
    python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "device", torch.cuda.get_device_name(0))'
    nproc; grep -m1 "model name" /proc/cpuinfo
    ldd "$bin/ringsim" | grep -i "not found" || echo "ldd: every library found"
    git log -1 --format='ringsim %H %cd' 2>/dev/null || true
  } > "$work/environment.txt" 2>&1
  cat "$work/environment.txt"; keep environment.txt
}

part_tests() {
  {
    timeout 120 "$bin/test_kernels_cuda" --reporter compact; echo "test_kernels_cuda rc=$?"
    timeout 120 "$bin/test_validate_gpu" --reporter compact; echo "test_validate_gpu rc=$?"
  } > "$work/gpu_tests.txt" 2>&1
  tail -n 8 "$work/gpu_tests.txt"; keep gpu_tests.txt
}

part_measure() {
  timeout 120 "$bin/ringsim" measure --quick --repeats 7 --warmup 3 -o "$work/h100_measure_quick.csv" 2>&1 | tail -n 3
  keep h100_measure_quick.csv 2>/dev/null
}

validate_runs() {  # $1: file prefix; the rest: extra flags
  local prefix=$1; shift
  for m in causal window:8192; do
    f=${prefix}_$(echo "$m" | tr : _).csv
    timeout 90 "$bin/ringsim" validate --hardware h100-sxm --model attn:32:8:128 --mesh 1x8 --seq 65536 --mask "$m" \
      --repeats 5 --warmup 2 "$@" -o "$work/$f" 2>&1 | tail -n 14
    keep "$f" 2>/dev/null
  done
  timeout 60 "$bin/ringsim" validate --hardware h100-sxm --model attn:16:16:64 --mesh 1x4 --seq 32768 --tile 128x128 \
    --repeats 5 --warmup 2 "$@" -o "$work/${prefix}_d64.csv" 2>&1 | tail -n 8
  keep "${prefix}_d64.csv" 2>/dev/null
}

part_validate() { validate_runs h100_validate; }

part_validate_calibrated() { validate_runs h100_validate_calibrated --profile "${PROFILE:?PROFILE names the kernel profile}"; }

part_sdpa() {
  timeout 200 python3 scripts/gpu/sdpa_curves.py -o "$work/h100_sdpa_kernels.csv" --kernels "$work/h100_sdpa_kernel_names.json" \
    2>&1 | tail -n 40
  keep h100_sdpa_kernels.csv h100_sdpa_kernel_names.json 2>/dev/null
}

part_sdpa_more() {
  timeout 150 python3 scripts/gpu/sdpa_curves.py --groups ring_small,decode -o "$work/h100_sdpa_kernels_more.csv" \
    --kernels "$work/h100_sdpa_kernel_names_more.json" 2>&1 | tail -n 60
  keep h100_sdpa_kernels_more.csv h100_sdpa_kernel_names_more.json 2>/dev/null
}

part_ring() {
  timeout 150 python3 scripts/gpu/ring_steps.py -o "$work/h100_ring_steps.json" --tokens 8192,4096,2048 --n 8 --reps 10 \
    --trace "$work/h100_ring_zigzag_trace.json" 2>&1 | tail -n 90
  gzip -f "$work/h100_ring_zigzag_trace.json" 2>/dev/null
  keep h100_ring_steps.json h100_ring_zigzag_trace.json.gz 2>/dev/null
}

part_ring_comm() {
  timeout 150 python3 scripts/gpu/ring_steps.py --comm -o "$work/h100_ring_steps_comm.json" --tokens 8192,2048 --n 8 --reps 10 \
    2>&1 | tail -n 60
  keep h100_ring_steps_comm.json 2>/dev/null
}

# One process per (layout, rank), as in a real ring where every rank is its own process: the
# TorchScript merge specialises on the inputs its process has seen, so measuring many ranks in one
# process would mix their histories.
part_ring_fresh() {
  local files=()
  for layout in ring zigzag stripe; do
    for rank in 0 1 4 7; do
      f=ring_fresh_${layout}_${rank}.json
      timeout 60 python3 scripts/gpu/ring_steps.py -o "$work/$f" --tokens 8192 --no-trace-tokens --n 8 --reps 10 \
        --layouts "$layout" --ranks "$rank" 2>&1 | grep -v Warn | tail -n 2
      [[ -s $work/$f ]] && files+=("$f")
    done
  done
  (cd "$work" && python3 -c 'import json, sys; json.dump({"meta": json.load(open(sys.argv[1]))["meta"], "runs": [r for f in sys.argv[1:] for r in json.load(open(f))["runs"]]}, open("h100_ring_steps_fresh.json", "w"), indent=1)' "${files[@]}")
  keep h100_ring_steps_fresh.json 2>/dev/null
}

part_ceilings() {
  timeout 60 python3 scripts/gpu/ceilings.py > "$work/h100_ceilings.json" 2>&1
  cat "$work/h100_ceilings.json"; keep h100_ceilings.json
}

for p in ${*:-environment tests measure validate sdpa ring}; do
  part "$p"
  "part_$p"
done
part done
tar -tf "$out/results.tar"
