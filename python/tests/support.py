"""What the module's tests share: the CLI of the same build (RINGSIM_CLI, set by ctest) and its
outputs read as the module reads its own."""
import os
import subprocess

import pytest

CLI = os.environ.get("RINGSIM_CLI", "")


def cli(*args):
    """The CLI's stdout; a failure fails the test with its stderr."""
    if not CLI:
        pytest.fail("RINGSIM_CLI is not set (ctest sets it to the build's ringsim)")
    done = subprocess.run([CLI, *args], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail("ringsim %s: exit %d: %s" % (" ".join(args), done.returncode, done.stderr.strip()))
    return done.stdout


def data_rows(csv_text):
    """The CSV's header and rows without the sweep file's comment lines."""
    return "".join(l for l in csv_text.splitlines(keepends=True) if not l.startswith("#"))
