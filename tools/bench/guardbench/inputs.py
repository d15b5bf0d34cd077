"""The real trees the workloads run on, prepared once and cached.

Full runs use (cached under --cache, each marked ready only once complete):
  stdlib-repo/  a git repository: branch `a` holds CPython 3.10's Lib/,
                branch `b` CPython 3.13's (pyenv's builds on this machine,
                __pycache__ and site-packages left out), checked out at `a`
  lib313/       CPython 3.13's Lib/ alone (the read-modify-write scripts)
  sed-tree/     the .py files of CPython 3.13's Lib/
  npm/          node_modules of npm packages at pinned versions
                (package.json here), installed with --ignore-scripts, and
                node_modules.tar of it
  lua/          Lua 5.4.4's source, from Debian's archive (`apt-get source
                lua5.4` through a temporary deb-src list)
--quick generates small trees of the same shapes instead, downloading nothing.
"""
import json
import os
import shutil
import subprocess
import tempfile

PY310 = "/root/.pyenv/versions/3.10.13/lib/python3.10"
PY313 = "/root/.pyenv/versions/3.13.0/lib/python3.13"
NPM_PACKAGES = {"eslint": "8.57.0", "express": "4.19.2", "jest": "29.7.0",
                "lodash": "4.17.21", "webpack": "5.91.0"}
LUA_SOURCE = "lua5.4"
DEB_SRC = """Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""


def _run(argv, **kw):
    subprocess.run(argv, check=True, **kw)


def _ignore_lib(_dir, names):
    return [n for n in names if n in ("__pycache__", "site-packages")]


def _ignore_all_but_py(d, names):
    return [n for n in names if n in ("__pycache__", "site-packages")
            or (not n.endswith(".py") and not os.path.isdir(os.path.join(d, n)))]


def _cached(cache, name, make):
    """cache/name, made by make(path) unless a previous run finished it."""
    path = os.path.join(cache, name)
    ready = path + ".ready"
    if not os.path.exists(ready):
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        print("preparing %s ..." % path, flush=True)
        make(path)
        open(ready, "w").close()
    return path


def _git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@localhost",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@localhost",
               GIT_AUTHOR_DATE="2025-01-01T00:00:00Z", GIT_COMMITTER_DATE="2025-01-01T00:00:00Z")
    _run(["git", "-C", repo] + list(args), env=env, stdout=subprocess.DEVNULL)


def _make_repo(path, tree_a, tree_b):
    """A repository whose branches a and b hold the two trees."""
    _git(path, "init", "-q", "-b", "a")
    _git(path, "config", "gc.auto", "0")
    for branch, copy in (("a", tree_a), ("b", tree_b)):
        if branch == "b":
            _git(path, "checkout", "-q", "-b", "b")
            _git(path, "rm", "-rq", ".")
        copy(path)
        _git(path, "add", "-A")
        _git(path, "commit", "-q", "-m", branch)
    _git(path, "checkout", "-q", "a")


def _copy_into(src, ignore):
    def copy(dst):
        for name in sorted(os.listdir(src)):
            if ignore(src, [name]):
                continue
            s = os.path.join(src, name)
            if os.path.isdir(s) and not os.path.islink(s):
                shutil.copytree(s, os.path.join(dst, name), symlinks=True, ignore=ignore)
            else:
                shutil.copy2(s, os.path.join(dst, name), follow_symlinks=False)
    return copy


def _make_npm(path):
    with open(os.path.join(path, "package.json"), "w") as f:
        json.dump({"name": "guard-bench-tree", "version": "1.0.0", "private": True,
                   "dependencies": NPM_PACKAGES}, f)
    _run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=path,
         stdout=subprocess.DEVNULL)
    _run(["tar", "-cf", "node_modules.tar", "node_modules"], cwd=path)


def _make_lua(path):
    with tempfile.TemporaryDirectory() as apt:
        parts = os.path.join(apt, "parts")
        lists = os.path.join(apt, "lists")
        os.makedirs(parts)
        os.makedirs(os.path.join(lists, "partial"))
        with open(os.path.join(parts, "bench-src.sources"), "w") as f:
            f.write(DEB_SRC)
        opts = ["-o", "APT::Sandbox::User=root", "-o", "Dir::Etc::SourceList=/dev/null", "-o", "Dir::Etc::SourceParts=" + parts,
                "-o", "Dir::State::Lists=" + lists]
        _run(["apt-get", "-q"] + opts + ["update"], stdout=subprocess.DEVNULL)
        _run(["apt-get", "-q"] + opts + ["source", "--download-only", LUA_SOURCE], cwd=apt,
             stdout=subprocess.DEVNULL)
        orig = [n for n in os.listdir(apt) if n.endswith(".orig.tar.gz")][0]
        _run(["tar", "-xzf", os.path.join(apt, orig), "--strip-components=1", "-C", path])


def prepare_full(cache):
    os.makedirs(cache, exist_ok=True)
    for d in (PY310, PY313):
        if not os.path.isdir(d):
            raise SystemExit("run.sh: %s is missing (pyenv's CPython build)" % d)
    return {
        "stdlib-repo": _cached(cache, "stdlib-repo", lambda p: _make_repo(
            p, _copy_into(PY310, _ignore_lib), _copy_into(PY313, _ignore_lib))),
        "lib313": _cached(cache, "lib313", _copy_into(PY313, _ignore_lib)),
        "sed-tree": _cached(cache, "sed-tree", _copy_into(PY313, _ignore_all_but_py)),
        "npm": _cached(cache, "npm", _make_npm),
        "lua": _cached(cache, "lua", _make_lua),
    }


# --- --quick: small generated trees of the same shapes -----------------------

def _gen_py_tree(path, n, variant):
    for i in range(n):
        d = os.path.join(path, "pkg%d" % (i % 4))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "mod%03d.py" % i), "w") as f:
            f.write("import os\nimport sys\n# %s %d\n" % (variant, i) + "x = %d\n" % i * (i % 7 + 1))


def _gen_c_project(path):
    for i in range(4):
        with open(os.path.join(path, "f%d.c" % i), "w") as f:
            f.write("int f%d(int x) { return x * %d + 1; }\n" % (i, i + 2))
    with open(os.path.join(path, "main.c"), "w") as f:
        f.write("".join("int f%d(int);\n" % i for i in range(4)))
        f.write("int main(void) { return f0(0) + f1(0) + f2(0) + f3(0) - 4; }\n")
    with open(os.path.join(path, "Makefile"), "w") as f:
        f.write("OBJS = main.o f0.o f1.o f2.o f3.o\nlinux: prog\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n")


def prepare_quick(where, scale=1):
    """Small trees under `where` (on the scratch filesystem); `scale` times
    the files of each."""
    def make(name, fn):
        p = os.path.join(where, name)
        os.makedirs(p)
        fn(p)
        return p
    return {
        "stdlib-repo": make("stdlib-repo", lambda p: _make_repo(
            p, lambda d: _gen_py_tree(d, 40 * scale, "a"), lambda d: _gen_py_tree(d, 44 * scale, "b"))),
        "lib313": make("lib313", lambda p: _gen_py_tree(p, 60 * scale, "lib")),
        "sed-tree": make("sed-tree", lambda p: _gen_py_tree(p, 30 * scale, "sed")),
        "npm": make("npm", lambda p: (_gen_py_tree(os.path.join(p, "node_modules"), 200 * scale, "npm"),
                                      _run(["tar", "-cf", "node_modules.tar", "node_modules"], cwd=p))),
        "lua": make("lua", _gen_c_project),
    }


def stage(inputs, where):
    """Copies of the cached inputs on the scratch filesystem, which each run's
    fresh tree is then copied from (cp -a within one filesystem)."""
    staged = {}
    for name, src in inputs.items():
        dst = os.path.join(where, name)
        if os.path.realpath(src) != os.path.realpath(dst):
            _run(["cp", "-a", src, dst])
        staged[name] = dst
    return staged
