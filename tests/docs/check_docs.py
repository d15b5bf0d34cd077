#!/usr/bin/env python3
"""Checks that docs/*.md and README.md still describe the tree they sit in.

  check_docs.py [ROOT] [DOC...]

Fails (exit 1, one line per finding, as FILE:LINE: message) when
  * a path of the project named in a doc no longer exists: a path whose first
    folder is one of the project's top-level folders, or the name of a folder
    below them (`capture/capture.cc`, `linux/path_calls.c`: resolved against
    every folder of that name), or a bare file name with a source extension
    (`ring_test.cc`: anywhere in the project), or a relative markdown link;
  * a doc cites a section of another (`docs/ring.md, "Name locks"`) that has
    no heading or bold paragraph lead of that name;
  * a version a doc states disagrees with its constant or macro in common/
    (VERSION_RULES below), or such a constant has no rule;
  * a doc tells the project's history ("session 19", "issue 13"): a spec says
    what is, and how it got there is in the commit messages.
Paths of other projects (Aeron's, LevelDB's, the kernel's) start with a folder
the project does not have, so they are not looked at; the few that start with
one it has are listed in FOREIGN.
"""

import fnmatch
import os
import re
import sys

TOP_FOLDERS = ["supervisor", "common", "interpose", "tests", "tools", "docs", "packaging", ".ci"]
TOP_FILES = ["CMakeLists.txt", "README.md"]
# Extensions that make a bare word a file name of the project's kind.
SOURCE_EXTENSIONS = ("c", "cc", "h", "sh", "py", "md")
# Names in the docs that look like the project's own and are not: other
# projects' files, and files of a port docs/macos.md proposes.
FOREIGN = {
    "linux/fs.h",  # the kernel's uapi header
    "git/git",  # the git project on GitHub
    "libio.h",  # glibc's
    "interpose_table.c",  # interpose/darwin/, proposed in docs/macos.md
    # files of the codebases the code style holds up as models, cited bare
    "preload_interface.h", "syscalls.py", "RecordCommand.cc",  # rr
    "git.c", "pager.c", "help.c",  # git
    "bubblewrap.c", "utils.c",  # bubblewrap
    "aeron_mpsc_rb.c", "aeron_rb.h",  # Aeron
    "fsatraceso.c",  # fsatrace
    "deps_log.cc", "deps_log.h", "log_format.h", "log_format.md", "log_writer.cc", "log_reader.cc",  # ninja, LevelDB
}

COMPONENT = r"(?:[\w.\-<>*+…]|\{[\w.,\-]+\})+"
PATH_RE = re.compile(r"(?<![\w./~$:\-<>@])(" + COMPONENT + r"(?:/" + COMPONENT + r")+/?)")
BARE_RE = re.compile(r"(?<![\w./~$:\-<>@{])((?:[\w\-]|\{[\w,\-]+\})+\.(?:\{[\w,]+\}|" +
                     "|".join(SOURCE_EXTENSIONS) + r"))(?![\w/.\-])")
LINK_RE = re.compile(r"\]\(([^)\s]+)\)")
# `docs/ring.md, "Name locks"`, `format.md Part IV, "Marks"`: a doc's section,
# by a heading or by the bold words that lead a paragraph.
SECTION_REF_RE = re.compile(r"(?<![\w/])(?:docs/)?(\w+\.md)[,:]?\s+(?:Part [IVX]+,\s+)?\"([^\"]+)\"")


class Tree:
    """The project's files and folders, relative to its root."""

    def __init__(self, root):
        self.root = root
        self.files = set(TOP_FILES)
        self.dirs = set()
        for top in TOP_FOLDERS:
            for here, _, names in os.walk(os.path.join(root, top)):
                rel = os.path.relpath(here, root)
                self.dirs.add(rel)
                self.files.update(os.path.join(rel, n) for n in names)
        self.basenames = {os.path.basename(f) for f in self.files}
        self._sections = {}
        self.dirs_named = {}
        for d in self.dirs:
            self.dirs_named.setdefault(os.path.basename(d), []).append(d)

    def exists(self, rel):
        """True when rel (a glob, relative to the root) names a file or folder."""
        rel = rel.rstrip("/")
        if not any(c in rel for c in "*?["):
            return rel in self.files or rel in self.dirs
        return any(fnmatch.fnmatchcase(p, rel) for p in self.files | self.dirs)

    def sections(self, doc):
        """The headings and bold paragraph leads of doc, each on one line."""
        if doc in self._sections:
            return self._sections[doc]
        text = open(os.path.join(self.root, doc), encoding="utf-8").read()
        titles = re.findall(r"^#+\s+(.*)$", text, re.M) + re.findall(r"\*\*([^*]+)\*\*", text)
        self._sections[doc] = [one_line(t) for t in titles]
        return self._sections[doc]

    def bases_for(self, first):
        """Where a path starting with folder `first` may be rooted, or None
        when no folder of the project has that name."""
        if first in TOP_FOLDERS:
            return [""]
        if first in self.dirs_named:
            return [os.path.dirname(d) for d in self.dirs_named[first]]
        return None


def one_line(text):
    return " ".join(text.split())


def expand_braces(word):
    m = re.search(r"\{([^{}]*)\}", word)
    if not m:
        return [word]
    out = []
    for alt in m.group(1).split(","):
        out.extend(expand_braces(word[:m.start()] + alt + word[m.end():]))
    return out


def as_glob(word):
    """Placeholders (`<layer>`, `XX`, `...`) become wildcards."""
    word = re.sub(r"<[^<>/]*>", "*", word)
    word = word.replace("…", "*").replace("...", "*")
    return re.sub(r"(?<=/)XX(?=/|$)", "*", word)


def clean(token):
    return token.rstrip(".,:;")


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def check_paths(tree, doc, text, report):
    """Paths with a folder; returns the text with them blanked out."""
    consumed = []
    for m in PATH_RE.finditer(text):
        consumed.append((m.start(), m.end()))
        token = clean(m.group(1))
        if token in FOREIGN or token.startswith(("./", "../")):
            continue
        parts = token.rstrip("/").split("/")
        bases = tree.bases_for(parts[0])
        if bases is None:
            continue
        if bases != [""] and not token.endswith("/") and "." not in parts[-1]:
            continue  # `capture/restore` in prose: neither a file nor a folder
        globs = [as_glob(w) for w in expand_braces(token)]
        for g in globs:
            if not any(tree.exists(os.path.join(b, g)) for b in bases):
                report(doc, line_of(text, m.start()), "names `%s`, which does not exist" % g)

    blanked = list(text)
    for s, e in consumed:
        blanked[s:e] = " " * (e - s)
    return "".join(blanked)


def check_bare_names(tree, doc, text, report):
    """File names without a folder, in a text whose paths are blanked out."""
    for m in BARE_RE.finditer(text):
        token = clean(m.group(1))
        if token in FOREIGN:
            continue
        for g in (as_glob(w) for w in expand_braces(token)):
            if not any(fnmatch.fnmatchcase(b, g) for b in tree.basenames):
                report(doc, line_of(text, m.start()), "names file `%s`, which is nowhere in the project" % g)


def check_citations(tree, doc, text, report):
    for m in SECTION_REF_RE.finditer(text):
        target = os.path.join("docs", m.group(1))
        if target not in tree.files:
            continue  # reported above as a path
        # A citation names a heading by a part of it: "The lazy capture"
        # for "The lazy capture: writes through an fd".
        cited = one_line(m.group(2)).rstrip(".")
        if not any(cited in title for title in tree.sections(target)):
            report(doc, line_of(text, m.start()),
                   "cites section \"%s\" of %s, which has no such heading" % (one_line(m.group(2)), target))


def check_links(tree, doc, text, report):
    for m in LINK_RE.finditer(text):
        target = m.group(1).split("#")[0]
        if not target or re.match(r"[a-z]+:", target):
            continue
        rel = os.path.normpath(os.path.join(os.path.dirname(doc), target))
        if not tree.exists(rel):
            report(doc, line_of(text, m.start()), "links to `%s`, which does not exist" % rel)


HISTORY_RE = re.compile(r"\b(?:[Ss]ession|[Ii]ssue)s?\s+\d+\b")


def check_history(doc, text, report):
    for m in HISTORY_RE.finditer(text):
        report(doc, line_of(text, m.start()),
               "tells history (\"%s\"): say what is; the history is in the commit messages"
               % " ".join(m.group(0).split()))


# Versions: each constant of a versioned format, where it is defined, and
# what each doc states about it. A pattern's group is the version the doc
# states; every pattern must match at least once (a rewritten table must
# bring its rule along).
CONSTANTS = {
    "kMajorVersion": ("common/journal_format.h", r"\bkMajorVersion = (\d+);"),
    "kMinorVersion": ("common/journal_format.h", r"\bkMinorVersion = (\d+);"),
    "kStoreVersion": ("common/blob_store_layout.h", r"\bkStoreVersion = (\d+);"),
    "kFormatVersion": ("common/session_meta.h", r"\bkFormatVersion = (\d+);"),
    "GUARD_RING_VERSION": ("common/ring_format.h", r"#define GUARD_RING_VERSION (\d+)u"),
    "GUARD_SHIM_PROTOCOL": ("common/shim_interface.h", r"#define GUARD_SHIM_PROTOCOL (\d+)u"),
    "kAppendFormatVersion": ("common/blob_append_format.h", r"\bkAppendFormatVersion = (\d+);"),
}
VERSION_RULES = [
    # (doc, constant or "major.minor", pattern)
    ("docs/format.md", "kMajorVersion", r"\| 8 +\| 2 +\| major +\| (\d+) "),
    ("docs/format.md", "kMinorVersion", r"\| 10 +\| 2 +\| minor +\| (\d+) "),
    ("docs/format.md", "major.minor", r"\| value in version (\d+\.\d+) "),
    ("docs/format.md", "kMajorVersion", r"refuses `major > (\d+)`"),
    ("docs/format.md", "kMajorVersion", r"newer than this guard understands \((\d+)\)`"),
    ("docs/format.md", "kMinorVersion", r"Journals are written\s+with minor version (\d+)\."),
    ("docs/format.md", "kStoreVersion", r"### Store layout \(versions 1 and (\d+)\)"),
    ("docs/format.md", "kStoreVersion", r"VERSION +\"1\\n\", or \"(\d+)\\n\""),
    ("docs/format.md", "kAppendFormatVersion", r"fixed32 format version, (\d+)"),
    ("docs/format.md", "kFormatVersion", r"\| `format_version` +\| integer +\| (\d+) "),
    ("docs/format.md", "kFormatVersion", r"refuses `format_version` greater than (\d+)"),
    ("docs/ring.md", "GUARD_RING_VERSION", r"## Layout \(version (\d+)\)"),
    ("docs/ring.md", "GUARD_RING_VERSION", r"\| `version` u32 \| (\d+);"),
    ("docs/shim.md", "GUARD_SHIM_PROTOCOL", r"The protocol is number (\d+)\s+\("),
]
# The journal's version sections: the last one is the current version, and
# what the plan names is later than it.
JOURNAL_SECTION_RE = re.compile(r"^#### Version (\d+)\.(\d+)$", re.M)
JOURNAL_PLAN_RE = re.compile(r"^#### Plan for the next version\n(.*?)(?=^#|\Z)", re.M | re.S)
PLANNED_RE = re.compile(r"^\* (\d+)\.(\d+) \(", re.M)


def read_constants(root, report):
    values = {}
    for name, (header, pattern) in CONSTANTS.items():
        path = os.path.join(root, header)
        text = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        m = re.search(pattern, text)
        if not m:
            report(header, 1, "defines no %s any more (tests/docs/check_docs.py, CONSTANTS)" % name)
            continue
        values[name] = int(m.group(1))
    # A versioned format added without a rule here would drift unseen.
    for header in sorted(os.listdir(os.path.join(root, "common"))):
        if not header.endswith(".h"):
            continue
        text = open(os.path.join(root, "common", header), encoding="utf-8").read()
        for m in re.finditer(r"#define (GUARD_\w*_VERSION|GUARD_SHIM_PROTOCOL)\b|\b(k\w*Version) =", text):
            name = m.group(1) or m.group(2)
            if name not in CONSTANTS:
                report("common/" + header, line_of(text, m.start()),
                       "%s has no version rule in tests/docs/check_docs.py" % name)
    return values


def check_versions(root, docs, values, report):
    texts = {d: open(os.path.join(root, d), encoding="utf-8").read() for d in docs}
    for doc, name, pattern in VERSION_RULES:
        if doc not in texts:
            continue
        if name == "major.minor":
            if "kMajorVersion" not in values or "kMinorVersion" not in values:
                continue
            want = "%d.%d" % (values["kMajorVersion"], values["kMinorVersion"])
        elif name in values:
            want = str(values[name])
        else:
            continue
        text = texts[doc]
        found = list(re.finditer(pattern, text))
        if not found:
            report(doc, 1, "states no version for %s any more (pattern %r in tests/docs/check_docs.py)"
                   % (name, pattern))
        for m in found:
            if m.group(1) != want:
                report(doc, line_of(text, m.start()),
                       "says %s where %s is %s" % (m.group(1), name, want))

    doc = "docs/format.md"
    if doc in texts and "kMajorVersion" in values and "kMinorVersion" in values:
        text = texts[doc]
        current = (values["kMajorVersion"], values["kMinorVersion"])
        sections = [(int(m.group(1)), int(m.group(2)), m.start()) for m in JOURNAL_SECTION_RE.finditer(text)]
        latest = max(sections, default=(0, 0, 0))
        if latest[:2] != current:
            report(doc, line_of(text, latest[2]),
                   "has no section \"Version %d.%d\" for the journal's current version" % current)
        plan = JOURNAL_PLAN_RE.search(text)
        if not plan:
            report(doc, 1, "has no \"Plan for the next version\"")
        else:
            for m in PLANNED_RE.finditer(plan.group(1)):
                if (int(m.group(1)), int(m.group(2))) <= current:
                    report(doc, line_of(text, plan.start(1) + m.start()),
                           "plans version %s.%s, which the journal already is or passed (%d.%d)"
                           % (m.group(1), m.group(2), current[0], current[1]))


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    docs = argv[2:] or (["README.md"] + sorted("docs/" + n for n in os.listdir(os.path.join(root, "docs"))
                                               if n.endswith(".md")))
    findings = []

    def report(doc, line, message):
        findings.append("%s:%d: %s" % (doc, line, message))

    tree = Tree(root)
    for doc in docs:
        text = open(os.path.join(root, doc), encoding="utf-8").read()
        check_bare_names(tree, doc, check_paths(tree, doc, text, report), report)
        check_citations(tree, doc, text, report)
        check_links(tree, doc, text, report)
        check_history(doc, text, report)
    check_versions(root, docs, read_constants(root, report), report)
    for f in findings:
        print(f)
    print("%d docs checked, %d findings" % (len(docs), len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
