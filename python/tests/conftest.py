import os

import pytest

os.environ.setdefault("RMM_RUNTIME", "host")

import rmm  # noqa: E402


@pytest.fixture(autouse=True)
def _restore_resource():
    """Each test starts and ends with the initial resource on device 0."""
    yield
    from rmm import _ffi
    from rmm.pylibrmm import memory_resource as m

    _ffi.set_per_device_resource(0, None).release()
    m._per_device_mrs.clear()


@pytest.fixture
def run_in_generation():
    """``run(version, code)``: ``code`` run by a new interpreter with ``RMM_API_VERSION`` set
    to ``version`` (None: unset) and the runtime of this one; returns its stdout, and fails
    the test with the child's output when it exits non-zero."""
    import subprocess
    import sys
    import textwrap

    def run(version, code, expect_rc=0):
        env = dict(os.environ)
        env.pop("RMM_API_VERSION", None)
        if version is not None:
            env["RMM_API_VERSION"] = version
        proc = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if proc.returncode != expect_rc:
            pytest.fail(
                f"RMM_API_VERSION={version!r}: exit {proc.returncode} (expected {expect_rc})\n"
                f"{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
            )
        return proc.stdout if expect_rc == 0 else proc.stderr

    return run
