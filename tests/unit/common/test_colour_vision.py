"""The palettes stay distinguishable with the common colour-vision deficiencies.

Each palette whose colours stand for different things is simulated for protanopia,
deuteranopia and tritanopia (Machado, Oliveira & Fernandes 2009, severity 1.0:
workbench/common/colour_vision.py) and for typical vision, and every pair of its colours must stay
at least a threshold apart in CIEDE2000:

- **10 for colours that name categories on small marks** (lines, points, legend swatches, batch
  cells too narrow for their number). A ΔE00 of about 1 is just noticeable between two large
  patches side by side; thin lines and small points, compared across a chart with a legend, need
  several times that (Szafir, "Modeling Color Difference for Visualization Design", IEEE TVCG
  24(1), 2018, measured the difference needed growing as marks shrink). Okabe & Ito's palette, made
  for colour-blind readers, keeps 10.9 at its closest under these simulations: 10 is the bar it
  clears, and red against green (4.6 for a deuteranope) is far under it.
- **6 for large labelled cells** (the tensor inspector's grid and strip, the broadcasting shapes):
  cells of 50 px or more, side by side, that always carry their value or size as text; the colour
  only helps the eye follow an element, so a smaller difference serves, still six times a
  just-noticeable one.
"""
from __future__ import annotations

import itertools

import pytest

from workbench.common import palette
from workbench.common.colour_vision import (
    DEFICIENCIES,
    MACHADO,
    delta_e_lab,
    hex_to_rgb,
    seen_difference,
    simulate,
)

SMALL_MARKS = 10.0
LABELLED_CELLS = 6.0
VISIONS = (None, *DEFICIENCIES)


def _batch_colours() -> tuple[str, ...]:
    from app_pages.batch_iterator.grid import BATCH_COLOURS
    return tuple(BATCH_COLOURS)


def _batch_class_colours() -> tuple[str, ...]:
    from app_pages.batch_iterator.grid import CLASS_COLOURS
    return tuple(CLASS_COLOURS)


def _rule_colours() -> tuple[str, ...]:
    from app_pages.tensor_inspector.figures import EMPTY_COLOUR, MATRIX_COLOUR, RULE_COLOURS, STRETCH_COLOUR
    return (*dict.fromkeys(RULE_COLOURS.values()), STRETCH_COLOUR, MATRIX_COLOUR, EMPTY_COLOUR)


def _cell_scale() -> tuple[str, ...]:
    from app_pages.tensor_inspector.tables import CELL_SCALE
    return tuple(colour for _, colour in CELL_SCALE)


# name -> (the colours, the threshold)
PALETTES = {
    "Okabe & Ito (Plotly's colourway, lines and bars)": (lambda: palette.OKABE_ITO, SMALL_MARKS),
    "moons classes: points": (lambda: (palette.BLUE, palette.ORANGE), SMALL_MARKS),
    "moons classes: the probability shading": (
        lambda: (palette.CLASS0_BLUE, palette.WHITE, palette.CLASS1_AMBER), SMALL_MARKS),
    "batch iterator: batches": (_batch_colours, SMALL_MARKS),
    "batch iterator: classes": (_batch_class_colours, SMALL_MARKS),
    "tensor inspector: cell scale": (_cell_scale, LABELLED_CELLS),
    "tensor inspector: broadcasting rules": (_rule_colours, LABELLED_CELLS),
}
# Palettes this test found too close and that are not changed yet (none now: the batch
# iterator's eighth colour, a grey 6.2 from the purple for a deuteranope, was dropped).
KNOWN: dict[str, str] = {}


def closest_pair(colours: tuple[str, ...]) -> tuple[float, str, str, str]:
    """The pair of `colours` that looks most alike under any of the visions."""
    return min((seen_difference(a, b, vision), a, b, vision or "typical vision")
               for a, b in itertools.combinations(colours, 2) for vision in VISIONS)


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN[n])) if n in KNOWN else n
    for n in PALETTES])
def test_each_palette_stays_distinguishable_with_each_colour_vision_deficiency(name):
    colours, threshold = PALETTES[name]
    found = colours()
    assert len(found) >= 2
    distance, a, b, vision = closest_pair(tuple(found))
    assert distance >= threshold, f"{name}: {a} and {b} are {distance:.1f} apart for {vision}"


def test_a_planted_red_green_pair_fails():
    """The check can fail: red and green, told apart at a glance with typical vision, look alike
    to a deuteranope (and closer than the bar to a protanope)."""
    red, green = "#D62728", "#2CA02C"
    assert seen_difference(red, green) > 50
    distance, _, _, vision = closest_pair((palette.BLUE, red, green))
    assert distance < SMALL_MARKS and vision == "deuteranopia"


def test_the_tensor_scale_it_replaced_fails_for_a_protanope():
    old = ("#FDE0C5", "#FACBA6", "#B7E4C7", "#9ECAE1", "#C6B3E6")
    distance, _, _, vision = closest_pair(old)
    assert distance < LABELLED_CELLS and vision == "protanopia"


def test_cell_labels_stay_readable_on_every_scale_colour():
    """Dark text on each colour of the tensor scale at WCAG's 7:1 or more."""
    def luminance(colour: str) -> float:
        channels = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
                    for c in hex_to_rgb(colour)]
        return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]

    ink = luminance(palette.TEXT_ON_LIGHT)
    for colour in palette.CELL_SCALE_COLOURS:
        assert (luminance(colour) + 0.05) / (ink + 0.05) >= 7, colour


# The simulation and the difference, on values from their sources.

def test_machado_keeps_greys_grey_and_each_deficiency_loses_its_own_axis():
    for deficiency, matrix in MACHADO.items():
        for row in matrix:                                    # white stays white
            assert sum(row) == pytest.approx(1.0, abs=2e-3), deficiency
        grey = simulate("#808080", deficiency)
        assert max(grey) - min(grey) < 0.01, deficiency

    def shrink(a: str, b: str, deficiency: str) -> float:
        return seen_difference(a, b, deficiency) / seen_difference(a, b)   # type: ignore[arg-type]

    # Red against green shrinks most for the red-green deficiencies (deuteranopia the most),
    # blue against yellow for tritanopia.
    red_green = {d: shrink("#FF0000", "#00FF00", d) for d in DEFICIENCIES}
    blue_yellow = {d: shrink("#0000FF", "#FFFF00", d) for d in DEFICIENCIES}
    assert red_green["deuteranopia"] < red_green["protanopia"] < red_green["tritanopia"]
    assert min(blue_yellow, key=blue_yellow.get) == "tritanopia"


@pytest.mark.parametrize("first, second, expected", [
    # Sharma, Wu & Dalal (2005), Table 1: pairs 1, 7, 17, 25 and 34.
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ((2.0776, 0.0795, -1.135), (0.9033, -0.0636, -0.5514), 0.9082),
])
def test_ciede2000_matches_sharmas_test_data(first, second, expected):
    assert delta_e_lab(first, second) == pytest.approx(expected, abs=1e-4)
