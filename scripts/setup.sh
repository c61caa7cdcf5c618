#!/usr/bin/env bash
# Installs the Debian 12 packages ringsim builds and tests with, only those that are missing.
# Safe to run again: it does nothing (no apt-get at all) when everything is there.
# Every name below is a real bookworm package (`apt-cache policy NAME` shows a candidate);
# the CUDA toolkit is not one of them (nvcc is looked for in /usr/local/cuda).
set -euo pipefail
PKGS=(
  # compiler and build
  cmake ninja-build g++
  # libraries of models/, sim/, calibration/, cli/
  libboost-graph-dev libeigen3-dev libfmt-dev libcxxopts-dev nlohmann-json3-dev
  # calibration/trace: gzip-compressed profiler traces; Nsight Systems reports exported as SQLite
  zlib1g-dev libsqlite3-dev
  # planning/'s charts (ringsim plot): cairo and fontconfig through pkg-config, DejaVu fonts
  pkg-config libcairo2-dev libfontconfig-dev fonts-dejavu-core
  # tests and benchmarks
  catch2 libbenchmark-dev
  # ringsim-gui: Qt 6 Widgets/Test (qt6-base-dev), Charts, Svg; Qt6Charts' CMake config needs
  # Qt6OpenGL's development files, and Qt6Gui needs libGL's
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev
  # fuzz targets: clang with libFuzzer (-fsanitize=fuzzer; only recommended by clang, so named)
  clang libclang-rt-14-dev
  # `import ringsim` (python/): pybind11 and Python's headers; numpy, pandas and pytest for Debian's
  # python3, which the module is built for
  pybind11-dev python3-dev python3-numpy python3-pandas python3-pytest
  # the Slurm test (tests/slurm): a one-node cluster in a temporary folder
  slurmctld slurmd slurm-client munge
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "ringsim setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
