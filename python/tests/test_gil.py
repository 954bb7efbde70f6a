"""The GIL is released while librmm.so allocates and frees.

Thread A holds the mutex of a thread_safe_resource_adaptor (made through the C ABI) while its
upstream, a CallbackMemoryResource, waits in Python for the main thread. Thread B then
allocates (or frees) through the same adaptor and blocks in librmm.so on that mutex. Had B
kept the GIL while blocked, neither the main thread nor A's callback could run again: a
deadlock. The scenario runs in a child process so that such a deadlock fails the test
through the timeout instead of hanging the test run.
"""

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    r"""
    import ctypes
    import threading
    import time

    import rmm
    import rmm.mr as mr

    WAIT = 20  # seconds; only reached when something is wrong

    lib = ctypes.CDLL(rmm.get_library_path())
    res = ctypes.c_void_p
    lib.rmm_thread_safe_adaptor_create.argtypes = [res, ctypes.POINTER(res)]
    lib.rmm_thread_safe_adaptor_create.restype = ctypes.c_uint32
    lib.rmm_set_current_device_resource.argtypes = [res, ctypes.POINTER(res)]
    lib.rmm_set_current_device_resource.restype = ctypes.c_uint32
    lib.rmm_resource_release.argtypes = [res]

    base = mr.CudaMemoryResource()
    block = {"allocate": 1000, "deallocate": None}  # size whose callback waits
    entered, release = threading.Event(), threading.Event()

    def wait_for_main():
        entered.set()
        if not release.wait(WAIT):
            raise TimeoutError("the main thread never ran again")

    def allocate(size, stream):
        if size == block["allocate"]:
            wait_for_main()
        return base.allocate(size, stream)

    def deallocate(ptr, size, stream):
        if size == block["deallocate"]:
            wait_for_main()
        base.deallocate(ptr, size, stream)

    cb = mr.CallbackMemoryResource(allocate, deallocate)
    ts = res()
    assert lib.rmm_thread_safe_adaptor_create(cb._handle.address, ctypes.byref(ts)) == 0
    assert lib.rmm_set_current_device_resource(ts, None) == 0
    lib.rmm_resource_release(ts)
    serial = mr.get_current_device_resource()  # the C-made adaptor, as Python sees it

    def contend(a_work, b_work):
        done = {}

        def run(name, work):
            work()
            done[name] = time.monotonic()

        entered.clear()
        release.clear()
        a = threading.Thread(target=run, args=("a", a_work), daemon=True)
        a.start()
        assert entered.wait(WAIT), "A's callback never ran"
        b = threading.Thread(target=run, args=("b", b_work), daemon=True)
        b.start()
        # B is blocked in librmm.so on the adaptor's mutex, which A holds. This thread
        # runs Python code meanwhile: B does not hold the GIL.
        time.sleep(0.3)
        assert not done, f"B did not wait for A's mutex: {done}"
        released_at = time.monotonic()
        release.set()
        a.join(WAIT)
        b.join(WAIT)
        assert not a.is_alive() and not b.is_alive(), "A or B never finished"
        assert done["a"] >= released_at and done["b"] >= released_at

    # allocate: A through rmm._ffi.allocate, B through a DeviceBuffer (rmm._ffi.Allocation)
    held = {}
    buffers = []
    contend(
        lambda: held.setdefault("a", serial.allocate(1000)),
        lambda: buffers.append(rmm.DeviceBuffer(size=2000)),
    )
    # deallocate: A through rmm._ffi.deallocate, B drops the last reference to a buffer
    block["allocate"], block["deallocate"] = None, 1000
    contend(lambda: serial.deallocate(held["a"], 1000), lambda: buffers.pop())
    assert not buffers
    assert lib.rmm_set_current_device_resource(None, None) == 0
    print("OK")
    """
)


def test_gil_released_while_librmm_waits():
    env = dict(os.environ)
    env.setdefault("RMM_RUNTIME", "host")
    try:
        proc = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
        )
    except subprocess.TimeoutExpired as e:
        raise AssertionError(
            "deadlock: a thread kept the GIL while librmm.so waited for a lock held by a "
            f"thread running a Python callback\n{e.stdout}\n{e.stderr}"
        ) from None
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("OK"), proc.stdout + proc.stderr
