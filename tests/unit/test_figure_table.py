"""A figure's data table is read from its own traces (components/accessible_chart.py), and the
tensor inspector's grid and strip tables from the same LayoutPicture as the pictures."""
from __future__ import annotations

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from app_pages.tensor_inspector.figures import grid_table, strip_table
from components.accessible_chart import figure_table
from workbench.tensors.facts import StepView
from workbench.tensors.layout import layout_picture
from workbench.tensors.report import inspect
from workbench.tensors.settings import TensorSettings


def test_lines_sharing_x_become_one_row_per_x_named_after_the_axis_and_traces():
    fig = go.Figure([go.Scatter(x=[0, 1, 2], y=[5, 6, 7], name="loss"),
                     go.Scatter(x=[0, 1, 2], y=[0.5, 0.25, 0.125], name="accuracy")])
    fig.update_layout(xaxis_title="epoch")
    table = figure_table(fig)
    assert list(table.columns) == ["epoch", "loss", "accuracy"]
    assert table.to_dict("list") == {"epoch": [0, 1, 2], "loss": [5, 6, 7],
                                     "accuracy": [0.5, 0.25, 0.125]}


def test_one_line_takes_its_y_axis_title():
    fig = go.Figure(go.Scatter(x=[0, 1], y=[3, 9]))
    fig.update_layout(xaxis_title="element", yaxis_title="storage position")
    assert figure_table(fig).to_dict("list") == {"element": [0, 1], "storage position": [3, 9]}


def test_subplots_prefix_each_column_with_the_panel_title_and_a_short_run_leaves_gaps():
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Train loss", "Validation accuracy"))
    fig.add_trace(go.Scatter(x=[1, 2, 3], y=[0.9, 0.5, 0.3], name="correct"), row=1, col=1)
    fig.add_trace(go.Scatter(x=[1, 2], y=[0.9, 2.0], name="broken"), row=1, col=1)
    fig.add_trace(go.Scatter(x=[1, 2, 3], y=[0.6, 0.8, 0.9], name="correct"), row=1, col=2)
    fig.update_xaxes(title_text="epoch")
    table = figure_table(fig)
    assert list(table.columns) == ["epoch", "Train loss: correct", "Train loss: broken",
                                   "Validation accuracy: correct"]
    assert list(table["Validation accuracy: correct"]) == [0.6, 0.8, 0.9]
    assert list(table["Train loss: broken"])[:2] == [0.9, 2.0]
    assert table["Train loss: broken"].isna().tolist() == [False, False, True]


def test_points_that_repeat_an_x_are_listed_one_per_row():
    fig = go.Figure([go.Scatter(x=[0, 0, 1], y=[1, 2, 3], mode="markers", name="class 0"),
                     go.Scatter(x=[2], y=[5], mode="markers", name="class 1")])
    table = figure_table(fig)
    assert list(table.columns) == ["series", "x", "value"]
    assert table.values.tolist() == [["class 0", 0, 1], ["class 0", 0, 2], ["class 0", 1, 3],
                                     ["class 1", 2, 5]]


def test_a_heatmap_is_its_grid_of_cell_texts_with_the_axis_tick_labels():
    fig = go.Figure(go.Heatmap(z=[[1, 2], [3, 4]], text=[["a", "b"], ["c", ""]]))
    fig.update_yaxes(tickmode="array", tickvals=[0, 1], ticktext=["first", "second"])
    fig.update_xaxes(tickmode="array", tickvals=[0, 1], ticktext=["same", "same"])
    table = figure_table(fig)
    assert list(table.columns) == ["row", "same", "same (2)"]
    assert table.values.tolist() == [["first", "a", "b"], ["second", "c", ""]]


def test_a_heatmap_without_text_shows_its_values():
    table = figure_table(go.Figure(go.Heatmap(z=[[1.5, None]])))
    assert table.values.tolist() == [["0", 1.5, ""]]


def test_horizontal_bars_are_keyed_by_their_category():
    fig = go.Figure([go.Bar(x=[1], y=["bits"], orientation="h", name="sign"),
                     go.Bar(x=[8], y=["bits"], orientation="h", name="exponent")])
    assert figure_table(fig).to_dict("list") == {"y": ["bits"], "sign": [1], "exponent": [8]}


def _picture(shape: tuple[int, ...], ops: str):
    report = inspect(TensorSettings(shape=shape, ops=ops))
    view: StepView = report.views[-1]
    return view, layout_picture(view, colour_max=report.views[0].facts.numel - 1)


def test_the_grid_table_is_the_grid_with_each_value_and_the_position_pytorch_reports():
    view, picture = _picture((2, 3), "t()")
    table = grid_table(picture)
    t = view.tensor
    positions = torch.as_strided(torch.arange(6), t.shape, t.stride(), t.storage_offset())
    assert len(table) == t.shape[0]
    for r in range(t.shape[0]):
        assert list(table.iloc[r, 1:]) == [f"{int(t[r, c])} (position {int(positions[r, c])})"
                                           for c in range(t.shape[1])]


def test_a_rank_3_grid_table_names_the_slice_of_each_row():
    view, picture = _picture((2, 2, 3), "")
    table = grid_table(picture)
    assert list(table.columns[:2]) == ["slice", "row"]
    assert list(table["slice"]) == ["x[0, :, :]", "x[0, :, :]", "x[1, :, :]", "x[1, :, :]"]
    assert table.iloc[3]["column 2"] == f"{int(view.tensor[1, 1, 2])} (position 11)"


def test_the_strip_table_says_which_positions_a_slice_does_not_read():
    view, picture = _picture((2, 3), "[:, 1]")
    table = strip_table(picture, label="x[:, 1]")
    read = set(torch.as_strided(torch.arange(6), view.tensor.shape, view.tensor.stride(),
                                view.tensor.storage_offset()).tolist())
    assert len(read) == 2                      # the slice reads 2 of the 6 positions
    for position, reader in zip(table["storage position"], table["read by"], strict=True):
        assert (reader != "not read by this view") == (position in read)
    assert list(table["value"]) == [str(v) for v in range(6)]
