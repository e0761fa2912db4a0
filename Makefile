# Two commands set up a fresh machine (README.md):  make run   and   make test
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501
STAMP := $(VENV)/.installed

.PHONY: install run check test chromium nginx unit bench screenshots clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The install step alone: what `run` and `test` (so CI) do first, and what deploy/Dockerfile runs.
install: $(STAMP)

run: $(STAMP)
	$(PY) -m streamlit run serve.py --server.port $(PORT)

chromium:
	@test -x /usr/bin/chromium || (apt-get update -qq && apt-get install -y -qq chromium)

# tests/e2e/test_proxy.py runs deploy/nginx/nginx.conf in front of two replicas.
nginx:
	@test -x /usr/sbin/nginx || (apt-get update -qq && apt-get install -y -qq nginx)

# The inner loop (README "Inner loop"): ruff, then the unit and AppTest tests that start no other
# Python (`-m "not spawns"`, see pyproject's markers), on CHECK_WORKERS processes (pytest-xdist;
# CHECK_WORKERS=0 runs them in this one).
CHECK_WORKERS ?= 2
check: $(STAMP)
	$(VENV)/bin/ruff check -q .
	$(PY) -m pytest -q -n $(CHECK_WORKERS) -m "not spawns" tests/unit tests/app

# Every test; the 25 slowest are listed at the end, so that growth shows.
test: $(STAMP) chromium nginx
	$(VENV)/bin/ruff check .
	$(PY) -m pytest --durations=25

unit: $(STAMP)
	$(PY) -m pytest tests/unit

bench: $(STAMP)
	for script in bench/*.py; do $(PY) $$script || exit 1; done

screenshots: $(STAMP)
	$(PY) ../shared/tools/screenshot.py --out /tmp/shots / $(PATHS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
