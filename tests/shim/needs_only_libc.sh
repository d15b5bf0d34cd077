#!/bin/sh
# The shim lives inside every program of a session: it may need libc and
# the loader, nothing else (no libstdc++, no libgcc_s, no libm).
set -eu
lib=$1
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || { echo "no NEEDED entry in $lib: not linked against libc?"; exit 1; }
status=0
for n in $needed; do
  case $n in
    libc.so.6|ld-linux-x86-64.so.2) ;;
    *) echo "$lib needs $n"; status=1 ;;
  esac
done
exit $status
