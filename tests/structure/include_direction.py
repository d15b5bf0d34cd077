#!/usr/bin/env python3
"""The layers, checked: every #include "..." of the project's sources goes
down the layers or stays in its own, never up.

The layers are the libraries of CMakeLists.txt (guard_common, guard_base,
...; docs/architecture.md draws them) and what each may use is what its
target_link_libraries reach, read from CMakeLists.txt itself. A file belongs
to the library that lists it (a header to the library that lists its .cc or
.c, else to the one that lists the sources of its folder). Besides:
  - the shim (interpose/) includes only its own headers and the C headers
    of common/; nothing else includes interpose/ but the shim's unit tests;
  - tests/unit/LAYER/ may include what guard_LAYER may (and the test
    helpers of those layers' tests/unit/ folders), tests/unit/support/ only
    common/, tests/e2e/ what the guard binary may, tests/programs/ only
    the C headers of common/ (and each test folder its own files).

Usage: include_direction.py SOURCE_DIR. Prints each include in the wrong
direction and exits 1; exits 0 when there is none.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE_EXTS = (".h", ".cc", ".c")


def cmake_commands(text, name):
    """The argument lists of every call of command `name` in CMake `text`."""
    text = re.sub(r"#[^\n]*", "", text)
    for m in re.finditer(r"\b" + name + r"\s*\(([^)]*)\)", text):
        yield m.group(1).split()


def read_layers(root):
    """(owner of each listed source, direct dependencies of each target)."""
    with open(os.path.join(root, "CMakeLists.txt")) as f:
        text = f.read()
    owner, deps = {}, {}
    for command in ("add_library", "add_executable"):
        for args in cmake_commands(text, command):
            target = args[0]
            if not target.startswith("guard"):
                continue
            deps.setdefault(target, set())
            for a in args[1:]:
                if a.endswith(SOURCE_EXTS) and "$" not in a:
                    owner[os.path.normpath(a)] = target
    for args in cmake_commands(text, "target_link_libraries"):
        if args[0] in deps:
            deps[args[0]].update(a for a in args[1:] if a in deps or a.startswith("guard_"))
    return owner, deps


def reach(target, deps):
    """`target` and every library its links reach."""
    seen, todo = set(), [target]
    while todo:
        t = todo.pop()
        if t not in seen:
            seen.add(t)
            todo.extend(deps.get(t, ()))
    return seen


def is_c_header(root, rel):
    """A header a C file can include: no namespace, class, template or
    using, and only .h system headers."""
    try:
        with open(os.path.join(root, rel)) as f:
            text = f.read()
    except OSError:
        return False
    if re.search(r"^\s*(namespace|class|template|using)\b", text, re.M):
        return False
    return all(h.endswith(".h") for h in re.findall(r"^\s*#\s*include\s+<([^>]+)>", text, re.M))


class Layers:
    def __init__(self, root):
        self.root = root
        self.owner, self.deps = read_layers(root)
        self.folder_owner = {}
        for src, target in self.owner.items():
            self.folder_owner.setdefault(os.path.dirname(src), set()).add(target)

    def library_of(self, rel):
        """The library `rel` belongs to, or None."""
        if rel in self.owner:
            return self.owner[rel]
        stem = os.path.splitext(rel)[0]
        for ext in (".cc", ".c"):
            if stem + ext in self.owner:
                return self.owner[stem + ext]
        owners = self.folder_owner.get(os.path.dirname(rel), set())
        return next(iter(owners)) if len(owners) == 1 else None


def project_files(root, top):
    for d, dirs, files in os.walk(os.path.join(root, top)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SOURCE_EXTS):
                yield os.path.relpath(os.path.join(d, name), root)


def includes(root, rel):
    """(line, included path as the project names it) for each #include "..."."""
    with open(os.path.join(root, rel), errors="replace") as f:
        text = f.read()
    for m in INCLUDE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        name = m.group(1)
        beside = os.path.normpath(os.path.join(os.path.dirname(rel), name))
        if not os.path.exists(os.path.join(root, name)) and os.path.exists(os.path.join(root, beside)):
            name = beside
        yield line, os.path.normpath(name)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    layers = Layers(root)
    problems = []

    def judge(rel, allowed_libraries, allowed_folders=(), c_headers_of_common=False, what=""):
        for line, inc in includes(root, rel):
            if any(inc == f or inc.startswith(f + "/") for f in allowed_folders):
                continue
            if inc.startswith("interpose/"):
                problems.append(f"{rel}:{line}: includes {inc}: only the shim and its unit tests include interpose/")
                continue
            if c_headers_of_common and inc.startswith("common/") and is_c_header(root, inc):
                continue
            lib = layers.library_of(inc) if (inc.startswith("common/") or inc.startswith("supervisor/")) else None
            if lib is None and not (inc.startswith("common/") or inc.startswith("supervisor/")):
                if not inc.startswith("tests/"):
                    continue  # not one of the project's layers (a system header in quotes, say)
            if lib is not None and lib in allowed_libraries:
                continue
            problems.append(f"{rel}:{line}: includes {inc} ({lib or 'in no layer'}), not for {what}")

    # The libraries and the program.
    for top in ("common", "supervisor"):
        for rel in project_files(root, top):
            lib = layers.library_of(rel)
            if lib is None:
                problems.append(f"{rel}: in no library of CMakeLists.txt (add it to the list of its layer)")
                continue
            allowed = reach(lib, layers.deps)
            judge(rel, allowed, what=f"{lib}, which links {', '.join(sorted(allowed - {lib})) or 'nothing of guard'}")

    # The shim.
    for rel in project_files(root, "interpose"):
        judge(rel, set(), ("interpose",), True, "the shim (interpose/: its own headers and common/'s C headers)")

    # The tests.
    unit = os.path.join(root, "tests", "unit")
    for layer in sorted(os.listdir(unit)) if os.path.isdir(unit) else []:
        folder = os.path.join("tests", "unit", layer)
        if layer == "interpose":
            for rel in project_files(root, folder):
                judge(rel, set(), ("interpose", folder, "tests/unit/support"), True, "the shim's unit tests")
        elif layer == "support":
            for rel in project_files(root, folder):
                judge(rel, reach("guard_common", layers.deps), (folder,), what="tests/unit/support (common/ only)")
        else:
            lib = "guard_" + layer
            if lib not in layers.deps:
                problems.append(f"{folder}: no library {lib} in CMakeLists.txt for these unit tests")
                continue
            allowed = reach(lib, layers.deps)
            # The test helpers of the layers it may use too (a fake of capture's, say).
            helpers = tuple(os.path.join("tests", "unit", t[len("guard_"):]) for t in allowed)
            for rel in project_files(root, folder):
                judge(rel, allowed, helpers + ("tests/unit/support",), what=f"{lib}'s unit tests")
    for rel in project_files(root, "tests/e2e"):
        judge(rel, reach("guard", layers.deps), ("tests/e2e",), what="the end-to-end tests (what guard links)")
    for rel in project_files(root, "tests/programs"):
        judge(rel, set(), ("tests/programs",), True, "the test programs (common/'s C headers only)")

    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) against the layers (CMakeLists.txt, docs/architecture.md)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
