"""Printing in CuTe's notation and parsing it back (the IR attribute syntax).

(``conftest.py`` additionally checks ``parse(str(x)) == x`` for every layout,
swizzle and composed layout that any ``test_layout_*`` test builds.)
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from layout_strategies import MANY, SOME, layouts

from tilec.layout import ComposedLayout, Layout, Swizzle, parse, parse_int_tuple, parse_layout
from tilec.layout.int_tuple import to_text


@st.composite
def values_to_print(draw):
    layout = draw(layouts(max_depth=3, max_size=512))
    if draw(st.booleans()):
        layout = Layout(layout.shape, _negate_some(draw, layout.stride))
    kind = draw(st.sampled_from(("layout", "swizzle", "composed", "composed_layout")))
    if kind == "layout":
        return layout
    bits = draw(st.integers(0, 4))
    sw = Swizzle(bits, draw(st.integers(0, 4)), draw(st.integers(bits, 6)) * draw(st.sampled_from((1, -1))))
    if kind == "swizzle":
        return sw
    inner = sw if kind == "composed" else draw(layouts(max_size=64))
    return ComposedLayout(inner, draw(st.integers(-64, 4096)), layout)


def _negate_some(draw, stride):
    if isinstance(stride, tuple):
        return tuple(_negate_some(draw, d) for d in stride)
    return -stride if draw(st.booleans()) else stride


def _cute_spelling(draw, text: str) -> str:
    """Respell ``text`` as CuTe might print or a person might type it: ``_8`` and spaces."""
    out = []
    for k, ch in enumerate(text):
        prev = text[k - 1] if k else ""
        starts_number = (ch.isdigit() or ch == "-") and not (prev.isdigit() or prev == "-")
        if starts_number and draw(st.booleans()):
            out.append("_")  # CuTe prints static ints as _8 and _-1
        out.append(ch)
        if ch in "(),:<>o" and draw(st.integers(0, 3)) == 0:
            out.append(draw(st.sampled_from((" ", "  ", "\t", "\n"))))
    return "".join(out)


@MANY
@given(values_to_print(), st.data())
def test_print_parse_round_trip(value, data):
    text = str(value)
    assert " " not in text.replace(" o ", "")  # CuTe's compact printing: no spaces inside tuples
    back = parse(text)
    assert back == value and type(back) is type(value) and hash(back) == hash(value)
    spelled = _cute_spelling(data.draw, text)
    assert parse(spelled) == value, spelled
    assert parse("  " + text + "\n") == value


@SOME
@given(layouts(max_depth=3))
def test_int_tuple_round_trip(layout):
    assert parse_int_tuple(to_text(layout.shape)) == layout.shape
    assert parse_layout(str(layout)) == layout
    assert Layout.parse(str(layout)) == layout


def test_cute_spellings():
    assert parse("(_8,_64):(_64,_1)") == Layout((8, 64), (64, 1))
    assert parse("( 8 , 64 ) : ( 64 , 1 )") == Layout((8, 64), (64, 1))
    assert parse("(8, 64):(64, 1)") == Layout((8, 64), (64, 1))  # pycute's str(), with spaces
    assert parse("Sw<3,3,3> o 0 o (8,64):(64,1)") == ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))
    assert parse("Sw<3,3,3> o _0 o (_8,_64):(_64,_1)") == parse("Sw<3,3,3>o0o(8,64):(64,1)")
    assert parse("Sw<2,4,-3>") == Swizzle(2, 4, -3)
    assert parse("(8):(1)") == Layout((8,), (1,)) and str(Layout((8,), (1,))) == "(8):(1)"
    assert parse("(8):(1)") != parse("8:1")
    assert parse("((8)):((1))") == Layout(((8,),), ((1,),))
    assert parse("8:-1") == Layout(8, -1)
    assert parse("((2,(3,4)),5):((1,(2,6)),-24)").shape == ((2, (3, 4)), 5)
    assert parse("():()") == Layout((), ())  # the empty layout a full slice leaves
    assert parse("(4,2):(2,1) o 3 o 8:1") == ComposedLayout(Layout((4, 2), (2, 1)), 3, Layout(8, 1))
    assert ComposedLayout.parse("Sw<1,1,1> o 2 o 4:1").offset == 2
    assert parse_int_tuple("(1,(2,_3))") == (1, (2, 3)) and parse_int_tuple(" 7 ") == 7


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "an integer"),
        ("   ", "an integer"),
        ("(8,4", "')'"),
        ("(8,4):(1,8", "')'"),
        ("8:", "an integer"),
        ("8", "':'"),
        ("(8,):(1,)", "an integer"),
        ("(8,4):(1,8) extra", "end of text"),
        ("8 4:1", "':'"),  # whitespace separates numbers, never joins them
        ("(8, 6 4):(1,8)", "')'"),
        ("x:1", "an integer"),
        ("8.0:1", "':'"),
        ("8:1.5", "end of text"),
        ("Sw<3,3>", "','"),
        ("Sw<3,3,3", "'>'"),
        ("Sw<a,3,3>", "an integer"),
        ("Sw<3,3,3> o 0", "'o'"),
        ("Sw<3,3,3> o 0 o", "an integer"),
        ("Sw<3,3,3> 0 (8,64):(64,1)", "end of text"),
        ("Sw<3,3,3> o 0 o Sw<3,3,3>", "an integer"),
        ("__8:1", "an integer"),
        ("--8:1", "an integer"),
        ("8:_-1", None),
        ("8：1", "':'"),
        ("٣:1", "an integer"),
    ],
)
def test_unparsable_text_is_a_value_error_naming_the_text(text, expected):
    if expected is None:  # accepted spelling
        assert parse(text) == Layout(8, -1)
        return
    with pytest.raises(ValueError) as info:
        parse(text)
    message = str(info.value)
    assert repr(text) in message
    assert f"expected {expected}" in message


@pytest.mark.parametrize(
    "text, expected",
    [
        ("(8,4):(1)", r"\(8,4\):\(1\).*different ranks"),
        ("(8,4):((1,2),8)", "different ranks or nesting"),
        ("(8,0):(1,8)", "positive"),
        ("-8:1", "positive"),
        ("Sw<3,3,2>", r"Sw<3,3,2>.*shift"),
        ("Sw<-1,3,3>", "non-negative"),
    ],
)
def test_well_formed_text_of_an_invalid_value_names_the_text(text, expected):
    with pytest.raises(ValueError, match=expected) as info:
        parse(text)
    assert repr(text) in str(info.value)


def test_the_kind_of_value_is_checked():
    with pytest.raises(ValueError, match="not a plain layout"):
        parse_layout("Sw<3,3,3>")
    with pytest.raises(ValueError, match="not a composed layout"):
        ComposedLayout.parse("8:1")
    with pytest.raises(ValueError, match="expected a string"):
        parse(b"8:1")
    with pytest.raises(ValueError, match="expected a string"):
        parse(None)
