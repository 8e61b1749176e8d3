# The two commands a newcomer needs: `make demo` and `make test`. Both set themselves up.
VENV ?= .venv
PYTEST ?= $(VENV)/bin/pytest
PYTEST_ARGS ?=

.PHONY: setup demo test benchmarks clean

setup:
	@bash scripts/setup.sh

demo: setup
	$(VENV)/bin/jobquake demo

test: setup
	$(PYTEST) -p no:cacheprovider $(PYTEST_ARGS)

benchmarks: setup
	$(VENV)/bin/python benchmarks/boot.py
	$(VENV)/bin/python benchmarks/proxy.py
	$(VENV)/bin/python benchmarks/failpoints.py
	$(VENV)/bin/python benchmarks/checks.py

clean:
	rm -rf .jobquake .pytest_cache
