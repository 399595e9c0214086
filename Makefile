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

.PHONY: help setup run test lint test-sqlite test-postgres services browser migrate demo bench-env clean

help:
	@echo "make run    set up everything and start web server + Celery worker (SQLite, offline demo)"
	@echo "make test   set up everything and run lint + the whole suite on SQLite and PostgreSQL"
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

# Each suite gets its own Redis key prefix, so parallel runs never take each other's tasks.
# The fault tests (marker `faults`) start their own PostgreSQL and Redis, whatever the suite's
# database: they run once, in the SQLite suite.
test-sqlite: setup services browser
	DATABASE_URL=sqlite:///var/hardset-test.sqlite3 \
	CELERY_BROKER_URL=$(REDIS_TEST_URL) CELERY_BROKER_KEYPREFIX=hardset-test-sqlite-$$$$- \
	$(BIN)/pytest -p no:cacheprovider $(PYTEST_ARGS)

test-postgres: setup services browser
	DATABASE_URL=$(PG_URL)/hardset_ci_$$$$ \
	CELERY_BROKER_URL=$(REDIS_TEST_URL) CELERY_BROKER_KEYPREFIX=hardset-test-pg-$$$$- \
	$(BIN)/pytest -p no:cacheprovider --create-db -m "not faults" $(PYTEST_ARGS)

test: lint test-sqlite test-postgres
	@echo "All checks passed on SQLite and PostgreSQL."

bench-env: setup
	$(PY) -m pip install --quiet -r bench/requirements.txt

clean:
	rm -rf var staticfiles .pytest_cache .ruff_cache
