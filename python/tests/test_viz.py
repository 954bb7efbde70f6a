"""The wheel's ``rmm-viz`` command (``[project.scripts]``, running the ``rmm-viz`` program
the package carries): found on the environment's PATH, it turns a snapshot recorded with
rmm.statistics into an HTML report (docs/memory-history.md)."""

import json
import os
import shutil
import subprocess
import sysconfig

import pytest

import rmm
import rmm.mr
from rmm.statistics import dump_snapshot, record_memory_history

MiB = 1 << 20
DATA = '<script type="application/json" id="rmm-viz-data">'


@pytest.fixture
def rmm_viz():
    """The ``rmm-viz`` the installed wheel put in this environment's scripts directory, as
    an activated environment's PATH finds it."""
    scripts = sysconfig.get_path("scripts")
    path = os.pathsep.join([scripts, os.environ.get("PATH", "")])
    exe = shutil.which("rmm-viz", path=path)
    assert exe is not None, f"no rmm-viz on the environment's PATH ({scripts})"
    assert os.path.samefile(os.path.dirname(exe), scripts), exe
    return exe


@pytest.fixture(autouse=True)
def _stop_recording():
    record_memory_history(enabled=False)
    yield
    record_memory_history(enabled=False)


def test_renders_a_recorded_snapshot(rmm_viz, tmp_path):
    pool = rmm.mr.PoolMemoryResource(
        rmm.mr.CudaMemoryResource(), initial_pool_size=MiB, maximum_pool_size=8 * MiB
    )
    rmm.mr.set_current_device_resource(pool)
    record_memory_history()
    a = rmm.DeviceBuffer(size=1000)
    b = rmm.DeviceBuffer(size=2 * MiB)
    del a
    snapshot = tmp_path / "snap.json"
    dump_snapshot(str(snapshot))
    del b

    report = tmp_path / "report.html"
    out = subprocess.run(
        [rmm_viz, str(snapshot), "-o", str(report), "--title", "from pytest"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out
    assert out.stdout.startswith(f"rmm-viz: wrote {report}"), out.stdout
    html = report.read_text()
    assert "<title>from pytest</title>" in html
    at = html.index(DATA) + len(DATA)
    data = json.loads(html[at : html.index("</script>", at)])
    assert data["format"] == "rmm-viz-data 1"
    assert data["source"] == "snap.json"
    sizes = sorted(data["allocs"]["size"])
    assert 1000 in sizes and 2 * MiB in sizes, sizes
    assert data["meta"]["live_count"] >= 1
    assert data["segments"], "the pool's chunks are in the report"


def test_arguments_reach_the_program(rmm_viz, tmp_path):
    out = subprocess.run([rmm_viz, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("usage: rmm-viz"), out
    missing = tmp_path / "missing.json"
    out = subprocess.run([rmm_viz, str(missing)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "cannot read the snapshot" in out.stderr, out
    out = subprocess.run([rmm_viz, "--frobnicate"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "unknown option --frobnicate" in out.stderr, out
