"""The test harness: what the tests and the benchmarks share, so that neither depends on the other.

`tests/` and `bench/` both import from here, never from each other (tests/unit/test_bench_imports.py
checks both directions). Each module holds one thing a test or a benchmark needs around the app:

- `app`: a real `streamlit run streamlit_app.py` on 127.0.0.1, started and stopped;
- `chromium`: Debian's Chromium for Playwright, and the waits for a page's run to finish and draw;
- `stage`: presenter mode's first screen as a projector shows it (boxes, clipped text, text size);
- `live_view`: reading the moons trainer's live view from its shadow root;
- `st_client`: Streamlit's websocket protocol, to drive sessions without a browser;
- `postgres`, `nginx`: a throwaway PostgreSQL server, and nginx in front of replicas;
- `bombs`: the hostile checkpoint uploads of issue 24;
- `figures`, `performance_doc`, `verdicts`: a benchmark's saved figures, the page
  docs/performance.md generated from them, and the words its figures turn into.
"""
