#!/usr/bin/env bash
# Screenshots of the built documentation site (scripts/docs) in headless Chromium (Debian's
# `chromium` package), to see that it renders: the home page and the Python API reference,
# served over HTTP as a reader would get them.
#   tools/docs/screenshots.sh [output folder, default build/site-screenshots]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${1:-build/site-screenshots}
mkdir -p "$out"
[[ -f build/site/index.html ]] || { echo "no build/site: run scripts/docs first" >&2; exit 1; }
port=$((20000 + RANDOM % 20000))
.venv/bin/python -m http.server "$port" --bind 127.0.0.1 --directory build/site > /dev/null 2>&1 &
server=$!
trap 'kill $server' EXIT
sleep 1
for page in "" reference/python/ reference/cli/; do
  name=$(tr '/' '-' <<<"${page:-home}" | sed 's/-$//')
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1000 \
    --screenshot="$out/$name.png" "http://127.0.0.1:$port/$page" 2>/dev/null
  echo "$out/$name.png"
done
