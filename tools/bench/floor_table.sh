# Sourced by the floor scripts (delete_floor.sh, create_floor.sh,
# rewrite_floor.sh): their options, and one table row per step of their
# program (build/tools/NAME DIR STEP FILES SIZE), the fastest of --runs runs,
# each in a fresh directory under --dir, with its ratio to the first row.
#
# The caller sets name (the program), files and size (its defaults), then:
#   floor_options "$@"          # --build --dir --runs --files --size
#   floor_row STEP "what it adds"
set -eu
floor_here=$(cd "$(dirname "$0")" && pwd)
build="$(cd "$floor_here/../.." && pwd)/build"; dir="${TMPDIR:-/var/tmp}"; runs=5
floor_bare=

floor_options() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --build) build=$2; shift 2 ;;
      --dir) dir=$2; shift 2 ;;
      --runs) runs=$2; shift 2 ;;
      --files) files=$2; shift 2 ;;
      --size) size=$2; shift 2 ;;
      *) echo "usage: $0 [--build DIR] [--dir DIR] [--runs N] [--files N] [--size BYTES]" >&2; exit 2 ;;
    esac
  done
  floor="$build/tools/$name"
  [ -x "$floor" ] || { echo "$0: build $name first" >&2; exit 1; }
}

floor_row() {
  best=$(for i in $(seq "$runs"); do
           work=$(mktemp -d "$dir/$name.XXXXXX")
           "$floor" "$work" "$1" "$files" "$size"
           rm -rf "$work"
         done | awk '{print $3}' | sort -n | head -1)
  [ -n "$floor_bare" ] || floor_bare=$best
  printf '| %s | %s | %s | %s |\n' "$1" "$2" "$best" "$(awk -v a="$best" -v b="$floor_bare" 'BEGIN {printf "%.2f", a/b}')"
}
