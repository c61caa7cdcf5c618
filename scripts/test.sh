#!/usr/bin/env bash
# Quick start, command 2: set up, build everything with -j2 and run the whole test suite with
# ctest (GUI, CUDA compile, the Python module, a one-node Slurm, CLI and hostile inputs included);
# then the same tests in a clang ASan + UBSan build (GUI, CUDA, Python and bench left out), whose
# libraries also carry libFuzzer's coverage; then a short libFuzzer run of every input reader.
# Every option a run depends on is set here, so whatever configured build/ before (for
# example scripts/run-main.sh) cannot switch tests, the GUI or benchmarks off.
# Environment: JOBS (default 2); CI=true also requires the CUDA build; RINGSIM_SKIP_SANITIZE=1
# and RINGSIM_SKIP_FUZZ=1 skip those stages; RINGSIM_FUZZ_SECONDS (default 6) per reader.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
JOBS=${JOBS:-2}
REQUIRE_CUDA=OFF
if [ "${CI:-}" = true ]; then REQUIRE_CUDA=ON; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DRINGSIM_SANITIZE=OFF -DRINGSIM_FUZZ=OFF \
      -DRINGSIM_BUILD_TESTS=ON -DRINGSIM_BUILD_BENCH=ON -DRINGSIM_BUILD_GUI=ON -DRINGSIM_BUILD_CUDA=ON \
      -DRINGSIM_BUILD_PYTHON=ON -DRINGSIM_REQUIRE_CUDA="$REQUIRE_CUDA"
cmake --build build -j"$JOBS"
# The JUnit report lets .ci/run check which tests ran (the "gui" entry among them).
(cd build && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j"$JOBS" --no-tests=error \
   --output-junit ctest-release.xml)
# One clang build serves the sanitizer tests and the fuzz targets (a third full build of the
# libraries cost CI ~8 minutes). -O1 and a non-PIE link because each hostile-input case starts a
# sanitized `ringsim`: at -O0 as a PIE the binary carried 137 MB of load-time relocations and
# ~1.6 s of start-up (ASan registering its globals, the kernel paging them in) per process, and
# the 2600 cases alone took 50 minutes; at -O1 without PIE a start costs ~0.2 s. -O1 is what the
# sanitizers' documentation recommends; asserts stay on (no NDEBUG in these flags).
if [ "${RINGSIM_SKIP_SANITIZE:-0}" != 1 ] || [ "${RINGSIM_SKIP_FUZZ:-0}" != 1 ]; then
  CC=clang CXX=clang++ cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DCMAKE_EXE_LINKER_FLAGS=-no-pie \
        -DRINGSIM_SANITIZE=ON -DRINGSIM_FUZZ=ON -DRINGSIM_BUILD_TESTS=ON -DRINGSIM_BUILD_GUI=OFF \
        -DRINGSIM_BUILD_CUDA=OFF -DRINGSIM_BUILD_BENCH=OFF -DRINGSIM_BUILD_PYTHON=OFF \
        -DRINGSIM_FUZZ_SECONDS="${RINGSIM_FUZZ_SECONDS:-6}"
fi
if [ "${RINGSIM_SKIP_SANITIZE:-0}" != 1 ]; then
  cmake --build build-san -j"$JOBS"
  (cd build-san && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j"$JOBS" --no-tests=error -LE 'slow|fuzz')
fi
if [ "${RINGSIM_SKIP_FUZZ:-0}" != 1 ]; then
  # libFuzzer on every input reader (docs/robustness.md): one bounded ctest entry per reader,
  # seeded from configs/ and data/.
  cmake --build build-san -j"$JOBS" --target ringsim_fuzzers
  (cd build-san && ctest --output-on-failure -j"$JOBS" --no-tests=error -L fuzz)
fi
