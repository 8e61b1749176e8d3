# The two commands a newcomer needs: `make demo` and `make test`. Both set themselves up.
VENV ?= .venv
PYTEST ?= $(VENV)/bin/pytest
PYTEST_ARGS ?=
EXTRAS ?= dev

.PHONY: setup demo test mutants images benchmarks clean api-docs reference-docs docs docs-serve mutants-full typecheck

setup:
	@EXTRAS=$(EXTRAS) bash scripts/setup.sh

demo: setup
	$(VENV)/bin/jobquake demo

test: setup
	$(PYTEST) -p no:cacheprovider $(PYTEST_ARGS)

# the scenario suite against refapp with no mutant, then with each mutant: all must be caught
mutants: setup
	$(VENV)/bin/jobquake mutants

mutants-full: setup
	$(VENV)/bin/jobquake mutants --full --jobs $(or $(JOBS),8)

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
