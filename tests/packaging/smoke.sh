#!/usr/bin/env bash
# The installed package works outside the checkout (issue #18 item 3), as `.ci/run` checks it:
#   build an sdist and a wheel from it, install the wheel into a fresh virtual environment in a
#   temporary folder with every dependency at its lowest allowed version (lowest.txt), then,
#   from that folder, `pbp db upgrade`, seed the demo campaign (in its own instance folder),
#   serve that folder (`pbp serve --demo`) on a free loopback port and fetch `/` and the
#   campaign page: both 200, each linking the stylesheet, which is served.
# Run it locally with `bash tests/packaging/smoke.sh` (needs `build`, from the test extra).
# PBP_SMOKE_KEEP=1 keeps the temporary folder for a look afterwards.
set -euo pipefail
checkout="$(cd "$(dirname "$0")/../.." && pwd)"
python="${PYTHON:-python3}"
work="$(mktemp -d "${TMPDIR:-/tmp}/pbp-smoke.XXXXXX")"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [ "${PBP_SMOKE_KEEP:-}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
fail() { echo "smoke: FAILED: $*" >&2; [ -f "$work/serve.log" ] && tail -20 "$work/serve.log" >&2; exit 1; }
say() { echo "smoke: $*"; }

# The wheel is built from the sdist (python -m build does that), so both must carry the files;
# building into $work leaves no build/ folder behind in the checkout.
say "building sdist and wheel"
"$python" -m build --quiet --outdir "$work/dist" "$checkout" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log" >&2; fail "build"; }
wheel="$(ls "$work"/dist/*.whl)"
listing="$("$python" -m zipfile -l "$wheel")"
# Every template, static file and migration of the checkout (git's list, so nothing untracked).
needed="$(git -C "$checkout" ls-files templates pbp/static pbp/migrations)"
[ -n "$needed" ] || fail "no templates, static files or migrations found in $checkout"
while read -r file; do
  grep -q "^$file " <<<"$listing" || fail "the wheel lacks $file"
done <<<"$needed"
for unwanted in pbp/bench_cli.py tests/; do
  if grep -q "^$unwanted" <<<"$listing"; then fail "the wheel carries $unwanted"; fi
done
say "the wheel carries all $(wc -l <<<"$needed") templates, static files and migrations"

say "installing the wheel into a fresh virtual environment (lowest dependency versions)"
"$python" -m venv "$work/venv"
# --no-compile: byte-compiling every dependency is most of an install's CPU time; the few
# modules the smoke test imports are compiled when first imported.
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-compile \
  -c "$checkout/tests/packaging/lowest.txt" "$wheel" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; fail "pip install"; }

# Everything below runs from $work, with no trace of the checkout on the path.
cd "$work"
unset PYTHONPATH PBP_TEST_DATABASE_URL DATABASE_URL SECRET_KEY
export PBP_INSTANCE_PATH="$work/instance"
pbp="$work/venv/bin/pbp"
where="$("$work/venv/bin/python" -c 'import pbp, templates; print(pbp.__file__, list(templates.__path__))')"
case "$where" in *"$checkout"*) fail "the installed pbp resolves into the checkout: $where" ;; esac

port="$("$work/venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$pbp" db upgrade || fail "pbp db upgrade"
seeded="$("$pbp" demo --no-serve --port "$port")" || fail "pbp demo --no-serve"
campaign="$(grep -o "http://127.0.0.1:$port/c/[^ ]*" <<<"$seeded" | head -1)"
[ -n "$campaign" ] || fail "no campaign address in: $seeded"

say "serving the demo's instance folder on 127.0.0.1:$port"
# The demo seeds an instance folder of its own ($work/instance-demo); `pbp serve` serves the
# demo's accounts only when told --demo.
PBP_INSTANCE_PATH="$work/instance-demo" "$pbp" serve --demo --port "$port" --no-scheduler \
  >"$work/serve.log" 2>&1 &
server_pid=$!
# Up to two minutes to boot: a loaded CI machine imports the whole app slowly.
deadline=$((SECONDS + 120))
until curl -s -o /dev/null "http://127.0.0.1:$port/"; do
  kill -0 "$server_pid" 2>/dev/null || fail "pbp serve exited"
  [ "$SECONDS" -lt "$deadline" ] || fail "pbp serve did not answer within 120 s"
  sleep 0.5
done

check_page() {
  local url="$1" page status css
  status="$(curl -s -o "$work/page.html" -w '%{http_code}' "$url")" || fail "$url: curl failed"
  [ "$status" = 200 ] || fail "$url answered $status"
  css="$(grep -o '<link rel="stylesheet" href="[^"]*"' "$work/page.html" | head -1 | sed 's/.*href="//; s/"$//')"
  [ -n "$css" ] || fail "$url links no stylesheet"
  case "$css" in http*) ;; *) css="http://127.0.0.1:$port$css" ;; esac
  status="$(curl -s -o "$work/style.css" -w '%{http_code} %{content_type}' "$css")" ||
    fail "$css: curl failed"
  case "$status" in "200 text/css"*) ;; *) fail "$css (linked from $url) answered $status" ;; esac
  [ -s "$work/style.css" ] || fail "$css is empty"
  say "$url: 200, stylesheet $css served"
}
check_page "http://127.0.0.1:$port/"
check_page "$campaign"
say "ok"
