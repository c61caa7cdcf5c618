#!/usr/bin/env bash
# Packs the CUDA build's programs and the shared libraries they need (all but glibc and libstdc++,
# which the GPU machine has in newer versions) into .gpu/, for a GPU machine that has a CUDA driver
# but not this project's build dependencies. Run after a CUDA build: scripts/gpu/bundle.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
bins=("$build/cli/ringsim" "$build/tests/kernels_cuda/test_kernels_cuda" "$build/tests/kernels_cuda/test_validate_gpu")
for b in "${bins[@]}"; do [[ -x $b ]] || { echo "bundle.sh: $b missing (build with -DRINGSIM_BUILD_CUDA=ON first)" >&2; exit 2; }; done
rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib
cp "${bins[@]}" .gpu/bin/
# glibc's libraries and libstdc++/libgcc stay: the target's own are newer and backward compatible.
ldd "${bins[@]}" | awk '/=>/ {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|libpthread|librt|libutil|libstdc\+\+|libgcc_s)\.so' |
  while read -r lib; do cp -L "$lib" .gpu/lib/; done
du -sh .gpu
