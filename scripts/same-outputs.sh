#!/usr/bin/env bash
# Record what ringsim prints and writes for a fixed set of commands, and compare two records
# byte for byte: the check that a change of structure changed no output.
#   scripts/same-outputs.sh record DIR [--validation]   run everything into DIR (a new folder)
#   scripts/same-outputs.sh compare REF NEW             exit 0 when the two records are identical
# record runs predict / simulate / sweep / plan / plan-docs / workload / show / check / agreement,
# every command of the worked examples (docs/strategies.md and scripts/planning-examples.sh,
# their stdout and the checksums of their pictures), and with --validation
# scripts/validation.py on a copy of configs/, data/, docs/ and scripts/ (the tree is never
# written), keeping docs/validation.md and every regenerated profile without its version counter
# (validation.py bumps it on every run) and with the models/ source paths its page cites masked. RINGSIM overrides the binary (default build/cli/ringsim).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

usage() { echo "usage: same-outputs.sh record DIR [--validation] | compare REF NEW" >&2; exit 2; }

record() {
  local out=$1 with_validation=$2
  local R
  R=$(cd "$ROOT" && realpath "${RINGSIM:-build/cli/ringsim}")
  [[ -x $R ]] || { echo "same-outputs.sh: no ringsim binary at $R (build first)" >&2; exit 2; }
  [[ -e $out ]] && { echo "same-outputs.sh: $out exists; record into a new folder" >&2; exit 2; }
  mkdir -p "$out/files"
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  local n=0
  # One command: its stdout, stderr and exit code under a numbered name, files it wrote kept.
  run() {
    n=$((n + 1))
    local tag
    tag=$(printf '%03d' "$n")
    {
      echo "\$ ringsim $*"
      (cd "$work" && "$R" "$@" 2>"$out/$tag.err") || echo "exit $?"
    } >"$out/$tag.out"
    sed -i "s#$work#WORK#g" "$out/$tag.out" "$out/$tag.err"
    for f in "$work"/*; do
      [[ -e $f ]] || continue
      mv "$f" "$out/files/$tag-$(basename "$f")"
    done
  }
  local S=(--hardware h100-sxm --model llama3-8b)
  run predict --model ringattn-1b --hardware a100-80gb --mesh 1x8 --seq 65536 --layout contiguous,striped,zigzag
  run predict "${S[@]}" --mesh 1x8 --seq 131072 --layout zigzag --cp ring,allgather,ulysses,usp:2x4,usp:4x2,double-ring:4
  run predict "${S[@]}" --mesh 1x16 --seq 131072 --layout zigzag --cp ring,allgather,usp:8x2,usp:4x4,usp:2x8,double-ring:8
  run predict "${S[@]}" --mesh 1x8 --seq 131072 --docs lognormal:4096:1.5:1:32 --cp ring --impl ringsim-tiles \
    --layout contiguous,striped,zigzag,doc-zigzag
  run predict "${S[@]}" --mesh 1x8 --seq 131072 --docs lognormal:4096:1.5:1:32 --cp allgather --impl torch-cp \
    --layout contiguous,doc-zigzag,doc-zigzag-docmajor,ptrr
  run predict "${S[@]}" --mesh 1x8 --seq 131072 --docs lognormal:4096:1.5:1:32 --cp ulysses,usp:2x4 --layout doc-zigzag
  run predict --hardware tpu-v4 --model ringattn-1b --mesh 2x8 --seq 262144 --layout contiguous,striped --format json
  run predict --hardware a100-40gb --model ringattn-1b --mesh 1x8 --seq 32768 --mask qkdrop:0.5 --layout contiguous,striped
  run predict --hardware h800 --model llama3-8b --mesh 1x8 --seq 65536 --impl ring-flash-attn --layout contiguous,zigzag,striped
  run predict --hardware a100-80gb --model llama2-7b --mesh 2x4 --seq 131072 --layout striped --format json
  run predict "${S[@]}" --mesh 1x8 --seq 8192 --cp usp:2x2 --layout zigzag
  run simulate --model ringattn-1b --hardware a100-80gb --mesh 1x8 --seq 32768 --layout contiguous,striped \
    --trace trace.json --matrix matrix.csv
  run simulate "${S[@]}" --mesh 2x8 --seq 65536 --layout zigzag --cp usp:4x2 --format json
  run simulate --model ringattn-1b --hardware tpu-v4 --mesh 1x16 --seq 65536 --topology torus:4x4 --sync barrier
  run sweep --hardware a100-80gb --model llama2-7b --mesh 1x8,2x4 --seq 16384,65536 --layout contiguous,striped,zigzag \
    --impl ringsim-tiles --zero 3 --recompute selective,full -o sweep.csv
  run sweep "${S[@]}" --mesh 1x8 --seq 32768 --cp ring,ulysses,usp:2x4 --layout zigzag --engine des -o des.csv
  run plan --hardware a100-80gb --model llama2-7b --seq 131072 --devices 8 --top 3
  run plan "${S[@]}" --seq 1048576 --devices 64 --goal min-devices --target-tokens-per-s 10000 --top 3
  run plan --hardware tpu-v4 --model llama2-7b --goal max-context --seq 32768 --devices 16 --top 3
  printf '%s\n' length,count 512,40 2048,20 8192,6 32768,2 >"$work/lengths.csv"
  run plan-docs lengths.csv "${S[@]}" --seq 65536 --mesh 1x8 --zero 3 --recompute full
  rm -f "$out"/files/*-lengths.csv
  run workload --model ringattn-1b --mesh 1x4 --seq 4096 --layout striped
  run show --model ringattn-1b --mesh 1x4 --seq 4096 --layout zigzag
  run check "$ROOT/data/striped_paper_calibration.csv"
  run agreement --help
  run calibrate --help
  # The worked examples and validation.py run on a copy of the tree: they write docs/ and configs/.
  local copy=$work/tree
  mkdir -p "$copy"
  cp -r "$ROOT/configs" "$ROOT/data" "$ROOT/docs" "$ROOT/scripts" "$copy/"
  (cd "$copy" && RINGSIM_DATA_DIR=$copy RINGSIM=$R bash scripts/planning-examples.sh >"$out/planning-examples.out" 2>&1) ||
    echo "exit $?" >>"$out/planning-examples.out"
  sed -i 's#/tmp/tmp\.[A-Za-z0-9]*#TMP#g' "$out/planning-examples.out"
  (cd "$copy/docs/images" && sha256sum planning-*.png) >"$out/planning-images.sha256"
  if [[ $with_validation == 1 ]]; then
    (cd "$copy" && RINGSIM_DATA_DIR=$copy python3 scripts/validation.py "$R" >"$out/validation.out" 2>&1) ||
      echo "exit $?" >>"$out/validation.out"
    sed -i "s#$copy#TREE#g; s#/tmp/ringsim-validation-[A-Za-z0-9_]*#TMP#g" "$out/validation.out"
    # Source files the page cites are masked: moving a file is not a change of output.
    sed -E 's#models/[a-z_/]+\.(hpp|cpp)#models/SOURCE#g' "$copy/docs/validation.md" >"$out/validation.md"
    (cd "$copy/configs/profiles" && find . -name '*.json' | sort | while read -r f; do
      echo "== $f"; grep -v '"version"' "$f"; done) >"$out/profiles.txt"
  fi
  echo "same-outputs.sh: recorded $n commands into $out"
}

case ${1:-} in
  record)
    [[ $# -ge 2 ]] || usage
    v=0
    [[ ${3:-} == --validation ]] && v=1
    record "$2" "$v"
    ;;
  compare)
    [[ $# -eq 3 ]] || usage
    if diff -r "$2" "$3" >/dev/null; then
      echo "same-outputs.sh: identical ($(find "$2" -type f | wc -l) files)"
    else
      diff -r "$2" "$3" | head -40
      echo "same-outputs.sh: the records differ" >&2
      exit 1
    fi
    ;;
  *) usage ;;
esac
