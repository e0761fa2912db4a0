"""Which cells of a tensor to draw, and where each one lives in storage.

The pictures of the Tensor inspector (logical grid, storage strip, memory walk) are drawn from a
`LayoutPicture`: plain lists, so the drawing code needs no PyTorch. Large tensors are drawn in
part; `truncated` says what was left out. Storage positions come from the strides PyTorch
reports: element (i, j, ...) lives at `offset + i*stride[0] + j*stride[1] + ...`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from workbench.tensor_inspector.factory import shape_text
from workbench.tensor_inspector.facts import StepView, walk_positions


@dataclass(frozen=True)
class Panel:
    """One 2-D slice of the tensor: `lead` fixes the leading indices, rows x cols are drawn."""

    lead: tuple[int, ...]
    rows: int
    cols: int
    positions: list[list[int]]              # storage position of each drawn cell
    colours: list[list[int]]                # origin id (real) or storage position (meta)
    values: list[list[str]] | None
    title: str


@dataclass(frozen=True)
class LayoutPicture:
    rank: int
    panels: list[Panel]
    strip_positions: list[int]              # storage positions drawn in the strip
    strip_colours: list[int | None]         # None: not read by this tensor
    strip_values: list[str] | None
    strip_readers: list[str]                # first index that reads it: "[1, 2] (+3 more)", or ""
    walk: list[int]                         # storage positions in the tensor's logical order
    colour_min: int                         # the colour scale both pictures share
    colour_max: int
    truncated: list[str]                    # notes on what was left out


def _value_text(value: object) -> str:
    if isinstance(value, bool):
        return "T" if value else "F"
    if isinstance(value, complex):
        return f"{value.real:.3g}{value.imag:+.3g}j"
    if isinstance(value, float):
        # Whole numbers (arange) print in full so positions stay readable; others in 3 digits.
        return str(int(value)) if value.is_integer() and abs(value) < 1e7 else f"{value:.3g}"
    return str(value)


def _index_text(index: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in index) + "]"


def first_indices(shape: tuple[int, ...], limit: int) -> list[tuple[int, ...]]:
    """The first `limit` indices of `shape` in row-major order, computed from at most `limit`
    counters: a size of 10**9 costs nothing (itertools.product would build every range first)."""
    count = min(limit, math.prod(shape))
    if count == 0:
        return []
    if not shape:
        return [()]
    columns = torch.unravel_index(torch.arange(count), shape)
    return list(zip(*(c.tolist() for c in columns), strict=True))


def layout_picture(view: StepView, *, colour_max: int | None = None, max_rows: int = 12,
                   max_cols: int = 16, max_panels: int = 12, max_strip: int = 192,
                   max_walk: int = 384) -> LayoutPicture:
    """The drawn part of one step: grid panels, storage strip and the memory walk.

    `colour_max` is the largest origin id (numel of x - 1), so every step shares one scale; when
    x is too large to draw whole, the scale spans the colours on screen instead.
    """
    t, facts = view.tensor, view.facts
    real = view.origin is not None
    shape, stride, offset = facts.shape, facts.stride, facts.storage_offset
    rank = len(shape)
    notes: list[str] = []
    grid_shape = (1, 1) if rank == 0 else (1, shape[0]) if rank == 1 else shape[-2:]
    grid_stride = (0, 0) if rank == 0 else (0, stride[0]) if rank == 1 else stride[-2:]
    lead_shape = shape[:-2] if rank > 2 else ()
    if rank == 1:
        max_cols *= 2          # a single row has room for more cells
    # A size can be negative: torch 2.13 lets a 0-d tensor's expand(0, -1) through, shape
    # (0, -1), which holds no element. Nothing to draw, as for any size of 0.
    rows, cols = max(0, min(grid_shape[0], max_rows)), max(0, min(grid_shape[1], max_cols))
    if rank == 1 and grid_shape[1] > cols:
        notes.append(f"the first {cols} of {grid_shape[1]:,} elements are drawn")
    elif grid_shape[0] > rows or grid_shape[1] > cols:
        notes.append(f"each slice shows its first {rows} of {grid_shape[0]} rows and {cols} of "
                     f"{grid_shape[1]} columns")
    leads = first_indices(lead_shape, max_panels)
    n_slices = math.prod(lead_shape)
    if n_slices > len(leads):
        notes.append(f"the first {len(leads)} of {n_slices} slices are drawn")
    row_idx = torch.arange(rows, dtype=torch.int64)[:, None]
    col_idx = torch.arange(cols, dtype=torch.int64)[None, :]
    panels: list[Panel] = []
    for lead in leads if math.prod(shape) > 0 else []:
        base = offset + sum(i * s for i, s in zip(lead, stride, strict=False))
        positions = base + row_idx * grid_stride[0] + col_idx * grid_stride[1]
        if real:
            sub_t, sub_ids = t[lead], view.origin[lead]  # type: ignore[index]
            if rank == 0:
                sub_t, sub_ids = sub_t.reshape(1, 1), sub_ids.reshape(1, 1)
            elif rank == 1:
                sub_t, sub_ids = sub_t[None, :cols], sub_ids[None, :cols]
            else:
                sub_t, sub_ids = sub_t[:rows, :cols], sub_ids[:rows, :cols]
            colours = sub_ids.tolist()
            values = [[_value_text(v) for v in row] for row in sub_t.tolist()]
        else:
            colours, values = positions.tolist(), None
        if rank > 2:
            title = "x" + _index_text(lead)[:-1] + ", :, :]"
        else:
            title = f"shape {shape_text(shape)}"
        panels.append(Panel(lead, rows, cols, positions.tolist(), colours, values, title))
    if facts.numel == 0:
        notes.append("this tensor has no elements: a size is 0")

    strip_n = min(facts.storage_elements, max_strip)
    if facts.storage_elements > strip_n:
        notes.append(f"the strip shows storage positions 0-{strip_n - 1} of "
                     f"{facts.storage_elements:,}")
    readers = [""] * strip_n
    strip_colours: list[int | None]
    strip_values = None
    if real and facts.numel > 0:
        positions_all = torch.as_strided(torch.arange(facts.storage_elements), shape, stride, offset)
        flat = positions_all.reshape(-1)
        first = torch.full((facts.storage_elements,), -1, dtype=torch.int64)
        first.scatter_reduce_(0, flat, torch.arange(flat.numel()), reduce="amin", include_self=False)
        counts = torch.bincount(flat, minlength=facts.storage_elements)
        storage_ids = torch.as_strided(view.origin, (strip_n,), (1,), 0)  # type: ignore[arg-type]
        storage_vals = torch.as_strided(t, (strip_n,), (1,), 0)
        strip_values = [_value_text(v) for v in storage_vals.tolist()]
        strip_colours = []
        first_index = torch.unravel_index(first[:strip_n].clamp(min=0), shape) if shape else ()
        first_index_rows = list(zip(*(i.tolist() for i in first_index), strict=True)) if shape \
            else [()] * strip_n
        for p, (count, origin_id) in enumerate(zip(counts[:strip_n].tolist(), storage_ids.tolist(),
                                                   strict=True)):
            if count == 0:
                strip_colours.append(None)
                continue
            strip_colours.append(origin_id)
            readers[p] = _index_text(first_index_rows[p]) + \
                (f" (+{count - 1} more)" if count > 1 else "")
        walk = flat[:max_walk].tolist()
    else:
        strip_colours = list(range(strip_n))
        walk = walk_positions(shape, stride, offset, max_walk)
    drawn = [c for panel in panels for row in panel.colours for c in row] + \
        [c for c in strip_colours if c is not None]
    if colour_max is None or colour_max >= max_strip:
        # Only part is drawn: spread the colours over what is on screen, or all would look alike.
        colour_min, colour_max = (min(drawn), max(drawn)) if drawn else (0, 1)
    else:
        colour_min = 0
    colour_max = max(colour_max, colour_min + 1)
    if facts.numel > len(walk) and walk:
        notes.append(f"the memory walk follows the first {len(walk)} of {facts.numel:,} elements")
    return LayoutPicture(rank, panels, list(range(strip_n)), strip_colours, strip_values, readers,
                         walk, colour_min, colour_max, notes)
