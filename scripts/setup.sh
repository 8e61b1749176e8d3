#!/usr/bin/env bash
# Set up everything jobquake needs on a Debian/Ubuntu machine: system servers and a venv.
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
EXTRAS=${EXTRAS:-dev}

have_postgres() {
  command -v postgres >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1
}

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
have_postgres || missing+=(postgresql)

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${missing[*]} with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
    # the Debian packages start system-wide servers; jobquake runs its own on free ports
    for svc in redis-server postgresql; do
      (service "$svc" stop >/dev/null 2>&1 || true)
    done
  else
    echo "setup: missing system packages: ${missing[*]}" >&2
    echo "setup: install them, e.g.: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi

# reinstall only when the project's dependencies changed
stamp="$VENV/.jobquake-installed"
want="$(sha256sum pyproject.toml | cut -d' ' -f1) $EXTRAS"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing jobquake[$EXTRAS] into $VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -e ".[$EXTRAS]"
  echo "$want" > "$stamp"
fi
echo "setup: ready ($("$VENV/bin/python" --version), redis-server $(redis-server --version | grep -o 'v=[0-9.]*'))"
