#!/usr/bin/env bash
# Packs one GPU-machine session (tools/gpu_bench/device_session.sh) into a folder that
# travels with the working tree (at most 64 MiB with it), default build/gpu-carry:
#   bundle.tar.gz      gpu_tests, zarrkit_gpu_bench, zarrkit_gpu_write_bench, zarrkit_s7_bench,
#                      zarrkit_zstd_bench, zarrkit_deflate_bench, zarrkit_codec_read_bench, their
#                      shared libraries,
#                      the Python package with its extension (cp312, built with CUDA) and the
#                      interop corpus
#   libnvcomp.so.6.xz  nvCOMP's library from the nvidia-libnvcomp-cu13 wheel (S7 loads it)
#   wheels/            what the GPU machine's Python lacks for the peers: zarr-python,
#                      numcodecs, kvikio and their missing dependencies
# The build tree must have been configured with -DZARRKIT_BUILD_PYTHON=ON and a Python 3.12
# interpreter (docs/gpu.md); the wheels are downloaded into WHEELS (default .whl) with
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 ... zarr==3.1.6 numcodecs==0.16.6 donfig google-crc32c crc32c \
#     kvikio-cu13==26.10.0 libkvikio-cu13==26.10.0 rapids-logger==0.3.0 nvidia-libnvcomp-cu13==6.0.0.12
#   tools/gpu_bench/pack_session.sh [build tree, default build/gpu] [folder] [wheels folder]
# For the multi-GPU stages (Dask-CUDA), download dask-cuda's wheels into the same folder
# (pip download --only-binary=:all: --python-version 3.12 ... dask-cuda==26.10.0 cuda-bindings==13.*)
# and name them: CARRY_WHEELS="donfig dask distributed dask_cuda cloudpickle partd locket toolz zict
# tblib msgpack sortedcontainers tornado psutil nvidia_ml_py rapids_dask_dependency click pyyaml
# fsspec cuda_core cuda_pathfinder cuda_bindings lazy_importer".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
tree=${1:-build/gpu}
carry=${2:-build/gpu-carry}
wheels=${3:-.whl}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
rm -rf "$carry"
mkdir -p "$carry/wheels" "$stage/bin" "$stage/lib" "$stage/py/zarrkit"
# PACK_BINS: the programs to carry (a kernel-only session: "gpu_tests zarrkit_deflate_bench");
# PACK_PYTHON=0 leaves the Python package out (then the tree needs no Python 3.12 build).
read -r -a bins <<<"${PACK_BINS:-gpu_tests zarrkit_gpu_bench zarrkit_gpu_write_bench zarrkit_s7_bench zarrkit_zstd_bench zarrkit_deflate_bench zarrkit_codec_read_bench}"
for b in "${bins[@]}"; do strip -o "$stage/bin/$b" "$tree/$b"; done
ext=()
if [[ ${PACK_PYTHON:-1} != 0 ]]; then
  ext=("$(ls "$tree"/python/_zarrkit.cpython-312-*.so)")
  strip -o "$stage/py/zarrkit/$(basename "${ext[0]}")" "${ext[0]}"
  cp python/zarrkit/*.py python/zarrkit/*.pyi python/zarrkit/py.typed "$stage/py/zarrkit/"
fi
ldd "${bins[@]/#/$tree/}" "${ext[@]}" | awk '/=> \// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libgcc_s|libstdc\+\+|ld-linux[^/]*|libpthread|libdl|librt)\.so' | xargs -I{} cp -L {} "$stage/lib/"
# PACK_CORPUS=0 leaves the interop corpus out (sessions without the GPU tests, to fit the limit).
if [[ ${PACK_CORPUS:-1} != 0 && -d ../shared/corpus ]]; then cp -r ../shared/corpus "$stage/corpus"; fi
tar -C "$stage" -czf "$carry/bundle.tar.gz" .
# PACK_NVCOMP=0 leaves nvCOMP out (its tests then skip; sessions that need the room).
if [[ ${PACK_NVCOMP:-1} != 0 ]]; then
  nvcomp_wheel=$(ls "$wheels"/nvidia_libnvcomp_cu13-*.whl)
  unzip -p "$nvcomp_wheel" nvidia/libnvcomp/lib64/libnvcomp.so.6 | xz -T2 -3 > "$carry/libnvcomp.so.6.xz"
fi
# CARRY_WHEELS: other wheel names to carry (CARRY_WHEELS= : none) (the multi-GPU session carries Dask and dask-cuda
# instead of the peers, within the 64 MiB).
for w in ${CARRY_WHEELS-zarr numcodecs donfig google_crc32c crc32c kvikio_cu13 libkvikio_cu13 rapids_logger}; do
  cp "$wheels"/"$w"-*.whl "$carry/wheels/"
done
du -sh "$carry" "$carry"/*
