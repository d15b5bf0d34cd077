"""A dedicated ext4 image, loop-mounted without online discard.

The machine's root filesystem is mounted with `discard`: after a mass delete
it sends TRIMs that slow whatever runs next, and would swamp the timings of
rm -rf and of everything after it. The trees and GUARD_HOME live on this
image instead; it is unmounted and removed when the benchmark ends, however
it ends (atexit, and SIGINT/SIGTERM turned into SystemExit).

The loop device does direct I/O to its image (losetup --direct-io=on), as a
disk takes the filesystem's writes. Without it every block is cached twice,
in the filesystem's page cache and in the host's for the image file, and
each flush (every fsync and syncfs, the group commit's every 100 ms), which
the loop device turns into an fsync of the image file either way, then also
writes back the host's cached pages of it. By hand in session 18, seven
pairs each, the command inside a --mode auto session against bare: node
1.29x with direct I/O against 2.04x without, python 1.47x against 1.52x,
tar 1.49x against 1.47x, rm 1.71x against 1.56x. The image stays sparse, so
a first write to a block still allocates in the host's filesystem. Where
the image's filesystem refuses direct I/O, the device stays buffered and
describe() says so.
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
        self.direct_io = False

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
            # mount's own loop device goes when the image is unmounted
            # (autoclear), even after a benchmark that was killed.
            subprocess.run(["mount", "-o", "loop,nodiscard", img, self.mnt], check=True,
                           stderr=subprocess.PIPE)
            self.mounted = True
            device = subprocess.run(["findmnt", "-n", "-o", "SOURCE", "--target", self.mnt],
                                    capture_output=True, text=True).stdout.strip()
            self.direct_io = device.startswith("/dev/loop") and subprocess.run(
                ["losetup", "--direct-io=on", device], stderr=subprocess.DEVNULL).returncode == 0
        except (subprocess.CalledProcessError, OSError) as e:
            if not self.allow_plain_dir:
                raise SystemExit("run.sh: cannot loop-mount an ext4 image (%s); run as root" % e)
            print("run.sh: loop mount failed (%s); using a plain directory" % e, file=sys.stderr)
        return self

    def describe(self):
        out = subprocess.run(["findmnt", "-n", "-o", "SOURCE,FSTYPE,OPTIONS", "--target", self.mnt],
                             capture_output=True, text=True).stdout.split("\n")[0]
        io = "direct I/O" if self.direct_io else "buffered I/O: direct I/O refused"
        kind = "loop-mounted ext4 image (%s, %s)" % (self.size, io) if self.mounted else "plain directory"
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
