# tokenrisk: `make run` serves the API on the embedded devnet, `make test` runs every test.
# Both install what they need (virtualenv, Python and npm packages, devnet build) themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY_STAMP := $(VENV)/.installed
NPM_STAMP := node_modules/.installed

.PHONY: setup run test check lint types devnet bench clean

$(PY_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

setup: $(PY_STAMP) $(NPM_STAMP)

devnet: setup
	$(BIN)/tokenrisk devnet build

run: devnet
	$(BIN)/tokenrisk serve

test: devnet
	scripts/with-redis.sh scripts/with-postgres.sh scripts/with-chromium.sh $(BIN)/pytest -q

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src

types: setup
	$(BIN)/mypy --strict src/tokenrisk

check: lint types test

# `make bench` prints the benchmark tables (docs/performance.md); e.g. BENCH_ARGS="--holders 100".
bench: devnet
	$(BIN)/python -m bench $(BENCH_ARGS)

clean:
	rm -rf build .tokenrisk
