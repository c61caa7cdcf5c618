"""scripts/check_layers.py: the repository passes, and a tree with an include that runs back up
(or names a file that does not exist) fails with the file, line and rule."""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "check_layers.py")


def run(root):
    return subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)


class CheckLayers(unittest.TestCase):
    def tree(self, files):
        d = tempfile.mkdtemp(prefix="ringsim-layers-")
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", d]))
        for path, text in files.items():
            os.makedirs(os.path.join(d, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(d, path), "w") as f:
                f.write(text)
        return d

    def test_repository_runs_down(self):
        r = run(ROOT)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("run down the layers", r.stdout)

    def test_down_includes_pass(self):
        d = self.tree({
            "models/io/error.hpp": "#pragma once\n",
            "models/workload/mask.hpp": '#include "models/io/error.hpp"\n#include <vector>\n',
            "models/analytic/a.cpp": '#include "models/workload/mask.hpp"\n#include "models/io/error.hpp"\n',
            "sim/step.cpp": '#include "models/analytic/a.cpp"\n',
            "cli/main.cpp": '#include "sim/step.cpp"\n#include "io/atomic.hpp"\n',
            "io/atomic.hpp": "#pragma once\n",
        })
        r = run(d)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_room_running_up_fails(self):
        d = self.tree({
            "models/io/error.hpp": '#include "models/workload/mask.hpp"\n',
            "models/workload/mask.hpp": "#pragma once\n",
        })
        r = run(d)
        self.assertEqual(r.returncode, 1)
        self.assertIn("models/io/error.hpp:1: includes models/workload/mask.hpp", r.stdout)
        self.assertIn("running back up", r.stdout)

    def test_layer_running_up_fails(self):
        d = self.tree({
            "models/io/error.hpp": '\n\n#include "sim/engine.hpp"\n',
            "sim/engine.hpp": "#pragma once\n",
            "gui/window.cpp": '#include "cli/main.hpp"\n',
            "cli/main.hpp": "#pragma once\n",
        })
        r = run(d)
        self.assertEqual(r.returncode, 1)
        self.assertIn("models/io/error.hpp:3: includes sim/engine.hpp", r.stdout)
        self.assertIn("gui/window.cpp:1: includes cli/main.hpp", r.stdout)

    def test_missing_file_and_undeclared_room_fail(self):
        d = self.tree({
            "models/workload/mask.hpp": '#include "models/io/gone.hpp"\n',
            "models/io/x.hpp": "#pragma once\n",
            "models/extra/y.hpp": '#include "models/io/x.hpp"\n',
        })
        r = run(d)
        self.assertEqual(r.returncode, 1)
        self.assertIn("models/io/gone.hpp, which does not exist", r.stdout)
        self.assertIn("models/extra is not a declared room", r.stdout)


if __name__ == "__main__":
    unittest.main()
