#!/usr/bin/env bash
# Installs what the tests need on a fresh Debian/Ubuntu machine, then the npm dependencies.
#   nats-server     the integration tests spawn their own servers (they kill and restart them)
#   docker-compose  validates docker-compose.yml (`docker-compose config` needs no Docker engine)
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || missing+=(nats-server)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else sudo="none"; fi
  if [ "$sudo" = "none" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: please install: ${missing[*]} (Debian/Ubuntu: apt-get install ${missing[*]})" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]} from the distribution's packages"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
npm ci
