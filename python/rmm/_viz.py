"""The ``rmm-viz`` command of the wheel (its console script): runs the ``rmm-viz`` program
the package carries (``rmm/bin/rmm-viz``, built from the repository's ``tools/``) with the
command's arguments. ``rmm-viz SNAPSHOT.json -o REPORT.html`` turns a memory snapshot
(``rmm.statistics.dump_snapshot``) into an HTML report; see docs/memory-history.md."""

import os
import sys


def executable():
    """Path of the ``rmm-viz`` program inside the package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "rmm-viz")


def main():
    """Replaces this process with ``rmm-viz``, passing the command line on."""
    exe = executable()
    if not os.access(exe, os.X_OK):
        sys.exit(
            f"rmm-viz: {exe} is missing or not executable: this build of the rmm package "
            "does not carry the viewer (python/build-and-test.sh bundles it)"
        )
    os.execv(exe, ["rmm-viz", *sys.argv[1:]])
