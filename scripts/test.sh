#!/usr/bin/env bash
# Quick start, command 2: set up, build everything with -j2 and run the whole test suite with
# ctest; then the same tests again in an ASan + UBSan build (GUI, CUDA and bench left out).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
JOBS=${JOBS:-2}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$JOBS"
(cd build && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j"$JOBS")
if [ "${RINGSIM_SKIP_SANITIZE:-0}" != 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRINGSIM_SANITIZE=ON \
        -DRINGSIM_BUILD_GUI=OFF -DRINGSIM_BUILD_CUDA=OFF -DRINGSIM_BUILD_BENCH=OFF
  cmake --build build-asan -j"$JOBS"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j"$JOBS" -LE slow)
fi
