# draplane: the two commands are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint venv clean bench fuzz

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BIN)/draplane up --data-dir ./.draplane

test: $(STAMP)
	$(BIN)/pytest -q -x --durations=15

# The hostile-input suite with many random examples (the default test run has a short profile).
fuzz: $(STAMP)
	DRAPLANE_FUZZ=long $(BIN)/pytest -q -p no:randomly --timeout 3600 tests/apiserver/test_fuzz.py \
		tests/apiserver/test_fuzz_seeds.py tests/apiserver/test_bounded_memory.py

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: $(STAMP)
	$(BIN)/draplane bench classic-template --scale small --hints compare --output bench-out

clean:
	rm -rf $(VENV) .draplane bench-out
