"""A figure's data table is read from its own traces (components/accessible_chart.py). (The
tensor inspector's grid and strip are tables themselves:
tests/unit/tensor_inspector/test_layout_tables.py.)"""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from components.accessible_chart import figure_table


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
