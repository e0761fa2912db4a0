# Two commands set up a fresh machine (README.md):  make run   and   make test
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501
STAMP := $(VENV)/.installed

.PHONY: run test chromium unit bench screenshots clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m streamlit run streamlit_app.py --server.port $(PORT)

chromium:
	@test -x /usr/bin/chromium || (apt-get update -qq && apt-get install -y -qq chromium)

test: $(STAMP) chromium
	$(VENV)/bin/ruff check .
	$(PY) -m pytest

unit: $(STAMP)
	$(PY) -m pytest tests/unit

bench: $(STAMP)
	for script in bench/*.py; do $(PY) $$script || exit 1; done

screenshots: $(STAMP)
	$(PY) ../shared/tools/screenshot.py --out /tmp/shots / $(PATHS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
