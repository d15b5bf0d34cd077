#!/bin/sh
# Links a macOS executable with `zig build-exe`, which signs it ad hoc for
# both architectures (`zig cc` signs arm64 only). Called by CMake
# (zig_toolchain.cmake): zig_link.sh ZIG TARGET OBJECTS... -o OUT LIBRARIES...
# Takes objects, archives, -l and -L; anything else is refused rather than
# dropped unseen.
set -eu
zig="$1"
target="$2"
shift 2
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# An empty entitlements list: its presence is what makes zig sign.
cat >"$dir/entitlements.plist" <<'PLIST'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict></dict></plist>
PLIST
out=""
set -- "$@" --end--
while [ "$1" != --end-- ]; do
  case "$1" in
    -o) out="$2"; shift 2; continue ;;
    -pthread|-lpthread|-ldl) ;;  # in libSystem
    -l*|-L*|*.o|*.a|*.tbd|*.dylib) set -- "$@" "$1" ;;
    *) echo "zig_link.sh: unexpected argument $1" >&2; exit 2 ;;
  esac
  shift
done
shift  # --end--
[ -n "$out" ] || { echo "zig_link.sh: no -o" >&2; exit 2; }
"$zig" build-exe -target "$target" --entitlements "$dir/entitlements.plist" -lc++ -lc -femit-bin="$out" "$@"
