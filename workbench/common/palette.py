"""Every colour the workbench draws with, named once.

Figures (Plotly, in app_pages/) and graphs (graphviz DOT, in workbench/autograd_graph/) take their
colours from here; `tests/unit/common/test_palette.py` fails if a colour is written out anywhere else.
The categorical colours are Okabe & Ito's palette, distinguishable with every common
colour-vision deficiency.
"""
from __future__ import annotations

# Okabe & Ito, in their order: Plotly's colourway and every "one colour per thing" use.
BLUE = "#0072B2"
ORANGE = "#E69F00"
GREEN = "#009E73"
VERMILION = "#D55E00"
PURPLE = "#CC79A7"
SKY = "#56B4E9"
YELLOW = "#F0E442"
BLACK = "#000000"
OKABE_ITO = (BLUE, ORANGE, GREEN, VERMILION, PURPLE, SKY, YELLOW, BLACK)

# Neutrals, light to dark.
WHITE = "#FFFFFF"
GREY_50 = "#F4F6FA"
GREY_100 = "#F3F4F6"
GREY_150 = "#F0F0F0"
GREY_200 = "#EEF1F5"
GREY_250 = "#E6E6E6"
GREY_300 = "#D9D9D9"
GREY_400 = "#A6A6A6"
GREY_450 = "#999999"
GREY_500 = "#8C959F"
GREY_550 = "#8A8A8A"
GREY_600 = "#777777"
GREY_650 = "#6E7781"
GREY_700 = "#57606A"
GREY_800 = "#4D4D4D"
INK = "#1F2328"
INK_SOFT = "#1A1D23"
TEXT_ON_LIGHT = "#111111"
TRANSPARENT = "rgba(0,0,0,0)"

# Text on white that says right or wrong (the class's printed report), 6.5:1 or more.
RIGHT_GREEN = "#0B6B2B"
WRONG_RED = "#A4262C"

# Pale tints of the categorical colours: fills behind dark text.
PALE_PEACH = "#FDE0C5"
PALE_GREEN = "#B7E4C7"
PALE_BLUE = "#9ECAE1"
PALE_SALMON = "#F4A582"
PALE_YELLOW = "#FEF2AE"
TINT_GREEN = "#DDF4E4"
TINT_BLUE = "#D6EAF8"
TINT_PINK = "#F9E0EE"
TINT_ORANGE = "#FDE7C8"
TINT_AMBER = "#FFC978"
TINT_CREAM = "#FFF1E0"
DEEP_BROWN = "#7A2E00"

# Diverging scale of a predicted probability: class 0 blue, undecided white, class 1 amber.
CLASS0_BLUE = "#4C9BD0"
CLASS1_AMBER = "#F2B84B"

# The tensor inspector's cell scale: an element keeps its colour wherever a view moves it. Pale
# (dark text reads on each at 7:1 or more), lightness rising from lilac to pale yellow with the
# hue turning through blue and green (CIELAB L* 66 to 95, chroma 35, hue 320 to 100 degrees), so
# that no two parts of the scale look alike under protanopia, deuteranopia or tritanopia either
# (tests/unit/common/test_colour_vision.py). The scale it replaced (peach, apricot, green, blue, lilac)
# put its middle and its end 2.3 apart (CIEDE2000) for a protanope.
CELL_LILAC = "#BE91C9"
CELL_SKY = "#7FB9F3"
CELL_AQUA = "#5CD9E7"
CELL_MINT = "#A3ECBF"
CELL_SCALE_COLOURS = (CELL_LILAC, CELL_SKY, CELL_AQUA, CELL_MINT, PALE_YELLOW)
