#!/usr/bin/env bash
# Packs what tools/gpu_bench/device_run.sh needs into one folder (default build/gpu-carry):
# the stripped gpu_tests and zarrkit_gpu_bench of a build tree, the non-system shared
# libraries they load, and a copy of the interop corpus.
#   tools/gpu_bench/pack.sh [build tree, default build/gpu] [folder]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
tree=${1:-build/gpu}
carry=${2:-build/gpu-carry}
rm -rf "$carry"
mkdir -p "$carry/bin" "$carry/lib"
for b in gpu_tests zarrkit_gpu_bench; do strip -o "$carry/bin/$b" "$tree/$b"; done
ldd "$tree/gpu_tests" "$tree/zarrkit_gpu_bench" | awk '/=> \// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so' | xargs -I{} cp -L {} "$carry/lib/"
if [[ -d ../shared/corpus ]]; then cp -r ../shared/corpus "$carry/corpus"; fi
du -sh "$carry"
