#!/usr/bin/env bash
# Installs what guard needs on Debian 12 (when missing), then configures and
# builds it in ./build. Idempotent: run it again after pulling.
#   tools/setup.sh            build guard and its tests
#   BUILD_DIR=... CMAKE_ARGS="-DGUARD_SANITIZE=ON" tools/setup.sh
#   On a Mac: installs the dependencies with Homebrew and builds guard alone
#   (no tests: they drive Linux's tracer). Never run on a Mac here
#   (docs/macos.md says what was).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(uname -s)" = Darwin ]; then
  command -v brew >/dev/null 2>&1 || { echo "setup: Homebrew is needed (https://brew.sh)" >&2; exit 1; }
  brew install cmake pkg-config boost xxhash zstd spdlog cli11 nlohmann-json tomlplusplus libgit2 help2man
  build_dir="${BUILD_DIR:-build}"
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGUARD_TESTS=OFF \
    -DCMAKE_PREFIX_PATH="$(brew --prefix)" ${CMAKE_ARGS:-} >/dev/null
  cmake --build "$build_dir" -j"$(sysctl -n hw.ncpu)" --target guard
  echo "setup: built $build_dir/guard"
  exit 0
fi

# Build dependencies (why each is there: README.md, "Dependencies"), and the
# real programs the end-to-end tests run under guard (zsh and fish: the
# completion test, tests/completion/).
packages=(
  build-essential cmake pkg-config
  libboost-dev libboost-test-dev libboost-filesystem-dev
  libxxhash-dev libzstd-dev libspdlog-dev libcli11-dev nlohmann-json3-dev libseccomp-dev
  libtomlplusplus-dev libgit2-dev libssl-dev zlib1g-dev help2man
  git python3 busybox-static
  zsh fish
  file ninja-build  # the macOS cross-build (tools/macos/build.sh), which .ci/run runs
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v node >/dev/null 2>&1 || missing+=(nodejs)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
echo "setup: built $build_dir/guard"

# The real Claude Code binary, for the end-to-end test that runs it under
# --mode auto (tests/shim/claude_mcp_auto.sh; it skips without one): its
# native build for this machine from the npm registry (the package
# @anthropic-ai/claude-code would only copy the same file out of it with a
# postinstall script), pinned, without install scripts, linked as
# $build_dir/claude-code/claude, when npm is here and no `claude` is on the
# PATH. Best effort: a machine without the registry builds and tests the rest.
claude_version=2.1.332
case "$(uname -m)" in
  x86_64) claude_package=@anthropic-ai/claude-code-linux-x64 ;;
  aarch64) claude_package=@anthropic-ai/claude-code-linux-arm64 ;;
  *) claude_package= ;;
esac
claude_dir="$build_dir/claude-code"
if [ -z "${GUARD_NO_CLAUDE:-}" ] && [ -n "$claude_package" ] && ! command -v claude >/dev/null 2>&1 &&
   command -v npm >/dev/null 2>&1 && [ ! -x "$claude_dir/claude" ]; then
  if npm install --prefix "$claude_dir" --ignore-scripts --no-audit --no-fund --loglevel=error \
       "$claude_package@$claude_version" >/dev/null 2>&1 &&
     ln -sf "node_modules/$claude_package/claude" "$claude_dir/claude" && "$claude_dir/claude" --version >/dev/null 2>&1; then
    echo "setup: Claude Code $claude_version in $claude_dir (for the tests)"
  else
    echo "setup: Claude Code not installed (npm or the binary failed); its test will skip"
  fi
fi
