#!/usr/bin/env bash
# Drop-in check on the GPU machine: runs one RMM release's own Python test suite (its
# python/rmm/rmm/tests, which this repository does not contain), unchanged, against the
# rmm-rs wheel carried in .carry/wheel/, with RMM_RUNTIME=cuda (or as set).
#
#   scripts/gpu-rmm-own-python-tests.sh <rmm-tests-dir | tag> [PYTHON] [pytest args...]
#
# <rmm-tests-dir> is any release's python/rmm/rmm/tests (25.02, 25.10, 26.06: e.g. `git
# archive v26.06.00 python/rmm/rmm/tests` of rapidsai/rmm); a tag is extracted from the
# mirror. The work is scripts/rmm-own-python-suites.sh's; this keeps the GPU machine's
# defaults (its PyTorch venv, the carried wheel). Prints pytest's summary, its summary line
# and a closing line "rmm-own-python-tests: rc=N".
set -uo pipefail
cd "$(dirname "$0")/.."
tests="${1:?RMM tests dir or tag}"
PY=${2:-${PY:-/opt/torch/.venv/bin/python3}}
shift 2 2>/dev/null || shift $#
site="$(mktemp -d /tmp/rmm-own-python-site-XXXXXX)"
trap 'rm -rf "$site"' EXIT
"$PY" -m pip install -q --no-deps --no-index --target "$site" .carry/wheel/*.whl || exit 1
PY="$PY" PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" RMM_RUNTIME="${RMM_RUNTIME:-cuda}" \
  scripts/rmm-own-python-suites.sh "$tests" "$@"
rc=$?
echo "rmm-own-python-tests: rc=$rc"
exit $rc
