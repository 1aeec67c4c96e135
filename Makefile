# draplane: `make run` starts the control plane (PORT=6443 by default; Kubernetes 1.36, DRA with
# structured parameters, in a new ./.draplane, else the mode ./.draplane was written in;
# KUBERNETES_VERSION=1.28 with DATA_DIR=./.draplane-128 for classic DRA), `make test` runs the
# whole test suite, `make test-fast` all but the slow, e2e and kubectl tests, `make check` (what
# CI runs) runs the linters and then the tests.
PYTHON ?= python3
PORT ?= 6443
DATA_DIR ?= ./.draplane
KUBERNETES_VERSION ?=
PARTITIONABLE ?=
VENV := .venv
BIN := $(VENV)/bin
# Running needs draplane and its dependencies; testing and linting also need the dev extras.
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: run test test-fast lint check venv clean bench fuzz protos

$(BIN)/pip:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(RUN_STAMP): pyproject.toml | $(BIN)/pip
	$(BIN)/pip install -q -e .
	touch $@

$(DEV_STAMP): pyproject.toml | $(BIN)/pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

# The Kubernetes 1.36 Python client (ResourceV1Api) for the structured-mode tests, apart from the
# 1.28-era `kubernetes` of the dev extras (tests run it in its own interpreter).
KUBE_V1_CLIENT := $(VENV)/kubernetes-v1
KUBE_V1_STAMP := $(KUBE_V1_CLIENT)/.installed

$(KUBE_V1_STAMP): | $(BIN)/pip
	$(BIN)/pip install -q --target $(KUBE_V1_CLIENT) 'kubernetes==36.0.3'
	touch $@

# The Kubernetes 1.37 Python client (37.x), whose models the schema-completeness test walks
# (tests/apiserver/test_client_model_fields.py), in its own directory and interpreter path too.
KUBE_V37_CLIENT := $(VENV)/kubernetes-v37
KUBE_V37_STAMP := $(KUBE_V37_CLIENT)/.installed

$(KUBE_V37_STAMP): | $(BIN)/pip
	$(BIN)/pip install -q --target $(KUBE_V37_CLIENT) 'kubernetes==37.0.2'
	touch $@

venv: $(DEV_STAMP) $(KUBE_V1_STAMP) $(KUBE_V37_STAMP)

# PARTITIONABLE=N: every device also offers N partitions (examples/structured/partitionable.yaml).
run: $(RUN_STAMP)
	$(BIN)/draplane up --data-dir $(DATA_DIR) --port $(PORT) \
		$(if $(KUBERNETES_VERSION),--kubernetes-version $(KUBERNETES_VERSION)) \
		$(if $(PARTITIONABLE),--partitionable $(PARTITIONABLE))

test: $(DEV_STAMP) $(KUBE_V1_STAMP) $(KUBE_V37_STAMP)
	$(BIN)/pytest -q --durations=15

# The quick lane (about 2.5 minutes on two cores): the suite without the tests marked slow, e2e
# or kubectl (markers in pyproject.toml).
test-fast: $(DEV_STAMP) $(KUBE_V1_STAMP)
	$(BIN)/pytest -q --durations=15 -m "not slow and not e2e and not kubectl"

# The hostile-input suite with many random examples (the default test run has a short profile).
fuzz: $(DEV_STAMP)
	DRAPLANE_FUZZ=long $(BIN)/pytest -q -p no:randomly --timeout 3600 tests/apiserver/test_fuzz.py \
		tests/apiserver/test_fuzz_seeds.py tests/apiserver/test_bounded_memory.py

lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy
	$(BIN)/lint-imports

# Lint, then test even when lint failed (every failure shows); fails if either did.
check: $(DEV_STAMP)
	@status=0; \
	$(MAKE) --no-print-directory lint || status=1; \
	$(MAKE) --no-print-directory test || status=1; \
	exit $$status

bench: $(RUN_STAMP)
	$(BIN)/draplane bench classic-template --scale small --hints compare --output bench-out

clean:
	rm -rf $(VENV) .draplane .draplane-128 bench-out

# The kubelet's gRPC APIs (src/draplane/kubeletapi/*.proto) as Python modules, generated with
# grpcio-tools installed apart from the venv's packages (its protobuf pin stays out of it).
GRPC_TOOLS := $(VENV)/grpc-tools
PROTOS := $(wildcard src/draplane/kubeletapi/*.proto)

$(GRPC_TOOLS)/.installed: | $(BIN)/pip
	$(BIN)/pip install -q --target $(GRPC_TOOLS) 'grpcio-tools==1.84.*'
	touch $@

protos: $(GRPC_TOOLS)/.installed
	PYTHONPATH=$(GRPC_TOOLS) $(BIN)/python -m grpc_tools.protoc -I src --python_out=src \
		--pyi_out=src --grpc_python_out=src $(PROTOS)
