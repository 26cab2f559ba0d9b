"""Bad input is a ValueError (a TypeError for an argument of the wrong kind) whose message names the
offending layout or text.

One place that lists every kind; the other files test the same errors where the
operation itself is tested.
"""

from __future__ import annotations

import pytest

from tilec.layout import (
    ComposedLayout,
    Layout,
    Swizzle,
    TVLayout,
    blocked_product,
    coalesce,
    complement,
    composition,
    copy_atom,
    cp_async,
    filter,
    ldmatrix,
    left_inverse,
    logical_divide,
    logical_product,
    mma_atom,
    parse,
    upcast,
    zipped_divide,
)
from tilec.layout.layout import cosize
from tilec.layout.int_tuple import crd2idx


def raises_naming(what: str, fn, *args):
    with pytest.raises(ValueError) as info:
        fn(*args)
    assert what in str(info.value), f"{what!r} not named in {str(info.value)!r}"
    return str(info.value)


@pytest.mark.parametrize(
    "shape, stride, text",
    [
        ((8, 4), (1,), "(8,4):(1)"),
        ((8, 4), 1, "(8,4):1"),
        (8, (1, 8), "8:(1,8)"),
        ((8, (4, 2)), (1, (8, 32, 64)), "(8,(4,2)):(1,(8,32,64))"),
        ((8, (4, 2)), (1, 8), "(8,(4,2)):(1,8)"),
    ],
)
def test_rank_or_nesting_mismatch_between_shape_and_stride(shape, stride, text):
    message = raises_naming(text, Layout, shape, stride)
    assert "rank" in message


@pytest.mark.parametrize(
    "shape, stride, text",
    [((8, 0), (1, 8), "(8,0):(1,8)"), (-4, 1, "-4:1"), ((2, (3, -1)), None, None), (0, 0, "0:0")],
)
def test_zero_or_negative_extents(shape, stride, text):
    if text is None:
        with pytest.raises(ValueError, match="positive"):
            Layout(shape, stride)
        return
    message = raises_naming(text, Layout, shape, stride)
    assert "positive" in message


@pytest.mark.parametrize("bad", [2.0, "8", True, None, (4, "2"), (4, (2.5,)), {4: 1}])
def test_non_integer_shapes_and_strides(bad):
    with pytest.raises(ValueError, match="layout shape must be an int"):
        Layout(bad)
    with pytest.raises(ValueError, match="layout stride must be an int"):
        Layout((4, (2,)), (1, bad if isinstance(bad, tuple) else (bad,)))


def test_complement_of_a_non_injective_layout():
    raises_naming("(2,2):(1,1)", complement, Layout((2, 2), (1, 1)), 8)
    raises_naming("(4,2):(2,3)", complement, Layout((4, 2), (2, 3)), 8)
    raises_naming("(3,2):(2,3)", complement, Layout((3, 2), (2, 3)), 24)  # injective, but interleaved
    raises_naming("(4,2):(2,3)", left_inverse, Layout((4, 2), (2, 3)))


def test_inadmissible_composition_and_divides():
    raises_naming("(4,6):(1,5)", composition, Layout((4, 6), (1, 5)), Layout(6, 1))
    raises_naming("(2,2):(2,2)", composition, Layout((4, 2), (1, 100)), Layout((2, 2), (2, 2)))
    raises_naming("(4,6):(1,5)", logical_divide, Layout((4, 6), (1, 5)), Layout(6, 1))
    with pytest.raises(ValueError, match="not admissible"):
        logical_product(Layout(2, 2), Layout(2, 3))
    raises_naming("(4,8):(1,4)", composition, Layout((4, 8), (1, 4)), (2, 2, 2))
    raises_naming("(4,8):(1,4)", logical_divide, Layout((4, 8), (1, 4)), (2, 2, 2))
    raises_naming("(4,8):(1,4)", coalesce, Layout((4, 8), (1, 4)), (1, 1, 1))
    raises_naming("(8,4):(1,12)", upcast, Layout((8, 4), (1, 12)), 8)


@pytest.mark.parametrize(
    "text",
    ["", "(8,4", "8:", "(8,):(1,)", "8:1 extra", "8 4:1", "Sw<3,3>", "Sw<3,3,3> o 0 o", "(8,4):(1)", "x:1"],
)
def test_unparsable_text(text):
    raises_naming(repr(text), parse, text)


@pytest.mark.parametrize("name", ["mma_m16n8k32_f16", "MMA_M16N8K16_F16", ""])
def test_unknown_mma_atom(name):
    raises_naming(repr(name), mma_atom, name)


@pytest.mark.parametrize("name", ["ldmatrix_x8", "cp_async_32_b16", "tma"])
def test_unknown_copy_atom(name):
    raises_naming(repr(name), copy_atom, name)


def test_atom_constructors():
    raises_naming("x3", ldmatrix, 3)
    raises_naming("12", cp_async, 12)


@pytest.mark.parametrize("bits, base, shift", [(3, 3, 2), (3, 3, -2), (1, 0, 0), (4, 0, 3)])
def test_swizzle_shift_smaller_than_bits(bits, base, shift):
    message = raises_naming(f"Sw<{bits},{base},{shift}>", Swizzle, bits, base, shift)
    assert "shift" in message
    raises_naming(f"Sw<{bits},{base},{shift}>", parse, f"Sw<{bits},{base},{shift}> o 0 o 8:1")


def test_tv_layout_offset_outside_the_tile():
    raises_naming("(32,4):(4,1)", TVLayout, Layout((32, 4), (4, 1)), (16, 4))
    raises_naming("offset 64", TVLayout, Layout((32, 4), (4, 1)), (16, 4))


def test_coordinates_that_do_not_fit():
    raises_naming("(4, 3)", crd2idx, (1, 2, 3), (4, 3), (1, 4))
    raises_naming("(4,3):(1,4)", Layout((4, 3), (1, 4)).slice_and_offset, 5)


@pytest.mark.parametrize("call, match", [
    (lambda: coalesce(ComposedLayout.parse("Sw<3,3,3> o 0 o (8,64):(64,1)")),
     r"coalesce: the layout must be a Layout, got ComposedLayout .* \(a swizzled layout: apply it to its .layout\)"),
    (lambda: filter(ComposedLayout.parse("Sw<3,3,3> o 0 o (8,64):(64,1)")), r"filter: the layout must be a Layout"),
    (lambda: upcast(ComposedLayout.parse("Sw<3,3,3> o 0 o (8,64):(64,1)"), 2), r"upcast: the layout must be a Layout"),
    (lambda: coalesce("x"), r"coalesce: the layout must be a Layout, got str 'x'"),
    (lambda: blocked_product(Layout((4, 2), (2, 1)), 3), r"blocked_product: the repetition \(b\) must be a Layout, got int 3"),
    (lambda: Layout((4, 2), (2, 1))("a"), r"a coordinate is an int or a tuple of them, got 'a'"),
    (lambda: Layout((4, 2), (2, 1))(1.5), r"a coordinate is an int or a tuple of them, got 1.5"),
    (lambda: Swizzle(True, 3, 3), r"Sw<True,3,3>: bits, base and shift are integers"),
    (lambda: composition((4, 8), 2), r"composition: the outer layout \(a\) must be a Layout, got tuple"),
    (lambda: cosize((4, 8)), r"cosize: expected a layout, got tuple"),
    (lambda: logical_product(Layout(4), True), r"logical_product: the pattern \(b: .*\) must be a Layout, got bool"),
    (lambda: logical_divide((4, 8), 2), r"logical_divide: the layout \(a\) must be a Layout, got tuple"),
    (lambda: zipped_divide(3, Layout(4)), r"zipped_divide: the layout \(a\) must be a Layout, got int 3"),
])
def test_arguments_of_the_wrong_kind_are_type_errors_naming_the_operation(call, match):
    """Found by a helper: these were AttributeErrors from inside the algebra, or accepted (a float
    coordinate gave 3.0, ``Swizzle(True, 3, 3)`` printed ``Sw<True,3,3>``)."""
    with pytest.raises(TypeError, match=match):
        call()


def test_divides_of_huge_layouts_take_no_time_in_their_size():
    """Composition's admissibility check looped over a tiler mode's extent (a divide of a 4.8G-element
    layout took minutes, hunt 2 of session 38); it is bounded by the digits' period now."""
    import time

    start = time.perf_counter()
    for n in (10**5, 10**7, 10**9):
        assert str(logical_divide(parse(f"(8,(6,{n})):(1,(16,96))"), 8)) == f"(8,{6 * n}):(1,16)"
    assert time.perf_counter() - start < 1.0
