# Hardset: `make run` starts the platform on the embedded default; `make test` runs every check.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed
TORCH_VERSION := 2.13.0
NPM_STAMP := node_modules/.installed

PG_URL ?= postgres://postgres@127.0.0.1:5432
REDIS_TEST_URL ?= redis://127.0.0.1:6379/15
# Local runs default to DEBUG; production sets DEBUG=false and a SECRET_KEY.
export DEBUG ?= true

.PHONY: help setup run test test-fast lint test-sqlite test-postgres services browser migrate demo bench-env clean

help:
	@echo "make run    set up everything and start web server + Celery worker (SQLite, offline demo)"
	@echo "make test   set up everything, lint, the whole suite on SQLite, engine-specific tests on PostgreSQL"
	@echo "make test-fast  lint + every test without a browser, a real worker or fault servers (SQLite)"
	@echo "make lint   ruff, import-linter, mypy and the migrations check only"

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@# PyTorch first, pinned to the machine's CPU wheel: left to resolve it as a dependency of
	@# the local extra, pip would fetch a CUDA build of several GB.
	$(PY) -m pip install --quiet "torch==$(TORCH_VERSION)"
	$(PY) -m pip install --quiet ".[dev,local]"
	@touch $@

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

setup: $(STAMP) $(NPM_STAMP)
	@mkdir -p var

migrate: setup
	$(PY) manage.py migrate --no-input

demo: migrate
	$(PY) manage.py load_demo
	$(PY) manage.py ensure_admin

run: demo
	$(PY) manage.py run_platform

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(PY) manage.py makemigrations --check --dry-run

services:
	@scripts/ensure_services.sh

browser:
	@scripts/ensure_chromium.sh

# mypy's cache lives outside the checkout, so that `make clean` or a re-clone at the same path
# keeps it; one cache per checkout path, because two checkouts (git worktrees) linting at once
# into one cache left it inconsistent ("cannot find module" for a module of the other tree).
export MYPY_CACHE_DIR ?= $(HOME)/.cache/hardset/mypy/$(subst /,_,$(CURDIR))

# The suite runs in two processes (pytest-xdist; `worksteal`, because the slow tests come last
# in collection order and `load` left one process idle at the end). Each process gets its own
# database and Redis key prefix (tests/settings.py), and each suite its own prefix, so
# parallel runs never take each other's tasks.
XDIST := -n 2 --dist worksteal
SQLITE_ENV := DATABASE_URL=sqlite:///var/hardset-test.sqlite3 \
	CELERY_BROKER_URL=$(REDIS_TEST_URL) CELERY_BROKER_KEYPREFIX=hardset-test-sqlite-$$$$-

# The whole suite, once, on SQLite. The fault tests (marker `faults`) start their own
# PostgreSQL and Redis, whatever the suite's database: they run here, once.
test-sqlite: setup services browser
	$(SQLITE_ENV) $(BIN)/pytest -p no:cacheprovider $(XDIST) --durations=10 $(PYTEST_ARGS)

# On PostgreSQL, the tests of what differs between the engines: marker `postgresql`, set from
# the checked list in tests/databases.py (hand-written SQL, locks and claims, migrations, the
# backend, real workers, lost databases).
test-postgres: setup services browser
	DATABASE_URL=$(PG_URL)/hardset_ci_$$$$ \
	CELERY_BROKER_URL=$(REDIS_TEST_URL) CELERY_BROKER_KEYPREFIX=hardset-test-pg-$$$$- \
	$(BIN)/pytest -p no:cacheprovider --create-db $(XDIST) --durations=10 \
		-m "postgresql and not faults" $(PYTEST_ARGS)

test: lint test-sqlite test-postgres
	@echo "All checks passed: the suite on SQLite, the engine-specific tests on PostgreSQL."

# The inner loop: lint and every test that needs no browser, no real worker and no fault
# servers, on SQLite.
test-fast: lint
	$(SQLITE_ENV) $(BIN)/pytest -p no:cacheprovider $(XDIST) --durations=10 \
		-m "not browser and not celery_worker and not faults" $(PYTEST_ARGS)

bench-env: setup
	$(PY) -m pip install --quiet -r bench/requirements.txt

clean:
	rm -rf var staticfiles .pytest_cache .ruff_cache
