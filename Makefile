# Two commands set up a fresh machine (README.md):  make run   and   make test
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501
STAMP := $(VENV)/.installed

# Compiled bytecode (and pytest's rewritten test modules) is cached under the venv, out of the
# checkout: without a cache every Python the suite starts compiles the project again, and
# pytest's collection alone takes twice as long (16 s against 8 s on 2 cores). Some images
# set PYTHONDONTWRITEBYTECODE, which would turn the cache off.
unexport PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX := $(abspath $(VENV))/pycache

.PHONY: install run check test chromium nginx postgresql graphviz node js axe unit bench bench-all screenshots clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The install step alone: what `run` and `test` (so CI) do first, and what deploy/Dockerfile runs.
install: $(STAMP)

run: $(STAMP)
	$(PY) -m streamlit run streamlit_app.py --server.port $(PORT)

chromium:
	@test -x /usr/bin/chromium || (apt-get update -qq && apt-get install -y -qq chromium)

# tests/e2e/test_proxy.py runs deploy/nginx/nginx.conf in front of two replicas.
nginx:
	@test -x /usr/sbin/nginx || (apt-get update -qq && apt-get install -y -qq nginx)

# The class store's tests run against SQLite and a throwaway PostgreSQL server (harness/postgres.py
# starts Debian's initdb/pg_ctl in a temporary folder; no system service is started or needed).
postgresql:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq postgresql)

# components/graph_view.py lays graphs out with Graphviz's `dot` where it is installed (packages.txt
# on Community Cloud, the Dockerfile); tests/app/autograd_graph/test_graph_view.py and the Chromium tests use it.
graphviz:
	@command -v dot >/dev/null || (apt-get update -qq && apt-get install -y -qq graphviz)

# tests/js/: the live view's modules (static/live/), with Node's own test runner.
node:
	@command -v node >/dev/null || (apt-get update -qq && apt-get install -y -qq nodejs)

js: node
	PYTHON=$(abspath $(PY)) node --test tests/js/*.test.mjs

# tests/e2e/test_accessibility.py loads axe-core into Chromium: package.json, pinned by
# package-lock.json, installed into node_modules/ (ignored) with Debian's npm.
axe: node
	@command -v npm >/dev/null || (apt-get update -qq && apt-get install -y -qq npm)
	@test -f node_modules/axe-core/axe.min.js || npm ci --no-audit --no-fund --silent

# The inner loop (README "Inner loop"): ruff, then the unit and AppTest tests that start no other
# Python (`-m "not spawns"`, see pyproject's markers), on CHECK_WORKERS processes (pytest-xdist;
# CHECK_WORKERS=0 runs them in this one). The link fuzzing sends each page 20 generated links
# here against 60 in `make test` (tests/app/test_fuzz_links.py), a third of its time.
CHECK_WORKERS ?= 2
check: $(STAMP)
	$(VENV)/bin/ruff check -q .
	FUZZ_EXAMPLES=20 $(PY) -m pytest -q -n $(CHECK_WORKERS) -m "not spawns" tests/unit tests/app

# Every test, on TEST_WORKERS processes (pytest-xdist; the tests sharing a module-scoped fixture
# stay on one worker, tests/conftest.py); the 25 slowest are listed at the end, so that growth shows.
TEST_WORKERS ?= 2
test: $(STAMP) chromium nginx postgresql graphviz js axe
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=25

unit: $(STAMP)
	$(PY) -m pytest tests/unit

# The quick benchmarks (ratios against a bare PyTorch loop, a class beside a hostile neighbour,
# and the lesson links' figures that docs/lesson-links.md quotes), each saving its figures
# (docs/figures/<name>.json), then docs/performance.md written from every saved file
# (`python -m bench.report`); `bench-all` runs every benchmark with its defaults and saves
# nothing (fuzz alone takes an hour). A benchmark is a module run from the
# repository root, `python -m bench.<name>`, so that it imports harness/ and workbench/ as they are.
BENCH_QUICK := threads moons_speed batching_cost hostile_neighbour lesson_links
bench: $(STAMP)
	for name in $(BENCH_QUICK); do $(PY) -m bench.$$name --save || exit 1; done
	$(PY) -m bench.report

bench-all: $(STAMP)
	for script in bench/*.py; do $(PY) -m bench.$$(basename $$script .py) || exit 1; done

# PNGs of home and of PATHS (e.g. PATHS="/moons_trainer /tensor_inspector?shape=4,6") as served
# by streamlit_app.py, written outside the repository into SHOTS.
SHOTS ?= /tmp/shots
screenshots: $(STAMP)
	$(PY) ../shared/tools/screenshot.py --app streamlit_app.py --out $(SHOTS) / $(PATHS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
