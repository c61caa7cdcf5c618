#!/usr/bin/env bash
# Installs the Debian packages ringsim builds with, only those that are missing.
# Safe to run again: it does nothing when everything is there.
set -euo pipefail
PKGS=(cmake ninja-build g++ make git
      libboost-graph-dev libeigen3-dev libfmt-dev libcxxopts-dev catch2 nlohmann-json3-dev
      libbenchmark-dev
      qt6-base-dev libqt6charts6-dev qt6-charts-dev libqt6svg6-dev qt6-svg-dev libgl-dev
      xvfb xauth
      pkg-config libcairo2-dev fonts-dejavu-core)
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
