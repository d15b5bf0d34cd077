#!/usr/bin/env python3
"""The test sources of tests/CMakeLists.txt are listed there by name, not
globbed: this fails when a unit test, an end-to-end test or a source of the
end-to-end support library on disk is not in those lists (it would never be
built or run), or when a listed one is not on disk.

Usage: test_sources_listed.py SOURCE_DIR. Exits 1 and names each file.
"""
import glob
import os
import re
import sys

PATTERNS = ("unit/*/*_test.cc", "e2e/*_test.cc", "e2e/support/*.cc")


def main():
    tests = os.path.join(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "."), "tests")
    with open(os.path.join(tests, "CMakeLists.txt")) as f:
        text = re.sub(r"#[^\n]*", "", f.read())
    listed = {t for t in re.split(r"[\s()]+", text) if re.fullmatch(r"(unit|e2e)/[\w/]+\.cc", t)}
    on_disk = {os.path.relpath(p, tests) for pattern in PATTERNS for p in glob.glob(os.path.join(tests, pattern))}
    problems = [f"tests/{p}: not listed in tests/CMakeLists.txt" for p in sorted(on_disk - listed)]
    problems += [f"tests/{p}: listed in tests/CMakeLists.txt, not on disk" for p in sorted(listed - on_disk)
                 if not os.path.exists(os.path.join(tests, p))]
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
