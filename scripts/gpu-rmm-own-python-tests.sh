#!/usr/bin/env bash
# Drop-in check on the GPU machine: runs RMM 25.02's own Python test suite (its
# python/rmm/rmm/tests/, which this repository does not contain), unchanged, against the
# rmm-rs wheel carried in .carry/wheel/, with RMM_RUNTIME=cuda (or as set).
#
#   scripts/gpu-rmm-own-python-tests.sh <rmm-tests-dir> [PYTHON] [pytest args...]
#
# <rmm-tests-dir> is RMM's python/rmm/rmm/tests (e.g. `git archive v25.02.00
# python/rmm/rmm/tests` of rapidsai/rmm). Prints pytest's summary (failures one line each)
# and a closing line "rmm-own-python-tests: rc=N".
set -uo pipefail
cd "$(dirname "$0")/.."
tests="$(cd "${1:?RMM tests dir}" && pwd)"
PY=${2:-${PY:-/opt/torch/.venv/bin/python3}}
shift 2 2>/dev/null || shift $#
site=/tmp/rmm-own-python-site
rm -rf "$site"
"$PY" -m pip install -q --no-deps --no-index --target "$site" .carry/wheel/*.whl || exit 1
# A copy outside any package tree: pytest must import the installed rmm, never a source tree.
work=/tmp/rmm-own-python-tests
rm -rf "$work" && cp -r "$tests" "$work"
export PYTHONPATH="$site" RMM_RUNTIME="${RMM_RUNTIME:-cuda}"
cd "$work"
"$PY" -m pytest -q -p no:cacheprovider -rfE --tb=line "$@" .
rc=$?
echo "rmm-own-python-tests: rc=$rc"
exit $rc
