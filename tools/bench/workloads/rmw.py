#!/usr/bin/env python3
"""rmw.py ROOT N_RMW N_DEL N_NEW: what an agent's edits look like, in python3.

Deterministic (rmw.js does the very same): the regular files under ROOT in
sorted order; the first N_RMW are read, changed and written back (every
fifth through a temporary file renamed over it), the next N_DEL deleted,
and N_NEW new files created in ROOT."""
import os
import sys


def files(root):
    out = []
    for d, dirs, names in os.walk(root):
        dirs.sort()
        for n in names:
            p = os.path.join(d, n)
            if os.path.isfile(p) and not os.path.islink(p):
                out.append(p)
    return sorted(out)


def main(root, n_rmw, n_del, n_new):
    paths = files(root)
    if len(paths) < n_rmw + n_del:
        sys.exit("rmw.py: %d files, need %d" % (len(paths), n_rmw + n_del))
    for i, p in enumerate(paths[:n_rmw]):
        with open(p, "rb") as f:
            data = f.read()
        data += b"\n# edited %d\n" % i
        if i % 5 == 0:
            tmp = p + ".tmp"
            with open(tmp, "wb") as f:
                f.write(data)
            os.rename(tmp, p)
        else:
            with open(p, "wb") as f:
                f.write(data)
    for p in paths[n_rmw:n_rmw + n_del]:
        os.unlink(p)
    for i in range(n_new):
        with open(os.path.join(root, "new_%03d.txt" % i), "wb") as f:
            f.write(b"new file %d\n" % i)


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:5]))
