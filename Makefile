# The two commands a newcomer needs: `make demo` and `make test`. Both set themselves up.
# Which test command to run when: docs/development.md.
VENV ?= .venv
PYTEST ?= $(VENV)/bin/pytest
PYTEST_ARGS ?=
EXTRAS ?= dev
# each test's duration recorded for tests/quality/test_tiers.py; the fast tier: one pytest process per core
RECORDED = -p no:cacheprovider --durations=10 --tier-durations=.jobquake/test-durations.json
PARALLEL = $(RECORDED) -n auto

.PHONY: setup demo test test-all mutants images benchmarks clean api-docs reference-docs docs docs-serve mutants-full \
	mutants-first-catch \
	typecheck

setup:
	@EXTRAS=$(EXTRAS) bash scripts/setup.sh

demo: setup
	$(VENV)/bin/jobquake demo

# the fast tier: every test not marked slow (tests/common/tiers.py), in parallel; prints the 10 slowest
test: setup
	$(PYTEST) $(PARALLEL) -m "not slow" $(PYTEST_ARGS)

# both tiers, what CI runs: the fast tier as `make test`, then the slow tier. Each slow test starts whole
# sessions (a nightly of fixed length, a mutation matrix, pip installs) and spends most of its time waiting
# on them, so SLOW_WORKERS of them run at once whatever the core count, handed out one at a time, the
# longest first, so no worker is left with a queue of them at the end. Last, no test outside the slow tier
# may have taken longer than the fast tier's budget in this very run
SLOW_WORKERS ?= 4
test-all: setup
	$(PYTEST) $(PARALLEL) -m "not slow" $(PYTEST_ARGS)
	$(PYTEST) $(RECORDED) -n $(SLOW_WORKERS) -m slow --maxschedchunk 1 $(PYTEST_ARGS)
	TIERS_REQUIRE_DURATIONS=1 $(PYTEST) -p no:cacheprovider -q tests/quality/test_tiers.py -k last_recorded_run

# the scenario suite against refapp with no mutant, then with each mutant: all must be caught
mutants: setup
	$(VENV)/bin/jobquake mutants --jobs $(or $(JOBS),4)

mutants-full: setup
	$(VENV)/bin/jobquake mutants --full --jobs $(or $(JOBS),8)

# is every mutant caught by an invariant at all: each stops at its first catch, the scenarios written for it
# first (the full matrix above also says which invariants catch each)
mutants-first-catch: setup
	$(VENV)/bin/jobquake mutants --first-catch --jobs $(or $(JOBS),8)

benchmarks: setup
	$(VENV)/bin/python benchmarks/boot.py
	$(VENV)/bin/python benchmarks/proxy.py
	$(VENV)/bin/python benchmarks/failpoints.py
	$(VENV)/bin/python benchmarks/checks.py
	$(VENV)/bin/python benchmarks/instrument.py
	$(VENV)/bin/python benchmarks/paidapi_formats.py

# the docker backend: an engine, and images built locally (reused when present)
images:
	bash scripts/start-dockerd.sh
	bash scripts/build-images.sh

clean:
	rm -rf .jobquake .pytest_cache .mypy_cache site

# mypy --strict on the public API and the shipped scenarios (which files: [tool.mypy] in pyproject.toml)
typecheck: setup
	$(VENV)/bin/mypy

# docs/reference/ from the code: config keys, faults, failpoints, invariants, CLI, API (a test fails
# when a page is out of date)
reference-docs: setup
	$(VENV)/bin/python scripts/reference_docs.py
api-docs: reference-docs

# the docs site (mkdocs-material), warnings as errors, into site/; docs-serve serves it on 127.0.0.1:8000
docs:
	@EXTRAS=$(EXTRAS),docs bash scripts/setup.sh
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

docs-serve:
	@EXTRAS=$(EXTRAS),docs bash scripts/setup.sh
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8000
