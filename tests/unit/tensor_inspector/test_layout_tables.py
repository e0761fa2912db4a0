"""The Tensor inspector's logical grid and storage strip as HTML tables
(app_pages/tensor_inspector/tables.py): the cells PyTorch's strides put there, one colour per
element of x in both tables, readable text on every colour, and headers a screen reader walks."""
from __future__ import annotations

import pytest
import torch
from plotly.colors import sample_colorscale

from app_pages.tensor_inspector import tables
from app_pages.tensor_inspector.tables import (
    CELL_SCALE,
    STRIP_WIDTH,
    UNREAD_BACKGROUND,
    UNREAD_TEXT,
    grid_html,
    strip_html,
)
from tests.html_tables import read_tables
from workbench.common.theme import contrast
from workbench.tensor_inspector.layout import layout_picture
from workbench.tensor_inspector.report import inspect
from workbench.tensor_inspector.settings import TensorSettings


def _drawn(shape: tuple[int, ...], ops: str = "", **limits):
    """The last step of `ops` on x of `shape`, and its picture as the page draws it."""
    report = inspect(TensorSettings(shape=shape, ops=ops))
    view = report.views[-1]
    return view, layout_picture(view, colour_max=report.views[0].facts.numel - 1, **limits)


def _grid(picture, show="values", label="x", caption="the grid", **kwargs):
    return read_tables(grid_html(picture, label=label, show=show, caption=caption, **kwargs))


def _strip(picture, show="values", label="x", caption="the strip"):
    [table] = read_tables(strip_html(picture, label=label, show=show, caption=caption))
    return table


def _positions(tensor: torch.Tensor) -> torch.Tensor:
    return torch.as_strided(torch.arange(tensor.untyped_storage().nbytes() // tensor.itemsize),
                            tensor.shape, tensor.stride(), tensor.storage_offset())


def test_a_transposed_grid_has_its_rows_and_columns_and_each_cells_storage_position():
    view, picture = _drawn((4, 6), "t()")
    [table] = _grid(picture, label="x.t()", caption="Logical view of x.t(), shape (6, 4)")
    assert table.caption == "Logical view of x.t(), shape (6, 4)"
    positions = _positions(view.tensor)
    cells = table.data_cells()
    assert [len(row) for row in cells] == [4] * 6
    assert [c.text for c in table.head[0] if c.tag == "th"] == ["0", "1", "2", "3"]
    assert [row[0].text for row in table.rows] == [str(r) for r in range(6)]
    assert all(row[0].attrs["scope"] == "row" for row in table.rows)
    for r in range(6):
        for c in range(4):
            cell = cells[r][c]
            assert cell.text == str(int(view.tensor[r, c]))
            assert cell.title == (f"x.t()[{r}, {c}] = {int(view.tensor[r, c])} · "
                                  f"storage position {int(positions[r, c])}")
            assert "<br>" not in cell.title


def test_positions_label_each_cell_with_where_it_lives():
    view, picture = _drawn((4, 6), "t()[1:5]")
    [table] = _grid(picture, show="positions")
    assert [[c.text for c in row] for row in table.data_cells()] == \
        [[str(p) for p in row] for row in _positions(view.tensor).tolist()]


def test_an_element_has_one_colour_in_the_grid_and_in_the_strip():
    view, picture = _drawn((4, 6), "t()")
    [grid] = _grid(picture, show="positions")
    strip = _strip(picture, show="positions")
    strip_colour = {cell.text: cell.style("background") for row in strip.data_cells()
                    for cell in row if cell.text}
    grid_colour = {cell.text: cell.style("background") for row in grid.data_cells() for cell in row}
    assert grid_colour == {p: strip_colour[p] for p in grid_colour}
    assert len(set(grid_colour.values())) == 24         # 24 elements, 24 colours


def test_cell_colours_are_plotlys_own_interpolation_of_the_shared_scale():
    _, picture = _drawn((4, 6))
    for colour in (0, 7, 23):
        fraction = colour / 23
        expected = sample_colorscale(CELL_SCALE, [fraction], colortype="tuple")[0]
        hex_colour = tables.cell_colour(picture, colour)
        assert [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)] == \
            [round(channel * 255) for channel in expected]
    assert tables.cell_colour(picture, 0) == CELL_SCALE[0][1].upper()
    assert tables.cell_colour(picture, 23) == CELL_SCALE[-1][1].upper()


def test_an_unread_strip_cell_is_grey_and_labelled_with_its_position():
    view, picture = _drawn((2, 3), "[:, 1]")
    strip = _strip(picture, label="x[:, 1]", show="positions")
    read = set(_positions(view.tensor).tolist())
    cells = [cell for row in strip.data_cells() for cell in row]
    assert [c.text for c in cells] == [str(p) for p in range(6)]
    for position, cell in enumerate(cells):
        if position in read:
            assert cell.style("background") is not None
            assert "read by x[:, 1][" in cell.title
        else:
            assert cell.attrs["class"] == "unread"
            assert cell.title == f"storage position {position} · value {position} · " \
                                 "not read by this view"


def test_the_strip_wraps_in_rows_headed_by_their_first_position():
    _, picture = _drawn((5, 10))
    strip = _strip(picture)
    assert [c.text for c in strip.head[0]] == ["position"] + [str(c) for c in range(STRIP_WIDTH)]
    assert [row[0].text for row in strip.rows] == ["0", "24", "48"]
    # The last row's two positions, then empty cells to the end of the row.
    assert [c.text for c in strip.data_cells()[-1]][:3] == ["48", "49", ""]


@pytest.mark.parametrize("shape, ops", [((4, 6), "t()[1:5]"), ((24,), ""), ((2, 3, 4), ""),
                                        ((3, 8), "[:, ::3]")])
def test_every_cell_text_reads_at_4_5_to_1_on_its_colour(shape, ops):
    _, picture = _drawn(shape, ops)
    assert contrast(UNREAD_TEXT, UNREAD_BACKGROUND) >= 4.5
    cells = [c for t in _grid(picture) for row in t.data_cells() for c in row]
    cells += [c for row in _strip(picture).data_cells() for c in row if c.text]
    for cell in cells:
        if cell.attrs.get("class") == "unread":
            continue
        assert contrast(cell.style("color"), cell.style("background")) >= 4.5, cell
    # Every colour of the scale, not only those drawn here.
    for k in range(101):
        background = tables._scale_colour(k / 100)
        assert contrast(tables.text_colour(background), background) >= 4.5, background


def test_small_multiples_are_one_table_per_slice_titled_by_the_slice():
    view, picture = _drawn((2, 3, 4))
    markup = grid_html(picture, label="x", show="values", caption="Logical view of x")
    assert '<figcaption class="wb-visually-hidden">Logical view of x</figcaption>' in markup
    first, second = read_tables(markup)
    assert (first.caption, second.caption) == ("x[0, :, :]", "x[1, :, :]")
    assert [[c.text for c in row] for row in second.data_cells()] == \
        [[str(int(v)) for v in row] for row in view.tensor[1].tolist()]
    assert second.data_cells()[2][3].title == "x[1, 2, 3] = 23 · storage position 23"
    assert "grid-template-columns: repeat(2," in grid_html(picture, label="x", show="values",
                                                            caption="c", n_cols=2)


def test_a_scalar_and_a_vector_draw_one_row():
    _, scalar = _drawn(())
    [table] = _grid(scalar)
    assert table.head == [] and [[c.text for c in row] for row in table.rows] == [["0"]]
    _, vector = _drawn((5,))
    [table] = _grid(vector)
    assert [c.text for c in table.head[0]] == ["0", "1", "2", "3", "4"]
    assert [[c.tag for c in row] for row in table.rows] == [["td"] * 5]


def test_labels_and_captions_are_escaped():
    _, picture = _drawn((2, 2))
    markup = grid_html(picture, label="x<b>", show="values", caption="Logical view of <x> & y")
    assert "<b>" not in markup
    [table] = read_tables(markup)
    assert table.caption == "Logical view of <x> & y"
    assert table.data_cells()[0][0].title.startswith("x<b>[0, 0] = ")
    strip = read_tables(strip_html(picture, label="x<i>", show="values", caption="<s>"))[0]
    assert strip.caption == "<s>" and "<i>" not in strip_html(picture, label="x<i>",
                                                               show="values", caption="<s>")


def test_a_tensor_without_values_is_labelled_with_its_positions():
    """Above the page's cap the facts come from the meta device: no values to show."""
    report = inspect(TensorSettings(shape=(1024, 1024), ops="t()"))
    assert not report.materialized
    view = report.views[-1]
    picture = layout_picture(view)
    [table] = _grid(picture, label="x.t()", show="values")
    assert table.data_cells()[1][0].text == "1"
    assert table.data_cells()[0][1].text == "1024"
    assert table.data_cells()[1][0].title == "x.t()[1, 0] = not materialized · storage position 1"
