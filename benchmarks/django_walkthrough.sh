#!/usr/bin/env bash
# The Django tutorial's walkthrough, timed as a new user: clone jobquake, take the example Django app
# (tests/reviewdesk) without its [tool.jobquake] and scenarios/ as "my app", install both, jobquake
# init, fill its one TODO, run the scenarios, then a first failing scenario. Prints a STEP line with
# a unix time after each step, and keeps the lines in benchmarks/results/django_walkthrough.txt.
#
#   bash benchmarks/django_walkthrough.sh [REPOSITORY]      (default: this checkout)
set -euo pipefail
REPO=$(cd "${1:-$(dirname "$0")/..}" && pwd)
OUT="$REPO/benchmarks/results/django_walkthrough.txt"
W=$(mktemp -d /tmp/jobquake-django-walkthrough.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W"
stamp() { echo "STEP $1 $(date +%s) load $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT"; }
echo "# $(date -u +%FT%TZ) $(git -C "$REPO" rev-parse --short HEAD)" >> "$OUT"
stamp start
git clone -q "$REPO" jobquake
cp -r jobquake/tests/reviewdesk myapp
rm -rf myapp/scenarios myapp/.jobquake
python3 - <<'PY'
p = "myapp/pyproject.toml"
s = open(p).read()
open(p, "w").write(s[:s.index("# jobquake: how to run")])
PY
python3 -m venv .venv && .venv/bin/pip install -q ./jobquake -e ./myapp 2>/dev/null
stamp installed
cd myapp
../.venv/bin/jobquake init --dry-run > /dev/null
../.venv/bin/jobquake init | tail -4
stamp init
sed -i 's/^POISON: dict = {}/POISON: dict = {"tier": "fax"}/' scenarios/test_sweep.py
../.venv/bin/pytest scenarios -p no:cacheprovider -q 2>&1 | tail -3
stamp scenarios
set +e
REVIEWDESK_BUG=enqueue-in-transaction ../.venv/bin/pytest scenarios/test_commit_race.py -p no:cacheprovider -q 2>&1 \
    | grep -E "invalid\]|passed|failed" | head -3
stamp failing
