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
