"""requirements.txt (Community Cloud) and pyproject.toml (dev/CI) pin the same versions."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _pins(lines):
    pins = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        # An extra (psycopg[binary]) is part of what is installed, so it is compared too.
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+(?:\[[\w,]+\])?)==([^\s;+]+)(\+\w+)?", line)
        assert match, f"not an exact pin: {line!r}"
        pins[match[1].lower()] = match[2]
    return pins


def test_cloud_manifest_and_pyproject_agree():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    cloud = _pins((ROOT / "requirements.txt").read_text().splitlines())
    local = _pins(project["dependencies"])
    assert cloud == local


def test_cloud_torch_is_the_cpu_build():
    text = (ROOT / "requirements.txt").read_text()
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in text
    assert re.search(r"^torch==[\d.]+\+cpu$", text, re.M)


def test_dev_torch_pin_is_exact():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "torch==2.13.0" in project["dependencies"]


def test_workbench_never_imports_streamlit():
    for path in (ROOT / "workbench").rglob("*.py"):
        source = path.read_text()
        assert not re.search(r"^\s*(import streamlit|from streamlit)", source, re.M), path
