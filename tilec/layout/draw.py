"""Pictures of layouts, because a grid of numbers is read faster than ``shape:stride``.

``(8,(4,2)):(4,(1,32))`` or ``Sw<3,3,3> o 0 o (8,64):(64,1)`` says exactly where
every element lives, but few people can see a bank conflict or a fragment in it.
This module draws what the notation means, as CuTe's ``print_layout``,
``print_latex`` and ``print_svg`` do:

- ``to_text(x)``: an aligned text grid of offsets (CuTe's ``print_layout``),
  cheap and without any drawing library, for terminals, docs and tests;
- ``render(x, path)`` (also ``tilec.layout.render``): an SVG or PNG picture,
  cells coloured by offset, by shared-memory bank (swizzles) or by thread (TV
  layouts and atoms).

What is drawn, for each kind of value:

- ``Layout`` / ``ComposedLayout``: a grid whose cell ``(i, j)`` holds the offset
  of coordinate ``(i, j)`` of the top two modes; a rank-1 layout is one row and
  a rank>2 layout is grouped as ``(mode 0, rest)``. Cells are coloured by
  offset, or by bank ``(offset * elem_bytes // 4) % 32`` with ``banks=True``.
- ``TVLayout``: its tile, each cell labelled with the thread ``T#`` and value
  ``V#`` that hold it, coloured by thread with CuTe's 8 colours.
- ``MMAAtom``: A (M x K), B (drawn K x N, as in CuTe and the PTX ISA) and
  C (M x N) side by side; ``CopyAtom``: src and dst side by side.

Matplotlib draws and rasterises; it is imported only when a picture is made,
and only through ``matplotlib.figure.Figure`` (no pyplot), so no global backend
or figure registry is touched.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tilec.layout.atoms import CopyAtom, MMAAtom
from tilec.layout.int_tuple import product
from tilec.layout.layout import Layout
from tilec.layout.swizzle import ComposedLayout, Swizzle
from tilec.layout.tv import TVLayout

__all__ = [
    "MAX_CELLS",
    "MAX_SIDE",
    "LABELLED_CELLS",
    "NUM_BANKS",
    "BANK_BYTES",
    "THREAD_COLORS",
    "bank",
    "grid_shape",
    "offset_grid",
    "owner_grid",
    "to_text",
    "print_layout",
    "render",
]

MAX_CELLS = 256 * 256
"""Larger grids are refused: no picture of them is readable."""
MAX_SIDE = 1024
"""Longest row or column drawn (a rank-1 layout is one row)."""
LABELLED_CELLS = 64 * 64
"""Larger grids are drawn as colours only, without per-cell text."""
NUM_BANKS = 32
BANK_BYTES = 4

THREAD_COLORS = (
    "#afafff",
    "#afffaf",
    "#ffffaf",
    "#ffafaf",
    "#d2d2ff",
    "#d2ffd2",
    "#ffffd2",
    "#ffd2d2",
)
"""CuTe's ``print_latex`` palette for threads: thread ``t`` gets ``THREAD_COLORS[t % 8]``."""

_DRAWABLE = "a Layout, ComposedLayout, TVLayout, MMAAtom or CopyAtom"


# -- what is in each cell (no drawing library needed) -------------------------


def bank(offset: int, elem_bytes: int = 2) -> int:
    """The shared-memory bank (32 banks of 4 bytes) of element ``offset``."""
    return (offset * elem_bytes // BANK_BYTES) % NUM_BANKS


def _coordinate_layout(x: Layout | ComposedLayout) -> Layout:
    return x.layout if isinstance(x, ComposedLayout) else x


def grid_shape(x: Layout | ComposedLayout) -> tuple[int, int]:
    """``(rows, cols)`` of the picture: the sizes of mode 0 and of the rest (one row for rank 1)."""
    layout = _coordinate_layout(x)
    if layout.rank() == 1:
        return 1, layout.size()
    rows = layout[0].size()
    return rows, layout.size() // rows


def offset_grid(x: Layout | ComposedLayout) -> list[list[int]]:
    """``grid[i][j]``: the offset at coordinate ``(i, j)`` of the top two modes."""
    rows, cols = grid_shape(x)
    return [[x(i + rows * j) for j in range(cols)] for i in range(rows)]


def _tile_grid_shape(tile: tuple[int, ...]) -> tuple[int, int]:
    if len(tile) == 1:
        return 1, tile[0]
    return tile[0], product(tile[1:])


def owner_grid(tv: TVLayout) -> list[list[list[tuple[int, int]]]]:
    """``grid[i][j]``: every ``(thread, value)`` holding tile element ``(i, j)``, lowest thread first."""
    rows, cols = _tile_grid_shape(tv.tile)
    grid: list[list[list[tuple[int, int]]]] = [[[] for _ in range(cols)] for _ in range(rows)]
    for t in range(tv.num_threads):
        for v in range(tv.num_values):
            o = tv.offset(t, v)
            grid[o % rows][o // rows].append((t, v))
    return grid


@dataclass
class _Panel:
    """One grid of the picture: cell labels and the integers that pick cell colours."""

    heading: list[str]
    labels: list[list[str]]
    keys: list[list[int | None]]  # offset, bank or thread; None: an empty cell
    coloring: str  # "offset", "bank" or "thread"
    notes: list[str] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return len(self.labels)

    @property
    def cols(self) -> int:
        return len(self.labels[0])

    def transposed(self) -> "_Panel":
        flip = lambda grid: [list(col) for col in zip(*grid)]  # noqa: E731
        return _Panel(self.heading, flip(self.labels), flip(self.keys), self.coloring, self.notes)


def _grouping_note(x: Layout | ComposedLayout) -> list[str]:
    layout = _coordinate_layout(x)
    rows, cols = grid_shape(x)
    if layout.rank() == 1:
        return [f"rank 1: one row of {cols}"]
    if layout.rank() > 2:
        return [f"rows: mode 0 ({rows}), columns: modes 1..{layout.rank() - 1} ({cols})"]
    return []


def _layout_panel(x, banks: bool, elem_bytes: int, text: bool) -> _Panel:
    offsets = offset_grid(x)
    notes = _grouping_note(x)
    if not banks:
        labels = [[str(o) for o in row] for row in offsets]
        return _Panel([], labels, offsets, "offset", notes)
    bank_ids = [[bank(o, elem_bytes) for o in row] for row in offsets]
    about = f"{NUM_BANKS} banks x {BANK_BYTES} bytes, elem_bytes={elem_bytes}"
    if text:
        return _Panel([f"banks ({about}):"], [[str(b) for b in row] for row in bank_ids], bank_ids, "bank", notes)
    labels = [[f"{o}\nb{b}" for o, b in zip(orow, brow)] for orow, brow in zip(offsets, bank_ids)]
    return _Panel([], labels, bank_ids, "bank", [f"colour: bank ({about}); label: offset / b<bank>", *notes])


def _owner_label(owners: list[tuple[int, int]], sep: str) -> str:
    if not owners:
        return ""
    t, v = owners[0]
    label = f"T{t}{sep}V{v}"
    return label if len(owners) == 1 else f"{label}{sep}+{len(owners) - 1}"


def _tv_panel(tv: TVLayout, heading: list[str], text: bool) -> _Panel:
    grid = owner_grid(tv)
    sep = "" if text else "\n"
    labels = [[_owner_label(owners, sep) for owners in row] for row in grid]
    keys = [[owners[0][0] if owners else None for owners in row] for row in grid]
    notes = []
    if any(len(owners) > 1 for row in grid for owners in row):
        notes.append("+n: n more (thread, value) pairs hold the same element")
    if any(not owners for row in grid for owners in row):
        notes.append("blank: held by no thread")
    return _Panel(heading, labels, keys, "thread", notes)


def _tile_text(rows: int, cols: int) -> str:
    return f"{rows}x{cols}"


def _mma_panels(atom: MMAAtom, text: bool) -> list[_Panel]:
    m, n, k = atom.shape_mnk
    a = _tv_panel(atom.a, [f"A = {atom.a.layout}", f"M x K = {_tile_text(m, k)} ({atom.a_type})"], text)
    b = _tv_panel(atom.b, [f"B = {atom.b.layout}", f"drawn K x N = {_tile_text(k, n)} ({atom.b_type})"], text)
    c = _tv_panel(atom.c, [f"C = {atom.c.layout}", f"M x N = {_tile_text(m, n)} ({atom.c_type})"], text)
    return [a, b.transposed(), c]


def _copy_panels(atom: CopyAtom, text: bool) -> list[_Panel]:
    panels = []
    for name, tv in (("src", atom.src), ("dst", atom.dst)):
        rows, cols = _tile_grid_shape(tv.tile)
        heading = [f"{name} = {tv.layout}", f"{_tile_text(rows, cols)} of {atom.elem_bits}-bit elements"]
        panels.append(_tv_panel(tv, heading, text))
    return panels


def _describe(x: object) -> str:
    return str(x) if isinstance(x, (Layout, ComposedLayout, TVLayout, Swizzle)) else repr(x)


def _check_drawable(x: object, what: str) -> None:
    if isinstance(x, Swizzle):
        raise ValueError(
            f"{what}: cannot draw the bare swizzle {x}: expected {_DRAWABLE}; "
            f"compose it with a layout, e.g. '{x} o 0 o (8,64):(64,1)'"
        )
    if not isinstance(x, (Layout, ComposedLayout, TVLayout, MMAAtom, CopyAtom)):
        raise ValueError(f"{what}: cannot draw {x!r}: expected {_DRAWABLE}")


def _check_size(x: object, panels: list[_Panel], what: str) -> None:
    rows = max(p.rows for p in panels)
    cols = max(p.cols for p in panels)
    cells = sum(p.rows * p.cols for p in panels)
    if cells > MAX_CELLS or max(rows, cols) > MAX_SIDE:
        shape = " + ".join(f"{p.rows}x{p.cols}" for p in panels)
        raise ValueError(
            f"{what}: {_describe(x)} has {shape} = {cells} cells; at most 256x256 = {MAX_CELLS} cells "
            f"and {MAX_SIDE} on a side can be drawn (draw a tile or a slice of it)"
        )


def _check_positive(value: object, name: str, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{what}: {name} must be a positive int, got {value!r}")


def _title_and_panels(x, banks: bool, elem_bytes: int, text: bool, what: str) -> tuple[str, list[_Panel]]:
    _check_drawable(x, what)
    _check_positive(elem_bytes, "elem_bytes", what)
    if banks and not isinstance(x, (Layout, ComposedLayout)):
        raise ValueError(f"{what}: banks=True colours offsets of a Layout or ComposedLayout, not {_describe(x)}")
    if isinstance(x, (Layout, ComposedLayout)):
        rows, cols = grid_shape(x)
        if rows * cols > MAX_CELLS or max(rows, cols) > MAX_SIDE:  # refuse before evaluating offsets
            _check_size(x, [_Panel([], [[""] * cols] * rows, [[None] * cols] * rows, "offset")], what)
        title, panels = str(x), [_layout_panel(x, banks, elem_bytes, text)]
    elif isinstance(x, TVLayout):
        title, panels = str(x), [_tv_panel(x, [], text)]
    elif isinstance(x, MMAAtom):
        title, panels = f"{x.name}  ({x.instruction})", _mma_panels(x, text)
    else:
        title, panels = f"{x.name}  ({x.instruction})", _copy_panels(x, text)
    _check_size(x, panels, what)
    return title, panels


# -- text ----------------------------------------------------------------------


def _text_table(labels: list[list[str]]) -> list[str]:
    """CuTe's ``print_layout`` grid: column indices on top, row indices on the left."""
    rows, cols = len(labels), len(labels[0])
    width = max(max(len(s) for row in labels for s in row), len(str(cols - 1))) + 2
    row_width = max(2, len(str(rows - 1)))
    indent = " " * (row_width + 1)
    rule = indent + "+" + "+".join("-" * width for _ in range(cols)) + "+"
    lines = [(indent + "".join(f"{j:>{width}} " for j in range(cols))).rstrip(), rule]
    for i, row in enumerate(labels):
        lines.append(f"{i:>{row_width}} " + "".join(f"|{s:>{width - 1}} " for s in row) + "|")
        lines.append(rule)
    return lines


def to_text(x, *, banks: bool = False, elem_bytes: int = 2) -> str:
    """A plain-text picture of ``x`` (CuTe's ``print_layout``): its notation, then a grid.

    Layout and ComposedLayout cells hold offsets (bank numbers with
    ``banks=True``); TV layout cells hold ``T#V#``; atoms give one grid per
    operand.
    """
    title, panels = _title_and_panels(x, banks, elem_bytes, text=True, what="to_text")
    lines = [title]
    for panel in panels:
        if len(panels) > 1:
            lines.append("")
        lines += panel.heading
        lines += _text_table(panel.labels)
        lines += panel.notes
    return "\n".join(lines) + "\n"


def print_layout(x, *, banks: bool = False, elem_bytes: int = 2) -> None:
    """Print ``to_text(x)``."""
    print(to_text(x, banks=banks, elem_bytes=elem_bytes), end="")


# -- picture geometry (inches; the axes spans the figure so data units are inches) --

_MARGIN = 0.25
_GAP = 0.45
_TITLE_PT = 12
_HEADING_PT = 9
_NOTE_PT = 8
_LINE = 1.35  # line height in font sizes
_MAX_GRID_IN = 24.0
_MAX_CELL_IN = 0.5
_MIN_CELL_IN = 0.05
_MAX_LABEL_PT = 10.0
_MIN_LABEL_PT = 4.0
_CHAR = 0.6  # monospace glyph width in font sizes
_LEGEND_IN = 0.55


def _inches(points: float) -> float:
    return points / 72


def _text_width(text: str, points: float) -> float:
    return max((len(line) for line in text.split("\n")), default=0) * _inches(_CHAR * points)


def _cell_size(panels: list[_Panel]) -> float:
    longest = max(sum(p.cols for p in panels), max(p.rows for p in panels))
    return min(_MAX_CELL_IN, max(_MIN_CELL_IN, _MAX_GRID_IN / longest))


def _label_points(panels: list[_Panel], cell: float) -> float:
    """The largest font (capped) at which every label fits in its cell."""
    labels = [s for p in panels for row in p.labels for s in row if s]
    chars = max((len(line) for s in labels for line in s.split("\n")), default=1)
    lines = max((s.count("\n") + 1 for s in labels), default=1)
    room = 0.82 * cell * 72
    return min(_MAX_LABEL_PT, room / (_CHAR * chars), room / (_LINE * lines))


def _show_labels(panels: list[_Panel], points: float, labels: bool | None) -> bool:
    if labels is not None:
        return labels
    cells = sum(p.rows * p.cols for p in panels)
    return cells <= LABELLED_CELLS and points >= _MIN_LABEL_PT


def _index_points(cell: float) -> float:
    return min(8.0, max(5.0, 0.45 * cell * 72))


def _index_step(count: int, cell: float, points: float) -> int:
    """Label every ``step``-th row/column index so that the numbers do not collide."""
    need = _inches(_CHAR * points) * len(str(count - 1)) + 0.04
    step = 1
    while step * cell < need:
        step *= 2
    return step


def _text_luminance_color(rgba) -> str:
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


# -- colours -------------------------------------------------------------------


def _bank_palette():
    """32 distinct colours, one per bank, light enough for black text where possible."""
    # lazy: matplotlib takes ~0.7 s to import; only pictures need it (the module docstring says why)
    from matplotlib import colormaps

    colors = [colormaps["tab20"](i) for i in range(20)] + [colormaps["tab20b"](i) for i in range(20)]
    return [_lighten(c, 0.35) for c in colors[:NUM_BANKS]]


def _lighten(rgba, amount: float):
    return tuple(v + (1 - v) * amount for v in rgba[:3]) + (1.0,)


def _modulo_palette(modulo: int):
    """``modulo`` distinct light colours: qualitative up to 10, then sampled from a rainbow."""
    # lazy: matplotlib takes ~0.7 s to import; only pictures need it (the module docstring says why)
    from matplotlib import colormaps

    if modulo <= 10:
        return [_lighten(colormaps["tab10"](k), 0.35) for k in range(modulo)]
    turbo = colormaps["turbo"]
    return [_lighten(turbo(k / (modulo - 1)), 0.3) for k in range(modulo)]


def _key_colors(panel: _Panel, modulo: int | None, bounds: tuple[int, int]):
    """RGBA per cell, ``rows x cols x 4``; white where the cell is empty."""
    # lazy: numpy (~80 ms) and matplotlib (~0.7 s) are only needed when a picture is made
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.colors import to_rgba

    rgba = np.ones((panel.rows, panel.cols, 4))
    if panel.coloring == "thread":
        table = [to_rgba(c) for c in THREAD_COLORS]
        pick = lambda key: table[key % len(table)]  # noqa: E731
    elif panel.coloring == "bank":
        table = _bank_palette()
        pick = lambda key: table[key]  # noqa: E731
    elif modulo is not None:
        table = _modulo_palette(modulo)
        pick = lambda key: table[key % modulo]  # noqa: E731
    else:
        cmap, (low, high) = colormaps["viridis"], bounds
        pick = lambda key: cmap((key - low) / max(1, high - low))  # noqa: E731
    for i, row in enumerate(panel.keys):
        for j, key in enumerate(row):
            if key is not None:
                rgba[i, j] = pick(key)
    return rgba


# -- drawing -------------------------------------------------------------------


@dataclass
class _Placed:
    panel: _Panel
    x: float  # left of the grid
    y: float  # top of the grid
    width: float  # room the panel takes (grid, row indices, heading)


def _heading_height(panels: list[_Panel]) -> float:
    lines = max(len(p.heading) for p in panels)
    return lines * _inches(_LINE * _HEADING_PT)


def _notes_height(panels: list[_Panel]) -> float:
    lines = max(len(p.notes) for p in panels)
    return (lines * _inches(_LINE * _NOTE_PT) + 0.08) if lines else 0.0


def _place(panels: list[_Panel], cell: float, top: float) -> tuple[list[_Placed], float]:
    """Panels side by side, left to right; returns them and the right edge."""
    index_pt = _index_points(cell)
    grid_top = top + _heading_height(panels) + _inches(_LINE * index_pt) + 0.04
    placed, x = [], _MARGIN
    for p in panels:
        gutter = _inches(_CHAR * index_pt) * len(str(p.rows - 1)) + 0.08
        texts = [*p.heading, *p.notes]
        width = max([gutter + p.cols * cell, *(_text_width(t, _HEADING_PT) for t in texts)])
        placed.append(_Placed(p, x + gutter, grid_top, width))
        x += width + _GAP
    return placed, x - _GAP


def _draw_cells(ax, placed: _Placed, rgba, cell: float, gid: str) -> None:
    # lazy: matplotlib takes ~0.7 s to import; only pictures need it (the module docstring says why)
    from matplotlib.collections import PolyCollection

    p, x0, y0 = placed.panel, placed.x, placed.y
    if p.rows * p.cols > LABELLED_CELLS:
        extent = (x0, x0 + p.cols * cell, y0 + p.rows * cell, y0)
        ax.imshow(rgba, extent=extent, interpolation="none", aspect="auto", gid=gid)
        outline = [[(x0, y0), (extent[1], y0), (extent[1], extent[2]), (x0, extent[2])]]
        ax.add_collection(PolyCollection(outline, facecolors="none", edgecolors="black", linewidths=0.6))
        return
    verts = [
        [(x0 + j * cell, y0 + i * cell), (x0 + (j + 1) * cell, y0 + i * cell),
         (x0 + (j + 1) * cell, y0 + (i + 1) * cell), (x0 + j * cell, y0 + (i + 1) * cell)]
        for i in range(p.rows)
        for j in range(p.cols)
    ]  # fmt: skip
    colors = rgba.reshape(-1, 4)
    edge = min(0.6, max(0.15, cell * 2))
    cells = PolyCollection(verts, facecolors=colors, edgecolors="#404040", linewidths=edge)
    cells.set_gid(gid)
    ax.add_collection(cells)


def _draw_labels(ax, placed: _Placed, rgba, cell: float, points: float) -> None:
    p, x0, y0 = placed.panel, placed.x, placed.y
    for i, row in enumerate(p.labels):
        for j, label in enumerate(row):
            if label:
                ax.text(
                    x0 + (j + 0.5) * cell, y0 + (i + 0.5) * cell, label,
                    ha="center", va="center", ma="center", fontsize=points, family="monospace",
                    linespacing=1.05, color=_text_luminance_color(rgba[i, j]),
                )  # fmt: skip


def _draw_indices(ax, placed: _Placed, cell: float) -> None:
    p, x0, y0 = placed.panel, placed.x, placed.y
    points = _index_points(cell)
    style = dict(fontsize=points, family="monospace", color="#555555")
    for j in range(0, p.cols, _index_step(p.cols, cell, points)):
        ax.text(x0 + (j + 0.5) * cell, y0 - 0.04, str(j), ha="center", va="bottom", **style)
    for i in range(0, p.rows, _index_step(p.rows, cell, points) if p.rows > 1 else 1):
        ax.text(x0 - 0.05, y0 + (i + 0.5) * cell, str(i), ha="right", va="center", **style)


def _draw_heading_and_notes(ax, placed: _Placed, cell: float) -> None:
    p = placed.panel
    left = placed.x - (_inches(_CHAR * _index_points(cell)) * len(str(p.rows - 1)) + 0.08)
    top = placed.y - _inches(_LINE * _index_points(cell)) - 0.04 - _heading_height([p])
    for k, line in enumerate(p.heading):
        weight = "bold" if k == 0 else "normal"
        ax.text(left, top + k * _inches(_LINE * _HEADING_PT), line, ha="left", va="top",
                fontsize=_HEADING_PT, family="monospace", weight=weight)  # fmt: skip
    bottom = placed.y + p.rows * cell + 0.08
    for k, line in enumerate(p.notes):
        ax.text(left, bottom + k * _inches(_LINE * _NOTE_PT), line, ha="left", va="top",
                fontsize=_NOTE_PT, family="sans-serif", color="#333333")  # fmt: skip


def _draw_bank_legend(ax, left: float, top: float, width: float) -> None:
    # lazy: matplotlib takes ~0.7 s to import; only pictures need it (the module docstring says why)
    from matplotlib.collections import PolyCollection

    ax.text(left, top + 0.1, "bank", ha="left", va="center", fontsize=_NOTE_PT, family="sans-serif")
    x0 = left + 0.45
    size = min(0.24, (width - 0.45) / NUM_BANKS)
    colors = _bank_palette()
    verts = [[(x0 + b * size, top), (x0 + (b + 1) * size, top), (x0 + (b + 1) * size, top + size),
              (x0 + b * size, top + size)] for b in range(NUM_BANKS)]  # fmt: skip
    legend = PolyCollection(verts, facecolors=colors, edgecolors="#404040", linewidths=0.3)
    legend.set_gid("bank-legend")
    ax.add_collection(legend)
    points = min(6.5, 0.8 * size * 72 / (2 * _CHAR))
    for b in range(NUM_BANKS):
        ax.text(x0 + (b + 0.5) * size, top + size / 2, str(b), ha="center", va="center", fontsize=points,
                family="monospace", color=_text_luminance_color(colors[b]))  # fmt: skip


def _draw_offset_legend(ax, left: float, top: float, width: float, bounds: tuple[int, int]) -> None:
    # lazy: numpy takes ~80 ms to import and tilec.layout does not need it otherwise
    import numpy as np

    ax.text(left, top + 0.1, "offset", ha="left", va="center", fontsize=_NOTE_PT, family="sans-serif")
    x0, x1 = left + 0.55, left + min(width, 4.5) - 0.4
    gradient = np.linspace(0, 1, 256)[None, :]
    ax.imshow(gradient, cmap="viridis", extent=(x0, x1, top + 0.2, top), aspect="auto", interpolation="bilinear")
    style = dict(fontsize=_NOTE_PT, family="monospace", va="center")
    ax.text(x0 - 0.05, top + 0.1, str(bounds[0]), ha="right", **style)
    ax.text(x1 + 0.05, top + 0.1, str(bounds[1]), ha="left", **style)


def _offset_bounds(panels: list[_Panel]) -> tuple[int, int]:
    keys = [k for p in panels for row in p.keys for k in row if k is not None]
    return (min(keys), max(keys)) if keys else (0, 0)


def _figure(title: str, panels: list[_Panel], labels: bool | None, modulo: int | None):
    # lazy: matplotlib takes ~0.7 s to import; only pictures need it (the module docstring says why)
    from matplotlib.figure import Figure

    cell = _cell_size(panels)
    points = _label_points(panels, cell)
    show = _show_labels(panels, points, labels)
    title_h = _inches(_LINE * _TITLE_PT) + 0.1
    placed, right = _place(panels, cell, _MARGIN + title_h)
    bounds = _offset_bounds(panels)
    legend = "bank" if panels[0].coloring == "bank" else ""
    if not legend and panels[0].coloring == "offset" and modulo is None and not show:
        legend = "offset"
    grid_bottom = max(pl.y + pl.panel.rows * cell for pl in placed) + _notes_height(panels)
    width = max(right, _MARGIN + _text_width(title, _TITLE_PT)) + _MARGIN
    height = grid_bottom + (_LEGEND_IN if legend else 0.0) + _MARGIN

    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.text(_MARGIN, _MARGIN, title, ha="left", va="top", fontsize=_TITLE_PT, family="monospace", weight="bold")
    for k, pl in enumerate(placed):
        rgba = _key_colors(pl.panel, modulo, bounds)
        _draw_cells(ax, pl, rgba, cell, gid=f"cells-{k}")
        _draw_heading_and_notes(ax, pl, cell)
        _draw_indices(ax, pl, cell)
        if show:
            _draw_labels(ax, pl, rgba, cell, max(points, 1.0))
    if legend == "bank":
        _draw_bank_legend(ax, _MARGIN, grid_bottom + 0.2, width - 2 * _MARGIN)
    elif legend == "offset":
        _draw_offset_legend(ax, _MARGIN, grid_bottom + 0.2, width - 2 * _MARGIN, bounds)
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    return fig


def _format_of(path) -> str:
    try:
        text = os.fspath(path)
    except TypeError:
        raise ValueError(f"render: cannot write to {path!r}: expected a file path ending in .svg or .png") from None
    suffix = Path(text).suffix.lower()
    if suffix not in (".svg", ".png"):
        raise ValueError(f"render: cannot write {text!r}: expected a path ending in .svg or .png")
    return suffix[1:]


def _save(fig, path: Path, fmt: str, dpi: int) -> None:
    # lazy: matplotlib takes ~0.7 s to import; only pictures need it (the module docstring says why)
    import matplotlib

    # Text stays text in SVG (searchable, selectable); a fixed salt keeps the ids reproducible
    # (it is the module's old name, tilec.layout.render: keeping it keeps the SVGs byte for byte).
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "tilec.layout.render"}):
        metadata = {"Date": None} if fmt == "svg" else None
        fig.savefig(path, format=fmt, dpi=dpi, metadata=metadata, facecolor="white")


def render(
    x,
    path,
    *,
    banks: bool = False,
    elem_bytes: int = 2,
    modulo: int | None = None,
    labels: bool | None = None,
    dpi: int = 100,
) -> Path:
    """Draw ``x`` to ``path`` (SVG, or PNG when ``path`` ends in ``.png``) and return the path.

    ``x``: a Layout, ComposedLayout, TVLayout, MMAAtom or CopyAtom.
    ``banks``: colour a (swizzled) layout's cells by shared-memory bank of
    ``elem_bytes``-byte elements instead of by offset. ``modulo``: colour by
    ``offset % modulo`` instead of a gradient over the offsets. ``labels``:
    per-cell text on (True) / off (False); by default on up to 64x64 cells.
    Grids over 256x256 cells are refused.
    """
    fmt = _format_of(path)
    if modulo is not None:
        _check_positive(modulo, "modulo", "render")
    _check_positive(dpi, "dpi", "render")
    title, panels = _title_and_panels(x, banks, elem_bytes, text=False, what="render")
    out = Path(os.fspath(path))
    fig = _figure(title, panels, labels, modulo)
    _save(fig, out, fmt, dpi)
    return out
