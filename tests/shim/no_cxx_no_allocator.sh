#!/bin/sh
# The shim exports no C++ symbol and refers to none (no libstdc++, no
# exceptions, no RTTI), and calls no allocator itself: nothing on any of its
# paths allocates from the heap (what dlsym, dladdr and pthread_atfork do
# inside libc, at start or once per function, is theirs).
set -eu
lib=$1
# (__cxa_finalize is libc's, called by every shared object's crtstuff.)
syms=$(nm -D "$lib" | awk '{print $NF}' | sed 's/@.*//' | grep -vx '__cxa_finalize' || true)
bad=$(printf '%s\n' "$syms" | grep -E '^(_Z|__cxa_|__gxx_|_Unwind_)' || true)
if [ -n "$bad" ]; then echo "C++ symbols in $lib:"; echo "$bad"; exit 1; fi
undef=$(nm -D --undefined-only "$lib" | awk '{print $NF}' | sed 's/@.*//')
alloc=$(printf '%s\n' "$undef" | grep -xE 'malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|memalign|valloc|strdup|strndup|asprintf|vasprintf|open_memstream' || true)
if [ -n "$alloc" ]; then echo "$lib calls an allocator:"; echo "$alloc"; exit 1; fi
exports=$(nm -D --defined-only "$lib" | awk '{print $NF}')
[ "$(printf '%s\n' "$exports" | grep -cx 'openat')" = 1 ] || { echo "$lib does not export openat"; exit 1; }
leaked=$(printf '%s\n' "$exports" | grep -E '^shim_' || true)
if [ -n "$leaked" ]; then echo "$lib exports its internals:"; echo "$leaked"; exit 1; fi
