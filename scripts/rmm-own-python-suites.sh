#!/usr/bin/env bash
# Runs one RMM release's own Python test suite (its python/rmm/rmm/tests), unchanged,
# against the installed rmm-rs wheel, and prints one summary line.
#
#   scripts/rmm-own-python-suites.sh [--api-version YY.MM] <tag | tests-dir> [pytest args...]
#
# <tag> (e.g. v25.02.00, v25.10.00, v26.06.00, v26.08.00a) is extracted from the RMM git
# mirror ($RMM_MIRROR, default /work/.mirror/rapidsai+rmm/repo); a directory is used as it is.
# The suite runs with RMM_API_VERSION set to its release, so the package follows that
# generation's API (docs/python.md, "API generations"): the tag's YY.MM, or for a directory
# the tag named in its TAG file, else a vYY.MM.PP component of its path
# (.carry/rmm-suites/v25.02.00/python/rmm/rmm/tests); --api-version gives it outright.
# Python: $PY, else python/.venv/bin/python (the venv python/build-and-test.sh makes, with
# the wheel installed), else /opt/torch/.venv/bin/python3 with the wheel of .carry/wheel/
# installed aside (the GPU machine). RMM_RUNTIME defaults to host when no GPU driver is
# present, else cuda. On the host runtime scripts/host-standins/ (stand-ins of
# cuda.bindings.runtime and numba.cuda over rmm) come first on PYTHONPATH: RMM's tests import
# both at module level.
# Last line: "rmm-own-python-suites: <tag> runtime=R api=YY.MM passed=N failed=N skipped=N
# errors=N rc=N".
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
usage="usage: rmm-own-python-suites.sh [--api-version YY.MM] <tag|tests-dir> [pytest args...]"
api=""
case "${1:-}" in
  --api-version) api="${2:?$usage}"; shift 2 ;;
  --api-version=*) api="${1#--api-version=}"; shift ;;
esac
src="${1:?$usage}"
shift
mirror="${RMM_MIRROR:-/work/.mirror/rapidsai+rmm/repo}"

# The release a tag, a TAG file or a path names, as YY.MM (v25.10.00 -> 25.10).
release_of() { grep -Eo 'v[0-9]{2}\.[0-9]{2}\.[0-9]{2}' <<<"$1" | tail -n 1 | cut -c2-6; }
if [ -z "$api" ]; then
  if [ -d "$src" ] && [ -f "$src/TAG" ]; then
    api="$(release_of "$(head -n 1 "$src/TAG")")"
  fi
  if [ -z "$api" ]; then
    api="$(release_of "$(cd "$src" 2>/dev/null && pwd || echo "$src")")"
  fi
  if [ -z "$api" ]; then
    echo "rmm-own-python-suites: cannot tell which RMM release $src is (no vYY.MM.PP in its" \
      "name or TAG file): pass --api-version YY.MM" >&2
    exit 2
  fi
fi
if [ -n "${RMM_API_VERSION:-}" ] && [ "$RMM_API_VERSION" != "$api" ]; then
  echo "rmm-own-python-suites: RMM_API_VERSION=$RMM_API_VERSION in the environment replaced by" \
    "the suite's $api" >&2
fi
export RMM_API_VERSION="$api"

if [ -z "${RMM_RUNTIME:-}" ]; then
  if ls /usr/lib/x86_64-linux-gnu/libcuda.so* /usr/lib64/libcuda.so* >/dev/null 2>&1; then
    RMM_RUNTIME=cuda
  else
    RMM_RUNTIME=host
  fi
fi
export RMM_RUNTIME

work="$(mktemp -d /tmp/rmm-own-python-XXXXXX)"
trap 'rm -rf "$work"' EXIT
if [ -d "$src" ]; then
  [ -f "$src/conftest.py" ] || { echo "no conftest.py in $src: not RMM's tests dir" >&2; exit 2; }
  cp -r "$src" "$work/tests"
  label="$src"
else
  label="$src"
  git -C "$mirror" rev-parse -q --verify "$src^{commit}" >/dev/null \
    || { echo "tag $src not found in $mirror" >&2; exit 2; }
  git -C "$mirror" archive "$src" python/rmm/rmm/tests | tar -x -C "$work" \
    || { echo "extracting $src from $mirror failed" >&2; exit 2; }
  mv "$work/python/rmm/rmm/tests" "$work/tests"
fi

pythonpath=""
if [ -n "${PY:-}" ]; then
  :
elif [ -x "$root/python/.venv/bin/python" ]; then
  PY="$root/python/.venv/bin/python"
else
  PY=/opt/torch/.venv/bin/python3
  site="$work/site"
  "$PY" -m pip install -q --no-deps --no-index --target "$site" "$root"/.carry/wheel/*.whl || exit 1
  pythonpath="$site"
fi
if [ "$RMM_RUNTIME" = host ]; then
  pythonpath="$root/scripts/host-standins${pythonpath:+:$pythonpath}"
fi
export PYTHONPATH="$pythonpath${PYTHONPATH:+:$PYTHONPATH}"

# A copy outside any package tree: pytest must import the installed rmm, never a source tree.
cd "$work/tests"
"$PY" -m pytest -q -p no:cacheprovider -rfE --tb=line "$@" . 2>&1 | tee "$work/out"
rc=${PIPESTATUS[0]}
count() { grep -Eo "[0-9]+ $1" "$work/out" | tail -1 | grep -Eo '^[0-9]+' || echo 0; }
echo "rmm-own-python-suites: $label runtime=$RMM_RUNTIME api=$RMM_API_VERSION passed=$(count passed)" \
  "failed=$(count failed) skipped=$(count skipped) errors=$(count 'errors?') rc=$rc"
exit "$rc"
