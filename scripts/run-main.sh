#!/usr/bin/env bash
# Quick start, command 1: set up, build the CLI, and predict ring vs striped for
# ringattn-3b on 8 x A100 80GB (mesh 2x4) at 256k tokens.
# It builds only the `ringsim` target and leaves build/'s options as they are (defaults on a
# fresh clone), so scripts/test.sh can run before or after it on the same folder.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target ringsim
./build/cli/ringsim predict --hardware a100-80gb --model ringattn-3b --mesh 2x4 --seq 262144 --recompute full "$@"
