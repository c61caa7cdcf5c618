#!/usr/bin/env bash
# Regenerates the GUI pictures of docs/gui.md (docs/images/gui-*.png) with the headless export of
# ringsim-gui: the paper's 8-GPU scenario for every view and the Plan tab, a small scenario for the
# token-level attention matrix. Usage: scripts/gui-screenshots.sh [BUILD_DIR] (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
gui="${1:-build}/gui/ringsim-gui"
[ -x "$gui" ] || { echo "gui-screenshots: $gui not built (cmake -DRINGSIM_BUILD_GUI=ON)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export QT_QPA_PLATFORM=offscreen
"$gui" --scenario docs/scenarios/paper-a100-8.json --export-dir "$tmp/paper" > /dev/null
"$gui" --scenario docs/scenarios/small-matrix.json --export-dir "$tmp/small" > /dev/null
for f in heatmap speedup breakdown timeline_contiguous timeline_striped compare plan; do
  cp "$tmp/paper/$f.png" "docs/images/gui-$f.png"
done
cp "$tmp/paper/matrix_contiguous.png" docs/images/gui-matrix_tiles_contiguous.png
cp "$tmp/small/matrix_contiguous.png" docs/images/gui-matrix_small_contiguous.png
cp "$tmp/small/matrix_striped.png" docs/images/gui-matrix_small_striped.png
cp "$tmp/small/matrix_side_by_side.png" docs/images/gui-matrix_side_by_side.png
ls -l docs/images/gui-*.png
