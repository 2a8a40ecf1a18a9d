# make run: the whole local stack on embedded defaults; make test: the whole suite.
# make sdk-env: the official SDK in its own test-only virtualenv (see README, "Official SDK
# cross-checks": it pins eth-abi<6, our web3 needs >=6).
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The official SDK (polymarket-client) pins eth-abi<6, which web3 8 cannot share: tests reach it
# in its own interpreter (tests/sdk_env.py), found by COPYTRADE_SDK_PYTHON or here.
SDK_VENV := .venv-sdk
SDK_VERSION := 0.14.0
SDK_STAMP := $(SDK_VENV)/.installed-$(SDK_VERSION)

.PHONY: run test soak setup sdk-env browser lint migrate dist vendor-assets clean docs docs-serve

$(STAMP): pyproject.toml package.json
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[sandbox,test]'
	npm install --no-audit --no-fund --loglevel=error
	touch $(STAMP)

# Only the dashboard's browser tests need Chromium (Debian's, headless): `make test` brings
# it, `make run` does not.
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get install -y chromium; \
	  else echo 'hint: install Chromium for the dashboard tests: sudo apt-get install -y chromium'; fi; \
	fi

setup: $(STAMP)

$(SDK_STAMP):
	test -x $(SDK_VENV)/bin/python || $(PY) -m venv $(SDK_VENV)
	$(SDK_VENV)/bin/pip install -q polymarket-client==$(SDK_VERSION)
	touch $(SDK_STAMP)

sdk-env: $(SDK_STAMP)

run: setup
	$(BIN)/copytrade up

# The suite runs in TEST_WORKERS pytest-xdist processes, each with its own sandbox venue,
# anvil, databases and Redis prefix (tests/conftest.py). It waits more than it computes, so
# 6 on this 2-core machine beat 4 (9.1 against 10.8 min, docs/development/tests.md); they
# want PostgreSQL's max_connections at 300 (.ci/run raises it), and wait for a slot when it
# is lower.
TEST_WORKERS ?= 6

# Bytecode is written for the run even where the environment says not to
# (PYTHONDONTWRITEBYTECODE): otherwise every worker, and every process a test starts (the
# `copytrade` workers and commands), compiles the app from source again, and each pytest
# worker rewrites every test module's asserts again: 13 s of CPU to collect instead of 5.
TEST_ENV := env -u PYTHONDONTWRITEBYTECODE
APP_SOURCES := app.py cli.py config.py wsgi.py blueprints chain devstack models schemas \
	services venue worker tests

test: setup sdk-env browser
	$(BIN)/ruff check .
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	$(TEST_ENV) $(BIN)/python -m compileall -q -j 0 $(APP_SOURCES)
	$(TEST_ENV) $(BIN)/python -m pytest -n $(TEST_WORKERS) --durations=25 $(PYTEST_ARGS)

# A simulated day of the whole stack alone, checked by its invariants
# (docs/development/soak.md); `make test` runs it too, first, beside the rest of the suite.
soak: setup
	$(TEST_ENV) $(BIN)/python -m pytest tests/bench $(PYTEST_ARGS)

# The docs site (mkdocs, Material theme) in build/site: the reference pages are generated
# from the code first (docs/generate.py); `make test` builds it strictly (any broken link fails).
docs: setup
	$(BIN)/python docs/generate.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
	@echo 'Built build/site: open build/site/index.html in a browser (search works from the file).'

# The docs site served with live reload and search at http://127.0.0.1:8001 (8000 is the app).
docs-serve: setup
	$(BIN)/python docs/generate.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8001

lint: setup
	$(BIN)/ruff check .

migrate: setup
	$(BIN)/copytrade migrate

# An sdist and a wheel in dist/, carrying the explorer's and dashboard's npm files (committed
# under static/vendor/). Install the wheel anywhere: no Node, no checkout, no CDN at run time.
dist: setup
	rm -rf dist
	$(BIN)/pip install -q 'build==1.6.1'
	$(BIN)/python -m build --outdir dist .

# After bumping a front-end package in package.json and blueprints/vendor_assets.json:
# refresh the committed copies in static/vendor/ from npm, then commit them.
vendor-assets:
	npm install --no-audit --no-fund --loglevel=error
	$(BIN)/python tools/vendor_assets.py

clean:
	rm -rf $(VENV) $(SDK_VENV) node_modules build dist *.egg-info
