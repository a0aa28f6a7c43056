#!/usr/bin/env bash
# Runs bench/run on a machine that has Python 3.12, numpy, h5py, matplotlib and psutil but no
# network and no build dependencies (the 16-core GPU machine).
#
#   bench/device.sh pack [ZARRKIT_BENCH]   here: fills .devbench/ (the driver, the shared
#                                          libraries it needs, a wrapper) and .whl/ (the peers'
#                                          cp312 wheels). Both must be git-ignored (.git/info/exclude).
#   bench/device.sh run [bench/run options] there: installs the wheels into /tmp/site and runs
#                                          bench/run with the carried driver and python3.
#
# Without ZARRKIT_BENCH, pack builds the driver from the committed HEAD (git archive) in
# /tmp/zarrkit-bench-src, so that the numbers belong to a commit, not to a working tree.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

WHEELS=(zarr==3.1.6 numcodecs==0.16.6 zarrs==0.2.3 donfig==0.8.1.post1 crc32c==2.9.post0
        google-crc32c==1.9.0 tensorstore==0.1.86)

pack() {
  local driver=${1:-}
  if [[ -z "$driver" ]]; then
    local src=/tmp/zarrkit-bench-src
    rm -rf "$src.new" && mkdir -p "$src.new"
    git archive HEAD | tar -x -C "$src.new"
    # Keep the old build tree (ccache and ninja reuse it) but replace the sources.
    mkdir -p "$src/build" && rm -rf "$src.build" && mv "$src/build" "$src.build"
    rm -rf "$src" && mv "$src.new" "$src" && mv "$src.build" "$src/build"
    cmake -S "$src" -B "$src/build/bench" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZARRKIT_BUILD_TESTS=OFF \
      -DZARRKIT_BUILD_BENCH=ON -DZARRKIT_CUDA=OFF -DZARRKIT_BUILD_PYTHON=OFF > /dev/null
    cmake --build "$src/build/bench" --target zarrkit_bench -j "${ZARRKIT_JOBS:-$(nproc)}"
    driver=$src/build/bench/zarrkit_bench
  fi
  rm -rf .devbench && mkdir -p .devbench/lib
  cp "$driver" .devbench/zarrkit_bench.bin
  # Every library but the C runtime and the C++ runtime (the target's are newer).
  ldd "$driver" | awk '$3 ~ /^\// {print $3}' \
    | grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' \
    | xargs -r cp -L -t .devbench/lib
  cat > .devbench/zarrkit_bench <<'EOF'
#!/bin/sh
here=$(dirname "$0")
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/zarrkit_bench.bin" "$@"
EOF
  chmod +x .devbench/zarrkit_bench
  git rev-parse --short HEAD > .devbench/commit
  mkdir -p .whl
  for wheel in "${WHEELS[@]}"; do
    .venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
      --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl "$wheel"
  done
  du -sh .devbench .whl
}

run() {
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  exec bench/run --prebuilt .devbench/zarrkit_bench --python python3 --no-install "$@"
}

case "${1:-}" in
  pack) shift; pack "$@" ;;
  run) shift; run "$@" ;;
  *) echo "usage: bench/device.sh pack [ZARRKIT_BENCH] | run [bench/run options]" >&2; exit 2 ;;
esac
