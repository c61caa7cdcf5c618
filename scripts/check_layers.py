#!/usr/bin/env python3
"""Check that every #include runs down the layers, never back up.

Usage: python3 scripts/check_layers.py [ROOT]   (default: the repository holding this script)

Two levels of layering, declared below and described in docs/architecture.md:
  - the top-level folders: each may include the folders LAYERS names for it (and itself);
  - the rooms of models/: each may include the rooms before it in ROOMS (and itself).
An include of a project file that does not exist is reported too (a stale path after a move).
System and third-party includes (<...>, and "..." that name no project folder) are not checked.
Prints one line per violation (file:line, what it includes, what it may include) and exits 1
when there is any; 0 and a one-line summary otherwise. Standard library only.
"""
import os
import re
import sys

# models/ rooms, bottom first: a room may include the rooms before it.
ROOMS = ["io", "workload", "pipeline", "hardware", "transport", "cost", "implementations", "scenario", "families", "program",
         "catalog", "memory", "analytic", "inference"]
# Top-level folders and what each may include besides itself. Tests, benchmarks and fuzz targets
# exercise any layer.
ANY = "*"
LAYERS = {
    "io": [],
    "models": [],
    "kernels": ["models"],
    "sim": ["models"],
    "calibration": ["models", "sim"],
    "planning": ["models", "sim", "io"],
    "cli": ["models", "sim", "kernels", "calibration", "planning", "io"],
    "gui": ["models", "sim", "calibration", "planning", "io"],
    "python": ["models", "sim", "calibration", "planning", "io"],
    "bench": ANY,
    "fuzz": ANY,
    "tests": ANY,
}
SOURCE_EXT = (".cpp", ".hpp", ".cu", ".cuh", ".h")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def unit(path):
    """The layer of a repository path: 'models/ROOM' inside models/, else its top folder."""
    parts = path.split("/")
    if parts[0] == "models" and len(parts) > 2:
        return "models/" + parts[1]
    return parts[0] if len(parts) > 1 else None


def allowed(src, dst):
    """Whether layer `src` may include layer `dst`; the reason when not."""
    if src == dst:
        return True, ""
    top_src, top_dst = src.split("/")[0], dst.split("/")[0]
    if top_src == "models" and top_dst == "models":
        a, b = src.split("/", 1)[1], dst.split("/", 1)[1]
        if a not in ROOMS:
            return False, f"models/{a} is not a declared room (scripts/check_layers.py ROOMS)"
        if b not in ROOMS:
            return False, f"models/{b} is not a declared room (scripts/check_layers.py ROOMS)"
        if ROOMS.index(b) < ROOMS.index(a):
            return True, ""
        below = ", ".join(ROOMS[:ROOMS.index(a)]) or "no other room"
        return False, f"models/{a} may include {below}"
    if top_src == top_dst:
        # A file directly in models/ (none should be) against a room, or the reverse.
        return False, "files of models/ live in its rooms"
    rule = LAYERS.get(top_src)
    if rule is None:
        return False, f"{top_src}/ is not a declared layer (scripts/check_layers.py LAYERS)"
    if rule == ANY or top_dst in rule:
        return True, ""
    return False, f"{top_src}/ may include {', '.join(rule) or 'nothing outside itself'}"


def check(root):
    violations, files, includes = [], 0, 0
    tops = {d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))}
    for top in sorted(LAYERS):
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if not name.endswith(SOURCE_EXT):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                src = unit(path)
                files += 1
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        first = inc.split("/")[0]
                        if "/" not in inc or first not in tops:
                            continue  # a sibling header of a test or a third-party one
                        includes += 1
                        if not os.path.isfile(os.path.join(root, inc)):
                            violations.append(f"{path}:{lineno}: includes {inc}, which does not exist")
                            continue
                        ok, why = allowed(src, unit(inc))
                        if not ok:
                            violations.append(f"{path}:{lineno}: includes {inc} ({unit(inc)}), running back up: {why}")
    return violations, files, includes


def main(argv):
    root = os.path.abspath(argv[1]) if len(argv) > 1 else os.path.abspath(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    violations, files, includes = check(root)
    for v in violations:
        print(v)
    if violations:
        print(f"check_layers.py: {len(violations)} include(s) against the layering", file=sys.stderr)
        return 1
    print(f"check_layers.py: {includes} project includes in {files} files run down the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
