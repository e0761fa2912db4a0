"""Writes docs/performance.md from the benchmarks' saved figures (docs/figures/*.json) and
docs/figures/manual.md.

    .venv/bin/python -m bench.report

The rendering lives in harness/performance_doc.py, where tests/unit/test_performance_doc.py
checks that docs/performance.md is what it renders.
"""
from __future__ import annotations

import argparse

from harness.performance_doc import main

if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
