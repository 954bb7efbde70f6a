#!/usr/bin/env bash
# Drop-in check on the GPU machine: runs one RMM release's own Python test suite (its
# python/rmm/rmm/tests, which this repository does not contain), unchanged, against the
# rmm-rs wheel carried in .carry/wheel/, with RMM_RUNTIME=cuda (or as set).
#
#   scripts/gpu-rmm-own-python-tests.sh [--api-version YY.MM] <rmm-tests-dir | tag> [PYTHON]
#                                       [pytest args...]
#
# <rmm-tests-dir> is any release's python/rmm/rmm/tests (25.02, 25.10, 26.06, main's 26.08:
# e.g. `git archive v26.06.00 python/rmm/rmm/tests` of rapidsai/rmm, .carry/rmm-suites/<tag>/
# python/rmm/rmm/tests, .carry/rapids/rmm-tests); a tag is extracted from the mirror. The
# suite runs under its release's API generation (RMM_API_VERSION), told by the tag, the
# directory's TAG file or a vYY.MM.PP in its path, or by --api-version. The work is
# scripts/rmm-own-python-suites.sh's; this keeps the GPU machine's defaults (its PyTorch venv,
# the carried wheel). Prints pytest's summary, its summary line and a closing line
# "rmm-own-python-tests: rc=N".
set -uo pipefail
cd "$(dirname "$0")/.."
api=()
case "${1:-}" in
  --api-version) api=(--api-version "${2:?--api-version needs YY.MM}"); shift 2 ;;
  --api-version=*) api=("$1"); shift ;;
esac
tests="${1:?RMM tests dir or tag}"
PY=${2:-${PY:-/opt/torch/.venv/bin/python3}}
shift 2 2>/dev/null || shift $#
site="$(mktemp -d /tmp/rmm-own-python-site-XXXXXX)"
trap 'rm -rf "$site"' EXIT
"$PY" -m pip install -q --no-deps --no-index --target "$site" .carry/wheel/*.whl || exit 1
PY="$PY" PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" RMM_RUNTIME="${RMM_RUNTIME:-cuda}" \
  scripts/rmm-own-python-suites.sh ${api[@]+"${api[@]}"} "$tests" "$@"
rc=$?
echo "rmm-own-python-tests: rc=$rc"
exit $rc
