"""Every colour is named once, in workbench/common/palette.py."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
COLOUR = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b(?![0-9a-fA-F])|rgba?\(\s*\d")
PALETTE = ROOT / "workbench" / "common" / "palette.py"


def _sources():
    for folder in ("app_pages", "components", "workbench"):
        yield from (ROOT / folder).rglob("*.py")
    yield ROOT / "streamlit_app.py"
    yield ROOT / "router.py"


def test_no_colour_is_written_outside_the_palette():
    offenders = []
    for path in _sources():
        if path == PALETTE:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if COLOUR.search(line.split("  #")[0]):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "colours outside palette.py:\n" + "\n".join(offenders)


def test_the_palette_names_each_colour_once():
    values = COLOUR.findall(PALETTE.read_text().split('"""', 2)[2])
    normalised = [v.upper() for v in values]
    assert len(normalised) == len(set(normalised))
