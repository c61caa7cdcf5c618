"""Which build this is: ringsim.__version__, __commit__ and __build_type__, as `ringsim --version`
prints them; the commit stamp (io/build_info.cmake) falls back to "unknown" outside a git
checkout and leaves its file untouched when nothing changed (so a build recompiles nothing)."""
import os
import re
import shutil
import subprocess

import pytest

import ringsim
from support import cli

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def project_version():
    text = open(os.path.join(SOURCE, "CMakeLists.txt")).read()
    return re.search(r"project\(ringsim VERSION ([0-9.]+)", text).group(1)


def test_the_module_and_the_cli_name_the_same_build():
    assert ringsim.__version__ == project_version()
    assert re.fullmatch(r"[A-Za-z0-9._+-]+", ringsim.__commit__)
    assert ringsim.__build_type__ in ("Release", "Debug", "RelWithDebInfo", "MinSizeRel", "unspecified") or \
        re.fullmatch(r"[A-Za-z0-9._+-]+", ringsim.__build_type__)
    line = cli("--version").strip()
    assert line == "ringsim %s (commit %s, %s build)" % (ringsim.__version__, ringsim.__commit__,
                                                         ringsim.__build_type__)


def stamp(tmp_path, source):
    cmake = os.environ.get("RINGSIM_CMAKE") or shutil.which("cmake")
    if not cmake:
        pytest.skip("no cmake to run io/build_info.cmake with")
    out = tmp_path / "build_info.cpp"
    subprocess.run([cmake, "-DSOURCE_DIR=%s" % source, "-DOUTPUT=%s" % out, "-DVERSION=1.2.3",
                    "-DBUILD_TYPE=Release", "-P", os.path.join(SOURCE, "io", "build_info.cmake")], check=True,
                   capture_output=True)
    return out


def test_the_commit_stamp_is_unknown_outside_a_git_checkout_and_rewritten_only_on_change(tmp_path):
    plain = tmp_path / "not-a-checkout"
    plain.mkdir()
    out = stamp(tmp_path, plain)
    text = out.read_text()
    assert '"1.2.3", "unknown", "Release"' in text
    # The same stamp again: the file is not rewritten, so nothing that compiles it is rebuilt.
    os.utime(out, (1_000_000_000, 1_000_000_000))
    stamp(tmp_path, plain)
    assert os.stat(out).st_mtime == 1_000_000_000 and out.read_text() == text
    if shutil.which("git") and subprocess.run(["git", "-C", SOURCE, "rev-parse"], capture_output=True).returncode == 0:
        described = subprocess.run(["git", "-C", SOURCE, "describe", "--always", "--dirty", "--abbrev=12"],
                                   capture_output=True, text=True, check=True).stdout.strip()
        assert '"1.2.3", "%s", "Release"' % described in stamp(tmp_path, SOURCE).read_text()
