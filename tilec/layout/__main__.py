"""``python -m tilec.layout``: look at a layout, in the terminal or as a picture.

    python -m tilec.layout "(8,8):(8,1)"                     # text grid, like CuTe's print_layout
    python -m tilec.layout "(8,8):(8,1)" -o out.svg           # SVG (or .png) picture
    python -m tilec.layout "Sw<3,3,3> o 0 o (8,64):(64,1)" --banks --elem-bytes 2 -o sw.png
    python -m tilec.layout "((4,8),(2,2)):((32,1),(16,8))" --tv 16x8
    python -m tilec.layout --atom mma_m16n8k16_f16 -o mma.png

Bad options exit with status 2, values that cannot be parsed or drawn with 1;
either way the problem is one line on stderr.
"""

from __future__ import annotations

import argparse
import sys

from tilec.layout.atoms import COPY_ATOMS, MMA_ATOMS
from tilec.layout.layout import Layout
from tilec.layout.parse import parse, parse_int_tuple
from tilec.layout.draw import render, to_text
from tilec.layout.tv import TVLayout

PROG = "python -m tilec.layout"


def _parser() -> argparse.ArgumentParser:
    atoms = ", ".join([*MMA_ATOMS, *COPY_ATOMS])
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Print a CuTe layout as a text grid, or draw it to an SVG/PNG file.",
        epilog=f"atoms: {atoms}",
    )
    parser.add_argument(
        "layout", nargs="?", help="CuTe notation, e.g. '(8,8):(8,1)' or 'Sw<3,3,3> o 0 o (8,64):(64,1)'"
    )
    parser.add_argument("-o", "--output", metavar="PATH", help="write a picture (.svg or .png) instead of printing")
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument("--tv", metavar="TILE", help="read a rank-2 layout as a TV layout over TILE, e.g. 16x8")
    kind.add_argument("--atom", metavar="NAME", help="draw an MMA or copy atom instead of a layout")
    parser.add_argument("--banks", action="store_true", help="show shared-memory banks instead of offsets")
    parser.add_argument("--elem-bytes", type=int, metavar="N", help="element size in bytes for --banks (default 2)")
    return parser


def _tile(text: str) -> tuple[int, ...]:
    """``16x8``, ``16,8``, ``(16,8)`` or ``128``."""
    try:
        value = parse_int_tuple(text if "(" in text else f"({text.replace('x', ',')})")
    except ValueError:
        value = None
    flat = value if isinstance(value, tuple) else (value,)
    if value is None or not all(isinstance(v, int) and v > 0 for v in flat):
        raise ValueError(f"--tv {text!r}: expected a tile like 16x8 (positive extents)")
    return flat


def _atom(name: str):
    if name in MMA_ATOMS:
        return MMA_ATOMS[name]
    if name in COPY_ATOMS:
        return COPY_ATOMS[name]
    raise ValueError(f"--atom: unknown atom {name!r}; known: {', '.join([*MMA_ATOMS, *COPY_ATOMS])}")


def _value(args: argparse.Namespace):
    if args.atom is not None:
        return _atom(args.atom)
    value = parse(args.layout)
    if args.tv is None:
        return value
    if not isinstance(value, Layout):
        raise ValueError(f"--tv: {value} is not a plain layout; a TV layout is a rank-2 'shape:stride'")
    return TVLayout(value, _tile(args.tv))


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if (args.layout is None) == (args.atom is None):
        parser.error("give either a LAYOUT or --atom NAME")
    if args.elem_bytes is not None and not args.banks:
        parser.error("--elem-bytes only applies with --banks")
    if args.banks and (args.tv or args.atom):
        parser.error("--banks applies to a layout's offsets, not to --tv or --atom")
    if args.elem_bytes is not None and args.elem_bytes <= 0:
        parser.error(f"--elem-bytes must be positive, got {args.elem_bytes}")
    options = {"banks": args.banks, "elem_bytes": args.elem_bytes or 2}
    try:
        value = _value(args)
        if args.output is None:
            sys.stdout.write(to_text(value, **options))
        else:
            print(f"wrote {render(value, args.output, **options)}")
    except ValueError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"{PROG}: error: cannot write {args.output!r}: {err.strerror or err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
