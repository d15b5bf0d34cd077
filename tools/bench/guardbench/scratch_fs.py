"""A dedicated ext4 image, loop-mounted without online discard.

The machine's root filesystem is mounted with `discard`: after a mass delete
it sends TRIMs that slow whatever runs next, and would swamp the timings of
rm -rf and of everything after it. The trees and GUARD_HOME live on this
image instead; it is unmounted and removed when the benchmark ends, however
it ends (atexit, and SIGINT/SIGTERM turned into SystemExit).
"""
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile


def _to_exit(signum, _frame):
    raise SystemExit(128 + signum)


class ScratchFs:
    def __init__(self, size, allow_plain_dir=False):
        self.size = size
        self.allow_plain_dir = allow_plain_dir
        self.base = None
        self.mnt = None
        self.mounted = False

    def __enter__(self):
        signal.signal(signal.SIGTERM, _to_exit)
        signal.signal(signal.SIGINT, _to_exit)
        self.base = tempfile.mkdtemp(prefix="guard-bench.", dir="/var/tmp")
        atexit.register(self.close)
        img = os.path.join(self.base, "ext4.img")
        self.mnt = os.path.join(self.base, "mnt")
        os.mkdir(self.mnt)
        try:
            subprocess.run(["truncate", "-s", self.size, img], check=True)
            subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "nodiscard", img], check=True)
            subprocess.run(["mount", "-o", "loop,nodiscard", img, self.mnt], check=True,
                           stderr=subprocess.PIPE)
            self.mounted = True
        except (subprocess.CalledProcessError, OSError) as e:
            if not self.allow_plain_dir:
                raise SystemExit("run.sh: cannot loop-mount an ext4 image (%s); run as root" % e)
            print("run.sh: loop mount failed (%s); using a plain directory" % e, file=sys.stderr)
        return self

    def describe(self):
        out = subprocess.run(["findmnt", "-n", "-o", "SOURCE,FSTYPE,OPTIONS", "--target", self.mnt],
                             capture_output=True, text=True).stdout.split("\n")[0]
        kind = "loop-mounted ext4 image (%s)" % self.size if self.mounted else "plain directory"
        return "%s: %s" % (kind, out)

    def close(self):
        if self.base is None:
            return
        os.chdir("/")
        if self.mounted:
            if subprocess.run(["umount", self.mnt]).returncode != 0:
                subprocess.run(["umount", "-l", self.mnt])
            self.mounted = False
        shutil.rmtree(self.base, ignore_errors=True)
        self.base = None

    def __exit__(self, *exc):
        self.close()
