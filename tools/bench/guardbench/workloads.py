"""The workloads: each makes a fresh tree (untimed) and names the command
that is timed in it. The tree is the protected root of the guard runs."""
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(os.path.dirname(HERE), "workloads")


class Workload:
    def __init__(self, name, label, source, command, inside=None, setup=None):
        self.name = name
        self.label = label
        self.source = source      # staged input ("key" or "key/sub/path") copied as the tree
        self.command = command    # shell command, run with the tree as cwd
        self.inside = inside      # copy the input into tree/inside (None: as the tree)
        self.setup = setup        # untimed shell command run in the fresh tree

    def source_path(self, staged):
        key, _, sub = self.source.partition("/")
        return os.path.join(staged[key], sub) if sub else staged[key]

    def fresh_tree(self, staged, dst):
        """Copies the input to dst (the root); returns its file count."""
        if self.source is None:
            os.makedirs(dst)
        elif self.inside:
            os.makedirs(dst)
            subprocess.run(["cp", "-a", self.source_path(staged), os.path.join(dst, self.inside)], check=True)
        else:
            subprocess.run(["cp", "-a", self.source_path(staged), dst], check=True)
        if self.setup:
            subprocess.run(["bash", "-c", self.setup], cwd=dst, check=True)
        return count_files(dst)


def count_files(root):
    n = 0
    for _d, _dirs, files in os.walk(root):
        n += len(files)
    return n


def all_workloads(staged, quick, scale=1):
    rmw_counts = "%d %d %d" % (40 * scale, 5 * scale, 5 * scale) if quick else "2000 100 100"
    tar = os.path.join(staged["npm"], "node_modules.tar")
    return [
        Workload("git_checkout", "`git checkout` CPython 3.10 -> 3.13 `Lib/` and back", "stdlib-repo",
                 "git checkout -q b && git checkout -q a",
                 # cp -a gives every file a new inode and ctime: without a
                 # refresh git would re-read the whole tree in the timed run.
                 setup="git update-index -q --refresh"),
        Workload("sed_i", "`sed -i` over every `.py` of CPython 3.13 `Lib/`", "sed-tree",
                 "find . -name '*.py' -print0 | xargs -0 sed -i -e 's/^import /import  /'"),
        Workload("rm_rf", "`rm -rf` of node_modules", "npm/node_modules", "rm -rf node_modules",
                 inside="node_modules"),
        Workload("tar_x", "`tar -x` of node_modules", None, "tar -xf " + tar),
        Workload("node_rmw", "node: read-modify-writes (1/5 by temp + rename), deletes, new files",
                 "lib313", "node %s . %s" % (os.path.join(SCRIPTS, "rmw.js"), rmw_counts)),
        Workload("python_rmw", "the same in python3", "lib313",
                 "/usr/bin/python3 %s . %s" % (os.path.join(SCRIPTS, "rmw.py"), rmw_counts)),
        # Issue 13: a static program never loads the shim, so --mode auto
        # must cost what --mode trace does on it.
        Workload("busybox_rm_rf", "busybox-static `rm -rf` of node_modules", "npm/node_modules",
                 "/bin/busybox rm -rf node_modules", inside="node_modules"),
        Workload("make_j2", "`make -j2` of Lua 5.4.4 (Debian's source)", "lua", "make -s -j2 linux"),
    ]
