# The two commands a newcomer needs: `make demo` and `make test`. Both set themselves up.
VENV ?= .venv
PYTEST ?= $(VENV)/bin/pytest
PYTEST_ARGS ?=
EXTRAS ?= dev

.PHONY: setup demo test mutants images benchmarks clean api-docs mutants-full

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
	rm -rf .jobquake .pytest_cache

# docs/api.md from the public names' docstrings (a test fails when it is out of date)
api-docs: setup
	$(VENV)/bin/python scripts/api_reference.py
