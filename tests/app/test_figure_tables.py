"""Every Plotly chart of the tensor inspector and the moons trainer has an accessible name and a
data table a learner can open, with the figure's own numbers (components/accessible_chart.py).
The tables are built only when opened: a closed one sends nothing. The tensor inspector's grid
and strip are HTML tables, their own text alternative: their captions and cells are checked
here too."""
from __future__ import annotations

import base64
import json
import re
from xml.etree import ElementTree

import pytest
import torch

from app_pages.tensor_inspector.light_figures import (
    FONT_PX,
    HEIGHT,
    SHAPES_CLASS,
    WALK_CLASS,
    WIDTH,
    walk_svg,
)
from app_pages.tensor_inspector.tables import GRID_CLASS, STRIP_CLASS
from tests.app.apptest import assert_clean, open_page
from tests.html_tables import read_tables

TENSORS = "app_pages/tensor_inspector/page.py"
MOONS = "app_pages/moons_trainer/page.py"
QUICK = {"n": "300", "epochs": "2"}


def _charts(at) -> dict[str, object]:
    return {c.proto.id.rsplit("-", 1)[-1]: c for c in at.get("plotly_chart")}


def _table_expanders(at) -> dict[str, object]:
    return {e.proto.id.rsplit("-", 1)[-1]: e for e in at.expander if e.label.startswith("Data table: ")}


def _open_table(at, key: str):
    """Open the chart's "Data table" expander (a learner's click) and return its table."""
    at.session_state[f"{key}_table"] = True
    at.run()
    assert_clean(at, key)
    tables = [t for e in [_table_expanders(at)[f"{key}_table"]] for t in e.get("table")]
    assert len(tables) == 1, key
    return tables[0].value


def _labelled_with_tables(at) -> None:
    """Each chart is named, and has its closed table expander, named after the chart."""
    charts, expanders = _charts(at), _table_expanders(at)
    assert charts
    for key, chart in charts.items():
        assert chart.proto.alt.strip(), f"{key} has no accessible name"
        assert f"{key}_table" in expanders, f"{key} has no data table"
        title = expanders[f"{key}_table"].label.removeprefix("Data table: ").replace("\\", "")
        assert title == chart.proto.alt
    built = [key for key, e in expanders.items() if e.get("table")]
    assert not built, f"closed data tables were built and sent: {built}"


def _html_with(at, css_class: str) -> str:
    return next(e.proto.body for e in at.get("html") if f'class="{css_class}"' in e.proto.body)


def _walk_svg(at) -> str:
    """The memory walk: an SVG document drawn by st.image (st.html drops <svg>)."""
    urls = [img.url for image in at.get("image") for img in image.proto.imgs]
    [svg] = [base64.b64decode(u.split(",", 1)[1]).decode() for u in urls
             if u.startswith("data:image/svg+xml;base64,")]
    assert f'class="{WALK_CLASS}"' in svg
    return svg


def _drawn_table(at, css_class: str) -> list:
    """The tables of the page's st.html block that draws `css_class` (grid or strip)."""
    return read_tables(next(e.proto.body for e in at.get("html") if css_class in e.proto.body))


def test_every_tensor_inspector_chart_is_named_and_has_a_closed_table():
    """No Plotly chart on the page as it opens (its 4.7 MB bundle made the first screen 3-10x
    slower than the other pages'): the walk is an SVG and the broadcasting shapes an HTML table,
    each named, with its closed data table; the grid and the strip are tables themselves, named
    by their captions, with no second table."""
    at = open_page(TENSORS, query={"shape": "4,6", "ops": "t()"})
    assert_clean(at)
    assert not _charts(at)
    expanders = _table_expanders(at)
    walk_label = "Memory walk of x.t(): the storage position of each element, row by row"
    assert f'aria-label="{walk_label}"' in _walk_svg(at)
    assert [image.proto.imgs[0].alt for image in at.get("image")] == [walk_label]
    assert expanders["ti_walk_table"].label.removeprefix("Data table: ").replace("\\", "") == walk_label
    shapes = _html_with(at, SHAPES_CLASS)
    [shapes_table] = read_tables(shapes)
    assert expanders["ti_shapes_table"].label.removeprefix("Data table: ").replace("\\", "") \
        == shapes_table.caption
    assert not [key for key, e in expanders.items() if e.get("table")], "closed tables were built"
    assert not {"ti_grid_table", "ti_strip_table"} & set(expanders)
    [grid] = _drawn_table(at, GRID_CLASS)
    assert grid.caption == "Logical view of x.t(), shape (6, 4)"
    [strip] = _drawn_table(at, STRIP_CLASS)
    assert strip.caption == "Storage of x.t(): x's own storage, shared by this view"


def test_the_grid_table_holds_each_cells_value_and_storage_position():
    at = open_page(TENSORS, query={"shape": "4,6", "ops": "t()"})
    view = torch.arange(24.0).reshape(4, 6).t()
    positions = torch.as_strided(torch.arange(24), view.shape, view.stride(), view.storage_offset())
    [table] = _drawn_table(at, GRID_CLASS)
    assert [c.text for c in table.head[0] if c.tag == "th"] == [str(c) for c in range(view.shape[1])]
    cells = table.data_cells()
    assert len(cells) == view.shape[0]
    for r in range(view.shape[0]):
        for c in range(view.shape[1]):
            assert cells[r][c].text == str(int(view[r, c].item()))
            assert cells[r][c].title.endswith(f"storage position {int(positions[r, c])}")


def test_the_strip_table_names_the_index_that_reads_each_position():
    at = open_page(TENSORS, query={"shape": "4,6", "ops": "t()"})
    [table] = _drawn_table(at, STRIP_CLASS)
    view = torch.arange(24.0).reshape(4, 6).t()
    positions = torch.as_strided(torch.arange(24), view.shape, view.stride(), view.storage_offset())
    cells = [cell for row in table.data_cells() for cell in row]
    assert [cell.text for cell in cells] == [str(p) for p in range(24)]
    for position in (1, 6, 23):
        index = tuple(int(i) for i in (positions == position).nonzero()[0])
        assert cells[position].title == (f"storage position {position} · value {position} · "
                                         f"read by x.t()[{', '.join(map(str, index))}]")


def test_the_walk_table_is_the_figures_line():
    at = open_page(TENSORS, query={"shape": "4,6", "ops": "t()"})
    table = _open_table(at, "ti_walk")
    drawn = re.search(r'data-walk="([0-9,]*)"', _walk_svg(at)).group(1)
    assert list(table.columns) == ["element number (row by row)", "storage position"]
    assert list(table["storage position"]) == [int(p) for p in drawn.split(",")]
    view = torch.arange(24.0).reshape(4, 6).t()
    walk = torch.as_strided(torch.arange(24), view.shape, view.stride()).reshape(-1).tolist()
    assert list(table["storage position"]) == walk


def test_the_broadcasting_table_lists_each_aligned_dimension():
    at = open_page(TENSORS)
    table = _open_table(at, "ti_shapes")
    a, b = torch.empty(8, 1, 6, 1), torch.empty(7, 1, 5)      # the default shapes
    result = torch.broadcast_shapes(a.shape, b.shape)
    assert list(table["result"]) == [str(n) for n in result]
    assert list(table["a"]) == [str(n) for n in a.shape]
    assert list(table["b"]) == ["-"] + [str(n) for n in b.shape]
    assert list(table["dimension"]) == [-4, -3, -2, -1]


@pytest.mark.parametrize("tab, key", [("Model", "mt_activation"), ("Losses & hooks", "mt_loss_curves")])
def test_the_moons_trainer_charts_are_named_with_their_numbers_in_a_table(tab, key):
    at = open_page(MOONS, QUICK)
    at.session_state["mt_tabs"] = tab
    at.run()
    assert_clean(at)
    _labelled_with_tables(at)
    table = _open_table(at, key)
    figure = json.loads(_charts(at)[key].proto.spec)
    for trace in figure["data"]:
        column = next(c for c in table.columns if c.endswith(trace["name"]) and
                      (len(figure["data"]) < 4 or c.startswith(_panel(figure, trace))))
        assert list(table[column]) == pytest.approx(trace["y"])
        assert list(table[table.columns[0]]) == pytest.approx(trace["x"])


def _panel(figure: dict, trace: dict) -> str:
    """The subplot title over the trace's x axis."""
    axis = "xaxis" + trace.get("xaxis", "x")[1:]
    low, high = figure["layout"][axis]["domain"]
    return next(a["text"] for a in figure["layout"]["annotations"] if low <= a["x"] <= high)


def test_the_pitfall_chart_is_named_and_its_table_has_both_runs():
    at = open_page(MOONS, QUICK)
    at.session_state["mt_tabs"] = "Pitfall lab"
    at.run()
    at.radio(key="mt_pitfall").set_value("no_zero_grad").run()
    at.button(key="mt_pitfall_run").click().run()
    assert_clean(at)
    _labelled_with_tables(at)
    table = _open_table(at, "mt_pitfall_figure")
    figure = json.loads(_charts(at)["mt_pitfall_figure"].proto.spec)
    assert len(table) == max(len(t["x"]) for t in figure["data"])
    for trace in figure["data"]:
        column = next(c for c in table.columns if c == f"{_panel(figure, trace)}: {trace['name']}")
        assert [v for v in table[column] if v == v and v is not None][:len(trace["y"])] == \
            pytest.approx(trace["y"])


def test_the_weights_and_gradients_charts_are_named_with_each_epoch_in_a_table():
    from tests.app.apptest import settle

    at = open_page(MOONS, QUICK)
    settle(at.button(key="mt_step").click().run())
    settle(at.button(key="mt_step").click().run())
    at.session_state["mt_tabs"] = "Weights & gradients"
    at.run()
    assert_clean(at)
    _labelled_with_tables(at)
    table = _open_table(at, "mt_wg_layer0")
    figure = json.loads(_charts(at)["mt_wg_layer0"].proto.spec)
    assert list(table["epoch"]) == figure["data"][0]["x"] == [1, 2]
    first = at.session_state["learner::moons_trainer"].session.model.net[0]
    assert table["mean |gradient|"].iloc[-1] == f"{float(first.weight.grad.abs().mean()):.2e}"


@pytest.mark.parametrize("walk", [[0], list(range(24)), [0, 6, 12, 18, 1, 7, 13, 19],
                                  list(range(99_999, -1, -1))])
def test_every_walk_text_lies_inside_the_drawing(walk):
    """The walk's axis titles were cut in presenter mode (issue 12): as an image, a text is cut
    only if it runs past the SVG's own viewBox. Each text's extent is estimated at 0.6 em per
    character (wider than the sans-serif's digits and lower-case letters)."""
    em = FONT_PX
    svg = ElementTree.fromstring(walk_svg(walk, label="Memory walk of x"))
    texts = [t for t in svg.iter() if t.tag.endswith("}text")]
    assert {"element number (row by row)", "storage position"} <= {t.text for t in texts}
    for text in texts:
        length = 0.6 * em * len(text.text)
        if "transform" in text.attrib:          # the y title, turned a quarter round
            x, y = map(float, re.findall(r"[\d.]+", text.attrib["transform"])[:2])
            assert x - em >= 0 and y - length / 2 >= 0 and y + length / 2 <= HEIGHT, text.text
            continue
        x, y = float(text.attrib["x"]), float(text.attrib["y"])
        left = {"middle": x - length / 2, "end": x - length}.get(text.attrib.get("text-anchor"), x)
        assert left >= 0 and left + length <= WIDTH and y - em >= 0 and y <= HEIGHT, text.text
