#!/usr/bin/env bash
# Runs bench/remote/remote_read.py on a machine with Python 3.12, numpy and tensorstore but
# no network, no nginx, no moto and no build tools (the 16-core GPU machine).
#
#   bench/remote/device.sh pack    here: fills .devremote/ (git-ignored), the one folder to
#                                  carry there (its size is printed; keep it under ~60 MiB):
#       site.tar.xz   Python packages for cp312: the zarrkit package with its extension
#                     (built from the committed HEAD, CUDA off), zarr-python, obstore, s3fs
#                     and moto with their dependencies (botocore keeps its S3 model only)
#       bin.tar.xz    Debian's nginx, its echo module and curl, each with the shared
#                     libraries it links (run through wrappers that put those first), and
#                     the libraries of the zarrkit extension (used where the machine lacks
#                     its own: its Python keeps the versions it was built with)
#   bench/remote/device.sh run [remote_read.py options]
#                                  there: unpacks into /tmp/zk-remote and runs the benchmark;
#                                  the tables and raw times go to $OUT (remote.md, remote.json),
#                                  rewritten after each case. On the 16-core machine (< 8 min):
#       timeout 470 bench/remote/device.sh run --size-mib 256 --s3-size-mib 64 --reps 4 \
#         --latency-ms 20,0 --servers http,s3 --server-workers 4 --budget-s 330
#
# Environment for pack: PYTHON312 (a Python 3.12 to build the extension with; default
# python3.12 on PATH, else pyenv's), ZARRKIT_JOBS. For run: PYTHON (default python3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

carry=.devremote
# The peers and moto, pinned as in requirements/*.txt. tensorstore is the machine's own.
PACKAGES=(zarr numcodecs donfig crc32c google-crc32c packaging typing_extensions
          obstore s3fs aiobotocore aiohttp aiohappyeyeballs aiosignal frozenlist multidict propcache yarl
          attrs aioitertools fsspec jmespath botocore python-dateutil six urllib3 wrapt idna
          moto boto3 s3transfer Werkzeug Flask flask-cors Jinja2 MarkupSafe itsdangerous blinker click
          requests charset-normalizer certifi responses PyYAML xmltodict cryptography cffi pycparser
          py-partiql-parser)
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64 --platform manylinux1_x86_64)

pin() {  # the pinned requirement of one package, from requirements/*.txt
  local line
  line=$(grep -hiE "^$1(\[[a-z]+\])?==" requirements/*.txt | head -1)
  [[ -n "$line" ]] || { echo "device.sh: $1 is not pinned in requirements/" >&2; exit 1; }
  echo "${line/\[server\]/}"
}

python312() {
  if [[ -n "${PYTHON312:-}" ]]; then echo "$PYTHON312"; return; fi
  # pyenv's shim is on PATH even where it has no 3.12 selected: take it only if it runs.
  if python3.12 -c '' 2>/dev/null; then command -v python3.12; return; fi
  local pyenv
  pyenv=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12 2>/dev/null | tail -1)
  [[ -n "$pyenv" ]] || { echo "device.sh: no Python 3.12 found (set PYTHON312)" >&2; exit 1; }
  echo "$pyenv"
}

# The closure of shared libraries of the given binaries, without the C and C++ runtimes.
libraries_of() {
  ldd "$@" | awk '/=> \// {print $3}' | sort -u |
    grep -vE '/(libc|libm|libgcc_s|libstdc\+\+|ld-linux[^/]*|libpthread|libdl|librt|libresolv)\.so'
}

build_extension() {
  # Inside the working tree (git-ignored build/): ccache rewrites paths under its base_dir,
  # so the objects of an earlier build of the same sources are reused.
  local src=$PWD/build/remote-src py
  py=$(python312)
  # A venv with nanobind for the build (the extension needs nothing else from Python).
  if [[ ! -x build/py312/bin/python ]]; then "$py" -m venv build/py312; fi
  build/py312/bin/python -m pip install -q "$(pin nanobind)"
  rm -rf "$src.new" && mkdir -p "$src.new"
  git archive HEAD | tar -x -C "$src.new"
  # Keep the old build tree (ccache and ninja reuse it) but replace the sources.
  mkdir -p "$src/build" && rm -rf "$src.build" && mv "$src/build" "$src.build"
  rm -rf "$src" && mv "$src.new" "$src" && mv "$src.build" "$src/build"
  cmake -S "$src" -B "$src/build/remote312" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZARRKIT_BUILD_TESTS=OFF \
    -DZARRKIT_CUDA=OFF -DZARRKIT_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PWD/build/py312/bin/python" > /dev/null
  cmake --build "$src/build/remote312" --target _zarrkit -j "${ZARRKIT_JOBS:-$(nproc)}"
  ls "$src"/build/remote312/python/_zarrkit.cpython-312-*.so
}

pack() {
  local stage ext
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' RETURN
  ext=$(build_extension | tail -1)

  # ---- Python packages ----
  mkdir -p build/remote-wheels "$stage/site/zarrkit"
  local requirements=()
  for p in "${PACKAGES[@]}"; do requirements+=("$(pin "$p")"); done
  .venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${PLATFORMS[@]}" -d build/remote-wheels "${requirements[@]}"
  local wheels=()
  for r in "${requirements[@]}"; do
    local name=${r%%==*} version=${r##*==}
    name=$(tr 'A-Z-' 'a-z_' <<<"$name")
    wheels+=("$(ls build/remote-wheels/* | grep -iE "/${name}-${version}-" | head -1)")
  done
  .venv/bin/python -m pip install -q --no-deps --no-compile --only-binary=:all: --python-version 3.12 --implementation cp \
    "${PLATFORMS[@]}" --target "$stage/site" "${wheels[@]}"
  # botocore: the S3 model and what every client loads; the other services' models are ~90% of it.
  (cd "$stage/site/botocore/data" && find . -mindepth 1 -maxdepth 1 -type d ! -name s3 -exec rm -rf {} +)
  cp python/zarrkit/*.py python/zarrkit/*.pyi python/zarrkit/py.typed "$stage/site/zarrkit/"
  strip -o "$stage/site/zarrkit/$(basename "$ext")" "$ext"
  git rev-parse --short HEAD > "$stage/site/zarrkit/COMMIT"

  # ---- nginx with its echo module, and curl, from Debian ----
  local debs="$stage/debs"
  mkdir -p "$debs" "$stage/bin/debian-lib" "$stage/bin/modules" "$stage/lib"
  (cd "$debs" && apt-get -o APT::Sandbox::User=root download nginx libnginx-mod-http-echo > /dev/null)
  for deb in "$debs"/*.deb; do dpkg -x "$deb" "$debs/root"; done
  cp "$debs/root/usr/sbin/nginx" "$stage/bin/nginx.bin"
  cp "$debs/root/usr/lib/nginx/modules/ngx_http_echo_module.so" "$stage/bin/modules/"
  cp "$(command -v curl)" "$stage/bin/curl.bin"
  libraries_of "$stage/bin/nginx.bin" "$stage/bin/curl.bin" | xargs -I{} cp -L {} "$stage/bin/debian-lib/"
  for tool in nginx curl; do
    cat > "$stage/bin/$tool" <<EOF
#!/bin/sh
here=\$(dirname "\$0")
LD_LIBRARY_PATH="\$here/debian-lib" exec "\$here/$tool.bin" "\$@"
EOF
    chmod +x "$stage/bin/$tool"
  done
  # The extension's libraries, for the machine's Python to use where it lacks its own.
  libraries_of "$ext" | xargs -I{} cp -L {} "$stage/lib/"

  rm -rf "$carry" && mkdir -p "$carry"
  tar -C "$stage/site" -cf - . | xz -T2 -6 > "$carry/site.tar.xz"
  tar -C "$stage" -cf - bin lib | xz -T2 -6 > "$carry/bin.tar.xz"
  cp "$stage/site/zarrkit/COMMIT" "$carry/commit"
  du -sh "$carry" "$carry"/*
}

run() {
  local work=/tmp/zk-remote out=${OUT:-/tmp/zk-remote-out}
  local python=${PYTHON:-python3}
  rm -rf "$work" && mkdir -p "$work/site" "$out"
  # Python's tarfile: the machine may lack the xz program.
  local untar='import sys, tarfile; t = tarfile.open(sys.argv[1]); t.extractall(sys.argv[2], **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))'
  "$python" -c "$untar" "$carry/site.tar.xz" "$work/site"
  "$python" -c "$untar" "$carry/bin.tar.xz" "$work"
  export PYTHONPATH=$work/site${PYTHONPATH:+:$PYTHONPATH}
  # The carried libraries only where the machine lacks them (its own come first).
  export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}:$work/lib
  export ZARRKIT_NGINX=$work/bin/nginx ZARRKIT_NGINX_MODULES=$work/bin/modules ZARRKIT_BENCH_CURL=$work/bin/curl
  export PYTHONUNBUFFERED=1
  echo "zarrkit $(cat "$carry/commit"), $(nproc) cores, $("$python" --version 2>&1),"\
       "tensorstore $("$python" -c 'import importlib.metadata as m; print(m.version("tensorstore"))' 2>&1 | tail -1),"\
       "numpy $("$python" -c 'import numpy; print(numpy.__version__)'), $("$ZARRKIT_NGINX" -v 2>&1),"\
       "$("$ZARRKIT_BENCH_CURL" --version | head -1 | cut -d' ' -f1-2)"
  exec "$python" bench/remote/remote_read.py --out "$out/remote.md" --json "$out/remote.json" "$@"
}

case "${1:-}" in
  pack) shift; pack "$@" ;;
  run) shift; run "$@" ;;
  *) echo "usage: bench/remote/device.sh pack | run [remote_read.py options]" >&2; exit 2 ;;
esac
