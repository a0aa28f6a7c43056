#!/usr/bin/env bash
# Packs a baseline build of another commit for same-run comparisons on the GPU machine
# (device_session.sh, stage "compare"): its Python package with the extension (cp312, built
# with CUDA) and its own bench/gpu scripts, into FOLDER/baseline of a session's carry folder.
#   tools/gpu_bench/pack_baseline.sh SOURCE_TREE BUILD_TREE [carry folder, default build/gpu-carry]
# SOURCE_TREE is a checkout of the baseline commit (git worktree add ... COMMIT) and
# BUILD_TREE its build configured as docs/gpu.md says (-DZARRKIT_BUILD_PYTHON=ON, Python 3.12).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source_tree=$1
tree=$2
carry=${3:-build/gpu-carry}
base="$carry/baseline"
rm -rf "$base"
mkdir -p "$base/py/zarrkit" "$base/bench/gpu"
ext=$(ls "$tree"/python/_zarrkit.cpython-312-*.so)
strip -o "$base/py/zarrkit/$(basename "$ext")" "$ext"
cp "$source_tree"/python/zarrkit/*.py "$source_tree"/python/zarrkit/*.pyi "$source_tree"/python/zarrkit/py.typed \
  "$base/py/zarrkit/"
cp "$source_tree"/bench/gpu/*.py "$base/bench/gpu/"
git -C "$source_tree" rev-parse --short HEAD > "$base/commit"
du -sh "$base"
