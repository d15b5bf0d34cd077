"""The machine's memory faulted in once before the runs.

On a virtual machine whose memory the host backs only when the guest first
touches it (seen here: a Firecracker guest, session 15), the first touch of
each 4 KiB page costs about 7 us more than any later one (2 GiB: 5.1 s the
first time, 1.5 s the second). A run that needs pages no earlier run used
(the page cache of a new input, a store's copies) pays that on top of its
own work, so whichever way ran first, or used more memory, looked slower by
an amount that has nothing to do with it: `tar -x` under guard, the first
to read the archive after boot, spent 645 perf samples copying it out of the
page cache against 58 on the next run. Touching most of the free memory
once, before the first run, takes that cost out of every figure; a machine
that has been up a while is in that state anyway."""
import mmap
import time

PAGE = 4096


def mem_available_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def touch(fraction=0.85, chunk=1 << 30):
    """Writes one byte into every page of `fraction` of MemAvailable, a chunk
    at a time, each chunk unmapped again. Returns (bytes touched, seconds)."""
    want = int(mem_available_bytes() * fraction) // chunk * chunk
    t0 = time.perf_counter()
    maps = []
    try:
        # All chunks held at once: a chunk unmapped at once would give the
        # next one the same pages back.
        for _ in range(want // chunk):
            m = mmap.mmap(-1, chunk, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            m[::PAGE] = b"\1" * (chunk // PAGE)
            maps.append(m)
    finally:
        for m in maps:
            m.close()
    return len(maps) * chunk, time.perf_counter() - t0
