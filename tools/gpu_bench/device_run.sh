#!/usr/bin/env bash
# The GPU machine's part of docs/gpu.md: the GPU tests, compute-sanitizer (memcheck and
# racecheck) on them, and the decode benchmark; logs go to $OUT.
#
# The binaries are built on a development machine (tools/gpu_bench/pack.sh) and carried
# with their shared libraries and the interop corpus in one folder:
#   tools/gpu_bench/device_run.sh build/gpu-carry [bench arguments...]
set -uo pipefail
carry=$(cd "${1:-build/gpu-carry}" && pwd)
shift || true
out=${OUT:-/tmp/zarrkit-gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=$carry/lib
export ZARRKIT_CORPUS_DIR=$carry/corpus
sanitized='*GpuReadMatrix.*:GpuRead.V2*:GpuRead.Corrupt*:GpuRead.ManyBatches*:GpuMemory.*:GpuWrite.*'

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
echo "== gpu_tests"
ZARRKIT_GPU_EXPORT_DIR=/tmp/gpu_written "$carry/bin/gpu_tests" > "$out/gpu_tests.log" 2>&1
echo "gpu_tests rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |corpus arrays" "$out/gpu_tests.log"
# Arrays written from device memory, for zarr-python on a machine that has it
# (tools/gpu_bench/check_gpu_written.py).
tar -C /tmp -czf "$out/gpu_written.tar.gz" gpu_written
echo "== compute-sanitizer memcheck"
ZARRKIT_GPU_TEST_QUICK=1 timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$carry/bin/gpu_tests" --gtest_filter="$sanitized" > "$out/memcheck.log" 2>&1
echo "memcheck rc $?"; tail -3 "$out/memcheck.log"
echo "== compute-sanitizer racecheck"
ZARRKIT_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 \
  "$carry/bin/gpu_tests" --gtest_filter="$sanitized" > "$out/racecheck.log" 2>&1
echo "racecheck rc $?"; tail -3 "$out/racecheck.log"
echo "== benchmark"
"$carry/bin/zarrkit_gpu_bench" "$@" 2>&1 | tee "$out/bench.log"
