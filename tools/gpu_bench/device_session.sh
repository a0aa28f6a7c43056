#!/usr/bin/env bash
# One session on the GPU machine, everything the GPU path needs checked and measured, in
# one command (device time is scarce): the C++ GPU tests, the Python GPU tests,
# compute-sanitizer memcheck and racecheck, and benchmarks S7 (kernel-only decode against
# nvCOMP) and S6 / S10 (reads into device memory against zarr-python + kvikio and
# tensorstore + copy), GDS store reads, and writes from device memory (their tests,
# sanitizers, zarr-python reading what the GPU wrote, and zarrkit_gpu_write_bench). Each
# stage has its own time limit; results and logs go to $OUT (at most 8 files come back):
# session.log, gpu_tests.log, pytest.log, sanitizers.log, s7.json, bench.jsonl, gds.jsonl,
# write_tests.log, write_bench.md.
#   tools/gpu_bench/device_session.sh [carry folder from pack_session.sh] [--quick]
# STAGES="pytest s6" (any of gpu_tests pytest s7 s6 gds sanitizers write write_bench
# first_read first_read_old compare; and, not run by default, zstd (zarrkit's zstd kernels:
# tests, sanitizers, zarrkit_zstd_bench), deflate (zarrkit's deflate kernel: tests,
# sanitizers, zarrkit_deflate_bench), wheel_gpu (a zarrkit-*.whl put in the carry folder), demo_gpu (zarrkit_demo put there), gpu_fuzz, multi_tests dask_large
# multi_bench multi_stats racecheck xarray_load: the multi-device tests, Dask-CUDA on an array larger than one GPU
# (DASK_GPUS, default 0,1; DASK_K: a pytest -k expression), bench/gpu/multi_gpu.py for each GPU count in MULTI_GPUS (default
# all; MULTI_CASES, MULTI_WAYS, MULTI_REPS) and, after it, the read counters of one GPU and of
# all GPUs on its arrays, and xarray.load against engine="zarr" at XARRAY_GB) runs only those stages; "first_read_old" (after
# first_read) and "compare" (not run by default: they need a
# baseline packed by pack_baseline.sh) times S6/S10 and the first reads of the baseline commit
# and of this build in the same run, alternating; BENCH_ONLY=s6 limits the S6/S10 stage to one scenario;
# COMPARE_ROUNDS (default 2) sets the compare stage's rounds, COMPARE_CASES its cases (s6_s10.py --cases); S7_VARIANTS=all has S7 time every stream-decode kernel variant (direct, direct-uncapped,
# staged), not only the read path's (direct).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
carry=$(cd "${1:-build/gpu-carry}" && pwd)
quick=${2:-}
out=${OUT:-/tmp/zarrkit-gpu-out}
mkdir -p "$out"
work=/tmp/zk
rm -rf "$work" && mkdir -p "$work"
start=$SECONDS
stage() { echo "== $1 (t=$((SECONDS - start)) s)"; }
wanted() { [[ -z ${STAGES:-} || " $STAGES " == *" $1 "* ]]; }
# compute-sanitizer TOOL over the GPU tests matching FILTER (quick mode), within SECONDS;
# prints "LABEL rc N" (9: the tool found something).
sanitize() {
  local tool=$1 seconds=$2 filter=$3 label=$4
  ZARRKIT_GPU_TEST_QUICK=1 timeout "$seconds" compute-sanitizer --tool "$tool" --error-exitcode 9 \
    "$work/bin/gpu_tests" --gtest_filter="$filter"
  echo "$label rc $?"
}

stage "unpack"
tar -C "$work" -xzf "$carry/bundle.tar.gz"
if [[ -f $carry/libnvcomp.so.6.xz ]]; then
  python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" \
    "$carry/libnvcomp.so.6.xz" "$work/lib/libnvcomp.so.6"
else
  echo "nvCOMP not carried (PACK_NVCOMP=0): its tests skip"
fi
if compgen -G "$carry/wheels/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$work/site" "$carry"/wheels/*.whl
fi
# The carried libraries only where the machine lacks them (its own come first: Python and
# its packages keep the versions they were built against).
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$work/lib
[[ -f $work/lib/libnvcomp.so.6 ]] && export ZARRKIT_NVCOMP_LIBRARY=$work/lib/libnvcomp.so.6
export ZARRKIT_CORPUS_DIR=$work/corpus
export PYTHONPATH=$work/py:$work/site
export PYTHONUNBUFFERED=1
# kvikio: no nvidia-fs driver here (POSIX compatibility mode); as many IO threads as cores.
export KVIKIO_COMPAT_MODE=ON KVIKIO_NTHREADS=$(nproc)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
# GPUDirect Storage: whether cuFile is installed here and the nvidia-fs driver loaded.
echo "cuFile: $( (ldconfig -p | grep -o 'libcufile.so[.0-9]*' | sort -u | tr '\n' ' '; ls /usr/local/cuda*/lib64/libcufile.so* 2>/dev/null) | tr '\n' ' ') nvidia-fs: $(lsmod 2>/dev/null | grep -c nvidia_fs)"
# zarrkit's GDSStore loads libcufile.so.0 through the loader's path; where it lies elsewhere
# (the CUDA toolkit's lib64, a Python wheel), name it.
cufile=$( (ldconfig -p | awk '/libcufile\.so\.0 /{print $NF}'; ls /usr/local/cuda*/lib64/libcufile.so.0 \
  /usr/local/cuda*/targets/*/lib/libcufile.so.0 2>/dev/null;
  python3 -c "import nvidia.cufile, os; print(os.path.join(list(nvidia.cufile.__path__)[0], 'lib', 'libcufile.so.0'))" 2>/dev/null) |
  while read -r f; do [[ -f $f ]] && { echo "$f"; break; }; done)
if [[ -n $cufile ]]; then export ZARRKIT_CUFILE_LIBRARY=$cufile; fi
echo "ZARRKIT_CUFILE_LIBRARY=${ZARRKIT_CUFILE_LIBRARY:-(none found)}"
[[ -f $work/py/zarrkit/__init__.py ]] && python3 -c "import zarrkit, cupy; print('zarrkit GPU:', zarrkit.config.gpu_available(), 'cupy', cupy.__version__)"

if wanted gpu_tests; then
stage "gpu_tests"
timeout 180 "$work/bin/gpu_tests" > "$out/gpu_tests.log" 2>&1
echo "gpu_tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |corpus arrays|^\[  FAILED" "$out/gpu_tests.log" | head -20
fi

if wanted pytest; then
stage "python GPU tests"
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/python/test_gpu.py tests/python/test_config.py \
  tests/python/test_zarr_pipeline_gpu.py tests/python/test_gds_store.py tests/python/test_xarray_backend.py > "$out/pytest.log" 2>&1
echo "pytest rc $?"; tail -3 "$out/pytest.log"
fi

if wanted s7; then
stage "S7 kernel-only decode vs nvCOMP"
timeout $([[ -n ${S7_VARIANTS:-} ]] && echo 150 || echo 90) "$work/bin/zarrkit_s7_bench" --total-mib 1024 --reps 6 \
  ${S7_VARIANTS:+--variants "$S7_VARIANTS"} --json "$out/s7.json"
echo "s7 rc $?"
fi

if wanted s6; then
stage "S6 / S10 reads into device memory"
size=full; [[ $quick == --quick ]] && size=small
timeout 130 python3 bench/gpu/s6_s10.py --dir /tmp/zk_bench --size $size --reps 6 --json "$out/bench.jsonl" --only "${BENCH_ONLY:-s6,s10}" \
  2>&1 | tail -60
echo "s6/s10 rc ${PIPESTATUS[0]}"
fi

if wanted gds; then
stage "GDS store: S6 rows through GDSStore, raw store reads against kvikio"
size=full; [[ $quick == --quick ]] && size=small
timeout 150 python3 bench/gpu/s6_s10.py --dir /tmp/zk_gds --size $size --reps 6 --json "$out/gds.jsonl" --only s6,gds \
  --cases "N none,N blosc-lz4,files" --skip-tensorstore --no-cold 2>&1 | tail -60
echo "gds rc ${PIPESTATUS[0]}"
fi

if [[ " ${STAGES:-} " == *" zstd "* ]]; then
# zarrkit's zstd kernels (not run by default until they have passed here): their GPU tests,
# compute-sanitizer on the differential set and the damaged frames, and the kernel-only
# benchmark against nvCOMP's zstd (ZSTD_BENCH_ARGS adds options, e.g. --checksum).
stage "zstd kernels: tests, sanitizers, kernel-only benchmark"
{
  timeout 240 "$work/bin/gpu_tests" --gtest_filter='GpuZstdKernels.*'
  echo "zstd tests rc $?"
  sanitize memcheck 240 'GpuZstdKernels.DifferentialSetInOneBatch:GpuZstdKernels.DamagedFrames*:GpuZstdKernels.MoreBlocksThanSharedMemoryLanes' "zstd memcheck"
  sanitize racecheck 200 'GpuZstdKernels.DifferentialSetInOneBatch:GpuZstdKernels.MoreBlocksThanSharedMemoryLanes' "zstd racecheck"
} > "$out/zstd_tests.log" 2>&1
grep -E "rc [0-9]+|ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) " "$out/zstd_tests.log"
timeout 240 "$work/bin/zarrkit_zstd_bench" --total-mib 1024 --reps 6 --json "$out/zstd_bench.json" ${ZSTD_BENCH_ARGS:-}
echo "zstd bench rc $?"
fi

if [[ " ${STAGES:-} " == *" deflate "* ]]; then
# zarrkit's deflate kernel (not run by default until it has passed here): its GPU tests,
# compute-sanitizer on the differential set and the damaged streams, and the kernel-only
# benchmark against nvCOMP's gzip and libdeflate (DEFLATE_BENCH_ARGS adds options).
stage "deflate kernel: tests, sanitizers, kernel-only benchmark"
{
  timeout 240 "$work/bin/gpu_tests" --gtest_filter='GpuDeflateKernels.*'
  echo "deflate tests rc $?"
  sanitize memcheck 240 'GpuDeflateKernels.DifferentialSetInOneBatch:GpuDeflateKernels.DamagedStreams*' "deflate memcheck"
  sanitize racecheck 200 'GpuDeflateKernels.DifferentialSetInOneBatch' "deflate racecheck"
} > "$out/deflate_tests.log" 2>&1
grep -E "rc [0-9]+|ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) " "$out/deflate_tests.log"
timeout 240 "$work/bin/zarrkit_deflate_bench" --total-mib 1024 --reps 6 --json "$out/deflate_bench.json" ${DEFLATE_BENCH_ARGS:-}
echo "deflate bench rc $?"
# Whole gzip reads into device memory through the engine, by each decode path.
if [[ -x $work/bin/zarrkit_codec_read_bench ]]; then
  timeout 300 "$work/bin/zarrkit_codec_read_bench" --codec gzip --dir "$work/deflate-read" ${DEFLATE_READ_ARGS:-}
  echo "gzip read bench rc $?"
fi
fi

if [[ " ${STAGES:-} " == *" racecheck "* ]]; then
# racecheck alone, on SANITIZER_FILTER (default: the device reads), RACECHECK_SECONDS long.
stage "compute-sanitizer racecheck"
# RACECHECK_EACH=1: each test in a process of its own (RACECHECK_SECONDS each, default 90),
# so one slow test neither stops the others nor inherits their pools.
filter=${SANITIZER_FILTER:-GpuShardRead.*:GpuRead.*:*GpuReadMatrix.*}
if [[ -n ${RACECHECK_EACH:-} ]]; then
  "$work/bin/gpu_tests" --gtest_list_tests --gtest_filter="$filter" |
    awk '/^[^ ]/{suite=$1} /^  /{print suite $1}' | while read -r test; do
      t0=$SECONDS
      sanitize racecheck "${RACECHECK_SECONDS:-90}" "$test" "racecheck $test" > "$out/racecheck_one.log" 2>&1
      echo "$(grep -E '^racecheck .* rc [0-9]+' "$out/racecheck_one.log") $((SECONDS - t0)) s; $(grep -E 'RACECHECK SUMMARY' "$out/racecheck_one.log")"
    done > "$out/racecheck.log" 2>&1
  rm -f "$out/racecheck_one.log"
  cat "$out/racecheck.log"
else
  sanitize racecheck "${RACECHECK_SECONDS:-400}" "$filter" "racecheck" > "$out/racecheck.log" 2>&1
  grep -E "rc [0-9]+|RACECHECK SUMMARY|^\[  (PASSED|FAILED) " "$out/racecheck.log"
fi
fi

if wanted sanitizers; then
stage "compute-sanitizer"
# The device reads (plain, sharded, delta, corrupt input), the batch decode API and the
# device memory paths around them.
filter='GpuShardRead.*:GpuRead.*:*GpuReadMatrix.*:GpuBatchDecode.*:GpuMemory.*:GpuMemoryStore.*:GpuCache.*'
{
  sanitize memcheck 90 "$filter" "memcheck"
  sanitize racecheck "${RACECHECK_SECONDS:-150}" "$filter" "racecheck"
  # The GDS store's engine (I/O threads, pinned staging, copies on their streams) and the
  # device reader's direct chunks.
  # The /Cufile cases load libcufile, whose own driver open memcheck flags (an invalid
  # cuMemFree inside libcufile 1.15 without nvidia-fs); they run in gpu_tests above.
  gds_filter='Paths/GdsDeviceReads.*/Compat:GdsStoreArrays.*'
  sanitize memcheck 40 "$gds_filter" "memcheck (gds)"
  sanitize racecheck 40 "$gds_filter" "racecheck (gds)"
} > "$out/sanitizers.log" 2>&1
grep -E "rc [0-9]+|ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) " "$out/sanitizers.log"
fi

if wanted write; then
stage "writes from device memory: tests, zarr-python, sanitizers"
{
  timeout 60 "$work/bin/gpu_tests" --gtest_filter='GpuWrite*:DeviceLz4*'
  echo "write tests rc $?"
  rm -rf /tmp/zk_export
  ZARRKIT_GPU_EXPORT_DIR=/tmp/zk_export timeout 30 "$work/bin/gpu_tests" --gtest_filter=GpuWrite.ExportForZarrPython
  echo "export rc $?"
  timeout 30 python3 tools/gpu_bench/check_gpu_written.py /tmp/zk_export
  echo "zarr-python check rc $?"
  # The encoder's hash tables live in shared memory, shared by the lanes of a warp.
  sanitize memcheck 90 'GpuWrite.*' "write memcheck"
  sanitize racecheck 90 'GpuWrite.*' "write racecheck"
} > "$out/write_tests.log" 2>&1
grep -E "rc [0-9]+|ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) |all arrays match" "$out/write_tests.log"
fi

if wanted write_bench; then
stage "write bench: GPU write vs CPU write vs copy to host + CPU write"
timeout 140 "$work/bin/zarrkit_gpu_write_bench" --reps 3 --dir /tmp/zk_write_bench > "$out/write_bench.md" 2>&1
echo "write bench rc $?"
cat "$out/write_bench.md"
rm -rf /tmp/zk_write_bench
fi

if wanted first_read; then
stage "first, second and steady reads into device memory (fresh processes)"
timeout 200 python3 bench/gpu/first_read.py --dir /tmp/zk_first --json "$out/first_read.jsonl" --label new \
  ${quick:+--layouts chunks,shards} 2>&1 | tail -20
echo "first_read rc ${PIPESTATUS[0]}"
fi

if [[ " ${STAGES:-} " == *" first_read_old "* && -d "$carry/baseline" ]]; then
stage "first reads of the baseline $(cat "$carry/baseline/commit") on the same arrays"
rm -rf "$work/baseline_py" && cp -r "$carry/baseline/py" "$work/baseline_py"
PYTHONPATH=$work/baseline_py:$work/site timeout 150 python3 bench/gpu/first_read.py --dir /tmp/zk_first \
  --json "$out/first_read.jsonl" --label old --no-write ${quick:+--layouts chunks,shards} 2>&1 | tail -8
echo "first_read_old rc ${PIPESTATUS[0]}"
fi

if [[ " ${STAGES:-} " == *" compare "* && -d "$carry/baseline" ]]; then
stage "compare: baseline $(cat "$carry/baseline/commit") against this build, same run, same files"
base_py=$work/baseline_py
rm -rf "$base_py" && cp -r "$carry/baseline/py" "$base_py"
size=full; [[ $quick == --quick ]] && size=small
for round in $(seq 1 "${COMPARE_ROUNDS:-2}"); do
  for build in baseline new; do
    if [[ $build == baseline ]]; then pp=$base_py:$work/site; script=$carry/baseline/bench/gpu/s6_s10.py
    else pp=$work/py:$work/site; script=bench/gpu/s6_s10.py; fi
    echo "-- $build, round $round"
    PYTHONPATH=$pp timeout 150 python3 "$script" --dir /tmp/zk_cmp --size $size --reps 5 \
      --json "$out/compare-$build.jsonl" --only "${COMPARE_ONLY:-s6,s10}" ${COMPARE_CASES:+--cases "$COMPARE_CASES"} \
      --skip-tensorstore --no-cold 2>&1 |
      grep -E "zarrkit|^S[0-9]" | head -40
  done
done
if [[ " $STAGES " != *" first_read_old "* ]]; then
  PYTHONPATH=$base_py:$work/site timeout 120 python3 bench/gpu/first_read.py --dir /tmp/zk_first --json "$out/first_read.jsonl" \
    --label old --no-write 2>&1 | tail -8
fi
fi

if [[ " ${STAGES:-} " == *" multi_tests "* ]]; then
stage "multi-device: C++ and Python tests, memcheck ($(nvidia-smi -L | wc -l) GPUs)"
{
  timeout 120 "$work/bin/gpu_tests" --gtest_filter='GpuMultiDevice*'
  echo "gpu_tests multi rc $?"
  timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python/test_multi_device.py
  echo "pytest multi rc $?"
  sanitize memcheck 240 'GpuMultiDevice*' "memcheck multi"
} > "$out/multi_tests.log" 2>&1
grep -E "rc [0-9]+$|PASSED|FAILED|passed|failed|ERROR SUMMARY" "$out/multi_tests.log" | head -20
fi

if [[ " ${STAGES:-} " == *" xarray_load "* ]]; then
# xr.open_dataset(...).load(), zarrkit's backend against engine="zarr", host memory, on this
# machine's cores (XARRAY_GB, default 3; both Zarr formats).
stage "xarray load: ${XARRAY_GB:-3} GB"
for format in 3 2; do
  timeout 400 python3 bench/xarray_load.py --dir /tmp/zk_xl --gb "${XARRAY_GB:-3}" --rounds 3 --zarr-format $format
done > "$out/xarray_load.log" 2>&1
echo "xarray_load rc $?"; cat "$out/xarray_load.log" | tail -12; rm -rf /tmp/zk_xl
fi

if [[ " ${STAGES:-} " == *" dask_large "* ]]; then
stage "Dask-CUDA: an array larger than one GPU, on GPUs ${DASK_GPUS:-0,1}"
mkdir -p /tmp/zk_dask
ZARRKIT_DASK_CUDA_DIR=/tmp/zk_dask CUDA_VISIBLE_DEVICES=${DASK_GPUS:-0,1} timeout "${DASK_TIMEOUT:-400}" \
  python3 -m pytest -q -p no:cacheprovider --durations=3 ${DASK_K:+-k "$DASK_K"} tests/python/test_dask_cuda.py > "$out/dask_large.log" 2>&1
echo "dask_large rc $?"; tail -8 "$out/dask_large.log"; du -sh /tmp/zk_dask; rm -rf /tmp/zk_dask
fi

if [[ " ${STAGES:-} " == *" multi_bench "* ]]; then
for g in ${MULTI_GPUS:-$(nvidia-smi -L | wc -l)}; do
  stage "multi-GPU bench on $g GPUs"
  timeout "${MULTI_TIMEOUT:-420}" python3 bench/gpu/multi_gpu.py --dir /tmp/zk_mg --json "$out/multi_gpu.jsonl" \
    --gpus "$g" --reps "${MULTI_REPS:-8}" ${MULTI_CASES:+--cases "$MULTI_CASES"} ${MULTI_WAYS:+--ways "$MULTI_WAYS"} \
    --label "$g-gpus" 2>&1 | tail -40
  echo "multi_bench $g rc ${PIPESTATUS[0]}"
done
fi

if [[ " ${STAGES:-} " == *" multi_stats "* ]]; then
# Where the multi-device read's time goes: the engine's counters for one GPU and for all,
# on the arrays multi_bench wrote.
stage "read counters, one GPU and all GPUs"
for arr in /tmp/zk_mg/*.zarr; do
  for d in 1 $(nvidia-smi -L | wc -l); do
    echo "== $(basename "$arr") devices=$d"
    timeout 120 python3 bench/gpu/read_stats.py "$arr" --reps 4 --devices "$d"
  done
  # MULTI_STATS_SET="gpu.pipeline_depth=2 ...": all GPUs again under each of these settings.
  for setting in ${MULTI_STATS_SET:-}; do
    echo "== $(basename "$arr") devices=$(nvidia-smi -L | wc -l) $setting"
    timeout 120 python3 bench/gpu/read_stats.py "$arr" --reps 4 --devices "$(nvidia-smi -L | wc -l)" --set "$setting"
  done
done 2>&1 | tee "$out/multi_stats.log" | tail -40
fi

if [[ " ${STAGES:-} " == *" wheel_gpu "* ]]; then
# The self-contained wheel (scripts/build-wheel --cuda ON, cp312) put beside the carry as
# zarrkit-*.whl: installed with --no-index into a folder of its own (a venv would hide the
# machine's NumPy and CuPy, which live in the user site), the only zarrkit on the path, then tests/wheel/smoke.py --gpu reads into CuPy through it.
stage "the wheel, installed with --no-index, reading into GPU memory"
{
  rm -rf /tmp/zk_wheel_site &&
    python3 -m pip install -q --no-index --no-deps --no-cache-dir --target /tmp/zk_wheel_site "$carry"/zarrkit-*.whl &&
    (cd /tmp && env -u LD_LIBRARY_PATH PYTHONPATH=/tmp/zk_wheel_site PATH=/tmp/zk_wheel_site/bin:$PATH \
      timeout 180 python3 "$OLDPWD/tests/wheel/smoke.py" --gpu)
  echo "wheel_gpu rc $?"
} > "$out/wheel_gpu.log" 2>&1
tail -15 "$out/wheel_gpu.log"
fi

if [[ " ${STAGES:-} " == *" demo_gpu "* ]]; then
# scripts/demo's program (zarrkit_demo from the CUDA build, put in the carry folder), default
# size: every section, the reads into GPU memory included, every value checked.
stage "the demo with its GPU section"
strip -o "$work/bin/zarrkit_demo" "$carry/zarrkit_demo"
(cd /tmp && timeout 400 "$work/bin/zarrkit_demo" --dir /tmp/zk_demo) > "$out/demo_gpu.log" 2>&1
echo "demo rc $?"; tail -40 "$out/demo_gpu.log"; rm -rf /tmp/zk_demo
fi

if [[ " ${STAGES:-} " == *" gpu_fuzz "* ]]; then
# Mutation fuzzing of the device decoders (src/gpu/gpu_fuzz_test.cpp): GPU_FUZZ_ROUNDS rounds
# per chain plainly (default 40), then GPU_FUZZ_MEMCHECK_ROUNDS (default 8) under memcheck with
# another seed.
stage "device decoders fuzzed, plainly and under memcheck"
{
  ZARRKIT_GPU_FUZZ_VERBOSE=1 ZARRKIT_GPU_FUZZ_ROUNDS=${GPU_FUZZ_ROUNDS:-40} timeout 200 "$work/bin/gpu_tests" --gtest_filter='GpuFuzz.*'
  echo "gpu_fuzz rc $?"
  ZARRKIT_GPU_FUZZ_ROUNDS=${GPU_FUZZ_MEMCHECK_ROUNDS:-8} ZARRKIT_GPU_FUZZ_SEED=7 \
    sanitize memcheck 240 'GpuFuzz.*' "gpu_fuzz memcheck"
} > "$out/gpu_fuzz.log" 2>&1
grep -E "rc [0-9]+|ERROR SUMMARY|device fuzzing|^\[  (PASSED|FAILED) |Failure|decoded a damaged" "$out/gpu_fuzz.log" | head -30
fi

stage "done"
