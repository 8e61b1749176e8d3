#!/usr/bin/env bash
# Make a Docker engine answer on this machine: install docker.io if missing, start dockerd if it
# does not answer, wait for its socket. Safe to run again: it only does what is missing.
set -euo pipefail

SOCKET=${DOCKER_SOCKET:-/var/run/docker.sock}
LOG=${DOCKERD_LOG:-/var/log/jobquake-dockerd.log}
WAIT_SECONDS=${DOCKERD_WAIT_SECONDS:-60}

answers() {
  [ -S "$SOCKET" ] && docker -H "unix://$SOCKET" version --format '{{.Server.Version}}' >/dev/null 2>&1
}

if answers; then
  echo "start-dockerd: engine already answers on $SOCKET ($(docker version --format '{{.Server.Version}}'))"
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "start-dockerd: dockerd is not installed; install it (e.g. sudo apt-get install -y docker.io)" >&2
    exit 1
  fi
  echo "start-dockerd: installing docker.io with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq docker.io >/dev/null
  # the package may start a system-wide engine through its init script: we start our own below
fi

if ! answers; then
  if [ "$(id -u)" != 0 ]; then
    echo "start-dockerd: dockerd must be started as root (sudo $0)" >&2
    exit 1
  fi
  echo "start-dockerd: starting dockerd in the background (log: $LOG)"
  # setsid: the engine outlives this script and the shell that ran it. And it keeps none of their other
  # open files: a lock or a pipe the caller holds (flock, a CI runner's log) would stay held for as long
  # as the engine runs. 255 is bash's own copy of this script, closed on exec anyway
  (
    for fd in /proc/"$BASHPID"/fd/*; do
      fd=${fd##*/}
      if [ "$fd" -gt 2 ] && [ "$fd" != 255 ]; then eval "exec $fd>&-"; fi
    done
    exec setsid dockerd >"$LOG" 2>&1 </dev/null
  ) &
  deadline=$((SECONDS + WAIT_SECONDS))
  until answers; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "start-dockerd: dockerd did not answer on $SOCKET within ${WAIT_SECONDS}s; last log lines:" >&2
      tail -n 20 "$LOG" >&2 || true
      exit 1
    fi
    sleep 0.2
  done
fi
echo "start-dockerd: engine answers on $SOCKET ($(docker version --format '{{.Server.Version}}'))"
