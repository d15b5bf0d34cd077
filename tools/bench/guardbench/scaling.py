"""The files-per-directory rows: rm -rf of one directory of N small files."""
import os


class OneDirectory:
    def __init__(self, n):
        self.n = n
        self.name = "rm_rf_%d" % n
        self.label = "`rm -rf` of %d files in one directory" % n
        self.command = "rm -rf d"

    def fresh_tree(self, _staged, dst):
        d = os.path.join(dst, "d")
        os.makedirs(d)
        for i in range(self.n):
            fd = os.open(os.path.join(d, "f%06d" % i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, b"file %d\n" % i)
            os.close(fd)
        return self.n


def sizes(quick, chosen=None):
    if chosen:
        return chosen
    return [100, 1000] if quick else [1000, 10000, 100000]
