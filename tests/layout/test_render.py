"""Pictures and text grids of layouts (``tilec.layout.draw``, ``tilec.layout.render``) and the
``python -m tilec.layout`` CLI.

SVGs are read back as XML: cell groups (``cells-<panel>``) must hold one path per
cell, cell colours must say what the picture claims (bank, thread), and labels
and the title must be there as text.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import matplotlib.image
import pytest

from tilec.layout import COPY_ATOMS, MMA_M16N8K16_F16, ComposedLayout, Swizzle, TVLayout, parse
from tilec.layout import render as render_from_package
from tilec.layout.__main__ import main
from tilec.layout.draw import THREAD_COLORS, bank, grid_shape, offset_grid, owner_grid, render, to_text

SVG = "{http://www.w3.org/2000/svg}"

GRID_4x4 = """\
(4,4):(4,1)
      0    1    2    3
   +----+----+----+----+
 0 |  0 |  1 |  2 |  3 |
   +----+----+----+----+
 1 |  4 |  5 |  6 |  7 |
   +----+----+----+----+
 2 |  8 |  9 | 10 | 11 |
   +----+----+----+----+
 3 | 12 | 13 | 14 | 15 |
   +----+----+----+----+
"""


def _svg(path):
    return ET.parse(path).getroot()


def _group(root, gid):
    found = [g for g in root.iter(f"{SVG}g") if g.get("id") == gid]
    assert len(found) == 1, f"expected one group {gid!r}, found {len(found)}"
    return found[0]


def _cell_fills(root, gid):
    """The fill colour of each cell path of group ``gid``, in row-major cell order."""
    fills = []
    for path in _group(root, gid).iter(f"{SVG}path"):
        style = dict(part.strip().split(": ") for part in path.get("style").split(";") if part.strip())
        fills.append(style["fill"])
    return fills


def _texts(root):
    return [t.text for t in root.iter(f"{SVG}text")]


# -- what the cells hold -------------------------------------------------------


def test_grid_shape_groups_top_two_modes():
    assert grid_shape(parse("(8,8):(8,1)")) == (8, 8)
    assert grid_shape(parse("16:1")) == (1, 16)
    assert grid_shape(parse("((2,2),(4,2)):((1,8),(2,32))")) == (4, 8)
    assert grid_shape(parse("(2,3,4):(1,2,6)")) == (2, 12)  # (mode 0, rest)
    assert offset_grid(parse("(2,(2,2)):(1,(4,2))")) == [[0, 4, 2, 6], [1, 5, 3, 7]]
    assert offset_grid(parse("Sw<1,0,1> o 0 o (2,2):(2,1)")) == [[0, 1], [3, 2]]


def test_owner_grid_of_the_mma_accumulator():
    grid = owner_grid(MMA_M16N8K16_F16.c)
    assert (len(grid), len(grid[0])) == (16, 8)
    # lane l = 4g + q holds (g, 2q..2q+1) and (g+8, 2q..2q+1)
    assert grid[0][0] == [(0, 0)] and grid[0][1] == [(0, 1)] and grid[8][0] == [(0, 2)]
    assert grid[3][5] == [(4 * 3 + 2, 1)]


def test_bank_model():
    assert [bank(o) for o in (0, 1, 2, 63, 64)] == [0, 0, 1, 31, 0]
    assert bank(3, elem_bytes=4) == 3 and bank(1, elem_bytes=8) == 2


# -- text ----------------------------------------------------------------------


def test_text_grid_is_cutes_print_layout():
    assert to_text(parse("(4,4):(4,1)")) == GRID_4x4


def test_text_of_tv_layout_and_banks():
    text = to_text(TVLayout(parse("((4,8),(2,2)):((32,1),(16,8))"), (16, 8)))
    assert text.splitlines()[0] == "((4,8),(2,2)):((32,1),(16,8)) over 16x8"
    assert " 0 |  T0V0 |  T0V1 |  T1V0 |" in text and " 8 |  T0V2 |" in text
    banks = to_text(parse("Sw<3,3,3> o 0 o (8,64):(64,1)"), banks=True)
    rows = [line for line in banks.splitlines() if line[:2].strip().isdigit()]
    assert len(rows) == 8 and rows[1].startswith(" 1 |  4 |  4 |  5 |  5 |")  # row 1's first 16 B chunk is swapped


def test_text_of_mma_atom_has_three_operands():
    text = to_text(MMA_M16N8K16_F16)
    assert text.startswith("mma_m16n8k16_f16  (mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32)\n")
    for heading in ("A = ((4,8),(2,2,2)):((32,1),(16,8,128))", "B = ", "C = ((4,8),(2,2)):((32,1),(16,8))"):
        assert heading in text


# -- pictures ------------------------------------------------------------------


def test_svg_of_layout(tmp_path):
    out = render(parse("(8,8):(8,1)"), tmp_path / "l.svg")
    assert out == tmp_path / "l.svg"
    root = _svg(out)
    assert len(_cell_fills(root, "cells-0")) == 64
    texts = _texts(root)
    assert "(8,8):(8,1)" in texts
    assert all(str(o) in texts for o in range(64))


def test_package_render_is_this_render(tmp_path):
    out = render_from_package(parse("(2,3):(3,1)"), str(tmp_path / "p.svg"))
    assert len(_cell_fills(_svg(out), "cells-0")) == 6


def test_package_render_works_twice_in_one_process(tmp_path):
    """Issue 17: the lazy import of the drawing module used to replace ``tilec.layout.render``
    (the function) by the submodule, so the second call raised ``'module' object is not callable``.
    Run in a fresh interpreter, so that no earlier test has imported the drawing module."""
    code = (
        "import sys, tilec.layout as tl\n"
        "a = tl.render(tl.parse('(2,3):(3,1)'), sys.argv[1])\n"
        "b = tl.render(tl.parse('(2,3):(3,1)'), sys.argv[2])\n"
        "assert callable(tl.render), tl.render\n"
        "print(open(a, 'rb').read() == open(b, 'rb').read())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "a.svg"), str(tmp_path / "b.svg")],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
    # and in this process too, whatever was imported before
    import tilec.layout

    for name in ("c.svg", "d.svg"):
        tilec.layout.render(parse("(2,2):(2,1)"), tmp_path / name)
    assert callable(tilec.layout.render)


def test_svg_of_swizzled_layout_coloured_by_bank(tmp_path):
    x = parse("Sw<3,3,3> o 0 o (8,64):(64,1)")
    root = _svg(render(x, tmp_path / "sw.svg", banks=True, elem_bytes=2))
    fills = _cell_fills(root, "cells-0")
    legend = _cell_fills(root, "bank-legend")
    assert len(fills) == 8 * 64 and len(legend) == 32 and len(set(legend)) == 32
    offsets = offset_grid(x)
    assert fills == [legend[bank(offsets[i][j], 2)] for i in range(8) for j in range(64)]
    texts = _texts(root)
    assert str(x) in texts and "b31" in texts and "72" in texts
    # conflict-free ldmatrix phase: 8 rows of one 16 B column chunk hit 8 different bank quads
    assert len({fills[i * 64] for i in range(8)}) == 8


def test_svg_of_tv_layout_coloured_by_thread(tmp_path):
    tv = TVLayout(parse("((4,8),(2,2)):((32,1),(16,8))"), (16, 8))
    root = _svg(render(tv, tmp_path / "tv.svg"))
    fills = _cell_fills(root, "cells-0")
    assert len(fills) == 16 * 8
    owners = owner_grid(tv)
    expected = [THREAD_COLORS[owners[i][j][0][0] % 8] for i in range(16) for j in range(8)]
    assert fills == expected
    texts = _texts(root)
    assert texts.count("T0") == 4 and texts.count("T31") == 4 and "V3" in texts
    assert str(tv) in texts


def test_svg_of_mma_atom_draws_a_b_c(tmp_path):
    root = _svg(render(MMA_M16N8K16_F16, tmp_path / "mma.svg"))
    assert [len(_cell_fills(root, f"cells-{k}")) for k in range(3)] == [16 * 16, 16 * 8, 16 * 8]
    texts = _texts(root)
    assert any(t.startswith("mma_m16n8k16_f16") for t in texts)
    assert any(t.startswith("A = ") for t in texts) and any(t.startswith("C = ") for t in texts)
    assert texts.count("T0") == 8 + 4 + 4


def test_svg_of_copy_atom_draws_src_and_dst(tmp_path):
    root = _svg(render(COPY_ATOMS["ldmatrix_x4"], tmp_path / "ldm.svg"))
    assert [len(_cell_fills(root, f"cells-{k}")) for k in range(2)] == [8 * 32, 8 * 32]


def test_svg_is_reproducible(tmp_path):
    a = render(parse("(4,2):(2,1)"), tmp_path / "a.svg").read_bytes()
    b = render(parse("(4,2):(2,1)"), tmp_path / "b.svg").read_bytes()
    assert a == b


def test_png_written_with_expected_size(tmp_path):
    out = render(parse("(4,4):(4,1)"), tmp_path / "l.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width = matplotlib.image.imread(out).shape[:2]
    assert 200 <= width <= 600 and 200 <= height <= 600
    big = render(parse("(4,4):(4,1)"), tmp_path / "l2.png", dpi=200)
    height2, width2 = matplotlib.image.imread(big).shape[:2]
    assert abs(width2 - 2 * width) <= 2 and abs(height2 - 2 * height) <= 2


def test_big_grids_are_colours_only(tmp_path):
    root = _svg(render(parse("(65,65):(65,1)"), tmp_path / "big.svg"))
    texts = _texts(root)
    assert "(65,65):(65,1)" in texts and "4224" in texts  # the legend's upper end
    assert "4223" not in texts  # no per-cell labels
    assert root.find(f".//{SVG}image") is not None


def test_absurd_sizes_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"\(257,256\):\(256,1\) has 257x256 = 65792 cells"):
        render(parse("(257,256):(256,1)"), tmp_path / "x.svg")
    with pytest.raises(ValueError, match="4096 cells"):
        render(parse("4096:1"), tmp_path / "x.svg")  # one row of 4096 is more than 1024 on a side
    assert not (tmp_path / "x.svg").exists()


@pytest.mark.parametrize(
    ("value", "path", "options", "message"),
    [
        (42, "x.svg", {}, r"cannot draw 42: expected a Layout, ComposedLayout, TVLayout"),
        ("(4,4):(4,1)", "x.svg", {}, r"cannot draw '\(4,4\):\(4,1\)'"),
        (Swizzle(3, 3, 3), "x.svg", {}, r"bare swizzle Sw<3,3,3>.*compose it with a layout"),
        (parse("(4,4):(4,1)"), "x.pdf", {}, r"cannot write '.*x\.pdf': expected a path ending in \.svg or \.png"),
        (parse("(4,4):(4,1)"), 3.5, {}, r"cannot write to 3\.5"),
        (MMA_M16N8K16_F16.c, "x.svg", {"banks": True}, r"banks=True .* not \(\(4,8\)"),
        (parse("(4,4):(4,1)"), "x.svg", {"banks": True, "elem_bytes": 0}, r"elem_bytes must be a positive int, got 0"),
        (parse("(4,4):(4,1)"), "x.svg", {"modulo": -1}, r"modulo must be a positive int"),
    ],
)
def test_bad_input_is_a_value_error(tmp_path, value, path, options, message):
    target = tmp_path / path if isinstance(path, str) else path
    with pytest.raises(ValueError, match=message):
        render(value, target, **options)


def test_to_text_rejects_non_layouts():
    with pytest.raises(ValueError, match=r"to_text: cannot draw \[1, 2\]"):
        to_text([1, 2])
    swizzled = parse("Sw<1,0,1> o 0 o 4:1")
    assert isinstance(swizzled, ComposedLayout)
    assert to_text(swizzled).splitlines()[3] == " 0 | 0 | 1 | 3 | 2 |"


# -- the CLI -------------------------------------------------------------------


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "tilec.layout", *args], capture_output=True, text=True, timeout=60)


def test_cli_prints_the_text_grid():
    done = _cli("(4,4):(4,1)")
    assert done.returncode == 0, done.stderr
    assert done.stdout == GRID_4x4


def test_cli_writes_a_picture(tmp_path):
    out = tmp_path / "sw.svg"
    done = _cli("Sw<3,3,3> o 0 o (8,64):(64,1)", "--banks", "--elem-bytes", "2", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert str(out) in done.stdout
    assert len(_cell_fills(_svg(out), "cells-0")) == 512


def test_cli_error_is_one_line_not_a_traceback():
    done = _cli("(4,4):(4")
    assert done.returncode == 1
    assert "cannot parse layout '(4,4):(4'" in done.stderr and "Traceback" not in done.stderr
    done = _cli("--elem-bytes", "4", "(4,4):(4,1)")
    assert done.returncode == 2 and "--elem-bytes only applies with --banks" in done.stderr


def test_cli_tv_and_atom_options(tmp_path, capsys):
    assert main(["((4,8),(2,2)):((32,1),(16,8))", "--tv", "16x8"]) == 0
    assert " 0 |  T0V0 |  T0V1 |" in capsys.readouterr().out
    assert main(["--atom", "mma_m16n8k16_f16", "-o", str(tmp_path / "mma.png")]) == 0
    assert (tmp_path / "mma.png").read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    assert main(["--atom", "ldmatrix_x9"]) == 1
    assert "unknown atom 'ldmatrix_x9'" in capsys.readouterr().err
    assert main(["(4,4):(4,1)", "--tv", "3x3"]) == 1
    assert "outside the tile" in capsys.readouterr().err
    assert main(["(4,4):(4,1)", "--tv", "four"]) == 1
    assert "--tv 'four': expected a tile like 16x8" in capsys.readouterr().err
    for argv in ([], ["(4,4):(4,1)", "--atom", "fma_f32"], ["--atom", "fma_f32", "--banks"]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
