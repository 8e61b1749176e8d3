#!/usr/bin/env bash
# Build the images of the docker backend locally (no registry needed), reusing those that exist.
#
#   jobquake/base      debootstrap'd Debian bookworm with python3 (built once, ~40 s)
#   jobquake/redis     FROM base: redis-server
#   jobquake/postgres  FROM base: PostgreSQL 15, cluster initialised at build time
#   jobquake/app       FROM base: venv with the harness's dependencies, harness and refapp
#   jobquake/sqs       FROM app: moto's server
#   jobquake/localstack FROM base: LocalStack's runtime (the jobquake[localstack] pin), for sqs = "localstack"
#   jobquake/proxy     FROM app: the embedded fault proxy (Toxiproxy's HTTP API)
#   jobquake/paidapi   FROM app: the fake paid model API
#
# Usage: scripts/build-images.sh [--rebuild] [IMAGE...]   (IMAGE: base redis postgres app sqs localstack proxy paidapi)
# An existing image is reused while what it was built from is unchanged (a hash kept as its label),
# rebuilt otherwise. --rebuild rebuilds the named images (all but base when none is named). Needs a running engine
# (scripts/start-dockerd.sh) and, for the base image, root and the Debian mirror.
set -euo pipefail
cd "$(dirname "$0")/.."

PREFIX=${JOBQUAKE_IMAGE_PREFIX:-jobquake}
# the Debian mirror this machine's apt already uses (deb822 .sources files or sources.list)
apt_mirror() {
  # either file may be missing: grep's "no such file" must not end the script (pipefail)
  { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources || true
    grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list || true
  } | awk '{print $2}' | grep -v -- '-security' | head -n 1 || true
}
MIRROR=${DEBIAN_MIRROR:-$(apt_mirror)}
SUITE=${DEBIAN_SUITE:-bookworm}
ORDER=(base redis postgres app sqs localstack proxy paidapi)

rebuild=0
wanted=()
for arg in "$@"; do
  case "$arg" in
    --rebuild) rebuild=1 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) wanted+=("$arg") ;;
  esac
done
if [ ${#wanted[@]} -eq 0 ]; then
  wanted=("${ORDER[@]}")
  forced=("${ORDER[@]:1}")  # --rebuild alone keeps the slow base image
else
  forced=("${wanted[@]}")
fi

exists() { docker image inspect "$PREFIX/$1" >/dev/null 2>&1; }
# What an image is built from, as one hash, stored in the image as a label: an image whose
# Dockerfile or dependencies changed since its build is rebuilt, so the docker backend never
# runs on older dependencies than the checkout's. (The code itself, harness and app, is
# bind-mounted at run time.) The images FROM app include app's hash.
sources_hash() {
  local name=$1
  {
    cat "compose/Dockerfile.$name"
    case "$name" in
      app) cat compose/requirements-app.txt pyproject.toml ;;
      sqs|proxy|paidapi) sources_hash app ;;
      localstack) cat pyproject.toml ;;
    esac
  } | sha256sum | cut -c1-16
}
built_from() { docker image inspect -f '{{ index .Config.Labels "jobquake.sources" }}' "$PREFIX/$1" 2>/dev/null || true; }
want() { [[ " ${wanted[*]} " == *" $1 "* ]]; }
forced() { [ "$rebuild" = 1 ] && [[ " ${forced[*]} " == *" $1 "* ]]; }

build_base() {
  command -v debootstrap >/dev/null 2>&1 || {
    echo "build-images: installing debootstrap with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null 2>&1 || {
      echo "build-images: apt-get install debootstrap failed (run apt-get update first?)" >&2; return 1; }
  }
  [ -n "$MIRROR" ] || { echo "build-images: no Debian mirror in apt's sources; set DEBIAN_MIRROR" >&2; return 1; }
  local root
  root=$(mktemp -d /var/tmp/jobquake-rootfs.XXXXXX)
  trap 'rm -rf "$root"' RETURN
  echo "build-images: debootstrap $SUITE into $root (about 40 s)"
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
    "$SUITE" "$root" "$MIRROR" >"$root.log" 2>&1 || {
      tail -n 20 "$root.log" >&2; rm -f "$root.log"; return 1; }
  rm -f "$root.log"
  # certificate authorities this machine trusts (a TLS-inspecting proxy's, say): pip in the
  # builds of the other images goes through the same network
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null 2>&1
  fi
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["/bin/bash"]' \
    - "$PREFIX/base" >/dev/null
}

build_from_dockerfile() {
  local name=$1
  echo "build-images: building $PREFIX/$name from compose/Dockerfile.$name"
  local log
  log=$(mktemp)
  # --network host: apt-get and pip inside the build reach the package mirrors like the host
  if ! DOCKER_BUILDKIT=0 docker build --network host \
      --build-arg "BASE=$PREFIX/base" --build-arg "APP=$PREFIX/app" \
      --label "jobquake.sources=$(sources_hash "$name")" \
      -f "compose/Dockerfile.$name" -t "$PREFIX/$name" . >"$log" 2>&1; then
    echo "build-images: building $PREFIX/$name failed; last lines:" >&2
    tail -n 30 "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

docker version >/dev/null 2>&1 || {
  echo "build-images: no Docker engine answers; start one with scripts/start-dockerd.sh" >&2; exit 1; }

for name in "${ORDER[@]}"; do
  want "$name" || continue
  if exists "$name" && ! forced "$name"; then
    if [ "$name" = base ] || [ "$(built_from "$name")" = "$(sources_hash "$name")" ]; then
      echo "build-images: $PREFIX/$name exists, reused"
      continue
    fi
    echo "build-images: $PREFIX/$name was built from another Dockerfile or other dependencies: rebuilding"
  fi
  start=$SECONDS
  if [ "$name" = base ]; then build_base; else build_from_dockerfile "$name"; fi
  echo "build-images: $PREFIX/$name built in $((SECONDS - start)) s"
done
