"""CuTe notation inside MLIR text: read and write layouts with xDSL's parser.

The layout attribute and the shared/register tile types all spell layouts the
way ``tilec.layout`` prints them, so IR reads like CuTe. This module is the one
bridge between xDSL's token stream and ``tilec.layout`` values; any error from
the layout algebra becomes a parse error at the right source location.
"""

from __future__ import annotations

from xdsl.parser import AttrParser

from tilec.layout import ComposedLayout, Layout, Swizzle
from tilec.layout.int_tuple import IntTuple


def parse_int_tuple(parser: AttrParser) -> IntTuple:
    if parser.parse_optional_punctuation("(") is None:
        return parser.parse_integer(allow_boolean=False, context_msg=" in a layout's shape or stride")
    modes = [parse_int_tuple(parser)]
    while parser.parse_optional_punctuation(",") is not None:
        modes.append(parse_int_tuple(parser))
    parser.parse_punctuation(")", " to close a layout tuple")
    return tuple(modes)


def parse_layout(parser: AttrParser) -> Layout:
    """``shape:stride``."""
    pos = parser.pos
    shape = parse_int_tuple(parser)
    parser.parse_punctuation(":", " between a layout's shape and stride")
    stride = parse_int_tuple(parser)
    try:
        return Layout(shape, stride)
    except ValueError as err:
        parser.raise_error(str(err), pos, parser.pos)


def parse_swizzle_body(parser: AttrParser) -> Swizzle:
    """``<B, M, S>`` after the ``Sw`` keyword."""
    pos = parser.pos
    parser.parse_punctuation("<")
    bits = parser.parse_integer(allow_boolean=False)
    parser.parse_punctuation(",")
    base = parser.parse_integer(allow_boolean=False)
    parser.parse_punctuation(",")
    shift = parser.parse_integer(allow_boolean=False)
    parser.parse_punctuation(">")
    try:
        return Swizzle(bits, base, shift)
    except ValueError as err:
        parser.raise_error(str(err), pos, parser.pos)


def parse_any_layout(parser: AttrParser) -> Layout | ComposedLayout:
    """A plain layout or ``inner o offset o layout`` with a swizzle or layout as inner."""
    inner = parse_swizzle_body(parser) if parser.parse_optional_keyword("Sw") else parse_layout(parser)
    if parser.parse_optional_keyword("o") is None:
        if isinstance(inner, Swizzle):
            parser.raise_error("a swizzle needs a layout: expected 'Sw<B,M,S> o offset o shape:stride'")
        return inner
    offset = parser.parse_integer(allow_boolean=False, context_msg=" as a composed layout's offset")
    parser.parse_keyword("o", " between a composed layout's offset and its layout")
    return ComposedLayout(inner, offset, parse_layout(parser))
