"""Triton's block pointers and tensor descriptors as windows of an array argument.

``tl.make_block_ptr(base, shape, strides, offsets, block_shape, order)`` names a ``block_shape``
window of ``base`` at ``offsets``; ``tl.advance`` moves it; ``tl.load``/``tl.store`` of it read and
write that window (out-of-bounds elements read as zero, or NaN with ``padding_option="nan"``, and
are not written). ``tl.make_tensor_descriptor(base, shape, strides, block_shape)`` is the same with
the offsets given at each ``desc.load(offsets)`` / ``desc.store(offsets, value)``. That is the
language's own model (:func:`tilec.lang.ops.load`), so nothing here builds IR of its own.

``base`` is a kernel's array argument, which carries its shape and strides: those are the ones used
(``shape`` and ``strides`` must give its rank; Triton's pointer arithmetic on a flat buffer is not
the model; accesses are bounded by the array's extents, not by a smaller declared ``shape``: pass the
view you mean). A 2-D pointer whose ``order`` puts first another dimension than the array's unit
stride describes the array's transpose (Triton's K^T pointer): its loads are ``tl.trans`` of the
array's window, which the mma takes as its transpose flag. A block pointer carried through a
``tl.range`` or ``while`` loop, or assigned in a run-time ``if``, is carried as its offsets
(:func:`flatten_carried`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tilec.lang import ops
from tilec.lang.tracing import error
from tilec.lang.values import Pointer, Scalar, Value, View, index


class BlockPtr:
    """A ``block_shape`` window at ``offsets`` (Python ints or index scalars) of ``view``, or, ``transposed``,
    of the view's transpose (Triton's ``shape=(D, N), strides=(1, D), order=(0, 1)`` over an N x D array)."""

    __slots__ = ("view", "offsets", "block_shape", "order", "transposed")
    carried_as_offsets = True
    """Carried through loops and ``if``\\ s as its offsets (:func:`flatten_carried`)."""

    def __init__(self, view: View, offsets: Sequence[Any], block_shape: Sequence[int], order: Sequence[int],
                 transposed: bool = False):
        self.view, self.offsets, self.block_shape, self.order = view, tuple(offsets), tuple(block_shape), tuple(order)
        self.transposed = transposed

    def __tl_window__(self, value: Any, who: str, padding_option: str) -> tuple[View, tuple[Any, ...], tuple[int, ...],
                                                                              float, bool]:
        """(view, offsets, shape, fill, transposed) of a load or store of this pointer in the view's own
        order (``value``: the stored value, checked against the window): what :func:`tilec.lang.ops.load` /
        ``store`` do with it (a transposed pointer's tile is ``tl.trans`` of the view's window)."""
        if padding_option not in PADDINGS:
            raise error(f"{who}'s padding_option is one of {', '.join(map(repr, PADDINGS))}, got {padding_option!r}")
        if value is not None:
            value = ops.filled(value, self.block_shape, self.view.dtype)
            _check_shape(value, self.block_shape, who)
        if self.transposed:
            return self.view, self.offsets[::-1], self.block_shape[::-1], PADDINGS[padding_option], True
        return self.view, self.offsets, self.block_shape, PADDINGS[padding_option], False

    def with_offsets(self, offsets: Sequence[Any]) -> BlockPtr:
        return BlockPtr(self.view, offsets, self.block_shape, self.order, self.transposed)

    def same_window_shape(self, other: Any) -> bool:
        return isinstance(other, BlockPtr) and other.view is self.view and other.block_shape == self.block_shape \
            and other.transposed == self.transposed

    def describe(self) -> str:
        return f"block pointer of {self.view.name!r} ({'x'.join(map(str, self.block_shape))} window)"

    def __repr__(self) -> str:
        return f"<{self.describe()}>"

    def __bool__(self) -> bool:
        raise error(f"a {self.describe()} has no truth value")


class TensorDescriptor:
    """Triton's ``tl.make_tensor_descriptor``: windows of ``block_shape`` of ``view`` at given offsets."""

    __slots__ = ("view", "block_shape")

    def __init__(self, view: View, block_shape: Sequence[int]):
        self.view, self.block_shape = view, tuple(block_shape)

    def load(self, offsets: Sequence[Any]) -> Any:
        """The window at ``offsets`` (zero outside the array)."""
        return ops.load(self.view, tuple(_offsets(self.view, offsets, "desc.load")), shape=self.block_shape)

    def store(self, offsets: Sequence[Any], value: Any) -> None:
        """``value`` (a scalar fills the block) into the window at ``offsets`` (not written outside the array)."""
        value = ops.filled(value, self.block_shape, self.view.dtype)
        _check_shape(value, self.block_shape, "desc.store")
        ops.store(self.view, tuple(_offsets(self.view, offsets, "desc.store")), value)

    def __repr__(self) -> str:
        return f"<tensor descriptor of {self.view.name!r} ({'x'.join(map(str, self.block_shape))} blocks)>"


def _array(base: Any, shape: Any, strides: Any, who: str) -> View:
    if not isinstance(base, View):
        hint = ""
        if isinstance(base, Pointer):  # Triton's Q + off_z * stride_qz + off_h * stride_qh
            hint = (f": a pointer moved into the array (Triton's Q + off_z * stride_qz + off_h * stride_qh) is, in "
                    f"tilec, the sub-view of those leading indices: {base.view.name}[off_z, off_h]")
        raise error(f"{who}'s base is an array argument of the kernel (or a sub-view of it), got "
                    f"{type(base).__name__}{hint}")
    for what, given in (("shape", shape), ("strides", strides)):
        if not isinstance(given, (tuple, list)) or len(given) != base.ndim:
            raise error(f"{who}'s {what} gives the {base.ndim} dimensions of {base.name!r} (whose own shape and "
                        f"strides are used), got {given!r}")
    return base


def _block_shape(block_shape: Any, view: View, who: str) -> tuple[int, ...]:
    if not isinstance(block_shape, (tuple, list)) or len(block_shape) != view.ndim or not all(
            isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in block_shape):
        raise error(f"{who}'s block_shape is {view.ndim} positive Python ints (constexprs), got {block_shape!r}")
    return tuple(block_shape)


def _offsets(view: View, offsets: Any, who: str) -> list[Any]:
    if not isinstance(offsets, (tuple, list)) or len(offsets) != view.ndim:
        raise error(f"{who} takes {view.ndim} offsets (one per dimension of {view.name!r}), got {offsets!r}")
    for o in offsets:
        if isinstance(o, bool) or not (isinstance(o, int) or isinstance(o, Scalar)):
            raise error(f"{who}'s offsets are ints or integer scalars, got {o!r}")
    return list(offsets)


def _check_shape(value: Any, block_shape: tuple[int, ...], who: str) -> None:
    shape = getattr(value, "shape", None)
    if isinstance(value, Value) and shape is not None and tuple(shape) != block_shape:
        raise error(f"{who} of a value of shape {tuple(shape)} into blocks of {block_shape}")


def make_block_ptr(base: Any, shape: Any, strides: Any, offsets: Any, block_shape: Any, order: Any) -> BlockPtr:
    """Triton's ``tl.make_block_ptr``: the ``block_shape`` window of the array ``base`` at ``offsets``."""
    view = _array(base, shape, strides, "tl.make_block_ptr")
    dims = _block_shape(block_shape, view, "tl.make_block_ptr")
    if view.ndim not in (1, 2):
        raise error(f"tl.make_block_ptr of a {view.ndim}-D array: tiles are 1-D or 2-D (take a subview "
                    f"{view.name}[b, h] first)")
    if not isinstance(order, (tuple, list)) or sorted(order) != list(range(view.ndim)):
        raise error(f"tl.make_block_ptr's order is a permutation of the {view.ndim} dimensions, got {order!r}")
    start = [o if isinstance(o, int) else Scalar(index(o, "tl.make_block_ptr's offset"))
             for o in _offsets(view, offsets, "tl.make_block_ptr")]  # index offsets: an advance keeps their type
    return BlockPtr(view, start, dims, order, _transposed(view, order))


def _transposed(view: View, order: Sequence[int]) -> bool:
    """Whether a 2-D block pointer describes the array's transpose: its fastest dimension (``order[0]``) is
    not the one of stride 1 in the call's array (Triton's K^T pointer over a row-major K). Unknown where
    the array has no unit stride: then ``order`` must be the natural (1, 0)."""
    if view.ndim != 2:
        return False
    if view.unit_dim is None:
        if tuple(order) != (1, 0):
            raise error(f"tl.make_block_ptr(order={tuple(order)}) of {view.name!r}, which has no dimension of stride "
                        "1 in this call: tilec cannot tell whether the pointer describes the array or its transpose "
                        "(pass a contiguous array, or order=(1, 0) for the array as it is)")
        return False
    return order[0] != view.unit_dim


def advance(ptr: Any, offsets: Any) -> BlockPtr:
    """Triton's ``tl.advance``: the same window moved by ``offsets``."""
    if not isinstance(ptr, BlockPtr):
        raise error(f"tl.advance moves a block pointer (tl.make_block_ptr), got {type(ptr).__name__} {ptr!r}")
    deltas = _offsets(ptr.view, offsets, "tl.advance")
    return ptr.with_offsets([_moved(o, d) for o, d in zip(ptr.offsets, deltas)])


def _moved(offset: Any, delta: Any) -> Any:
    """``offset + delta`` as an index (a Python int where both are): an offset keeps its type however it
    is advanced (an i32 argument's amount is an index here, as a window's origin is)."""
    if isinstance(delta, int) and delta == 0:
        return offset
    if isinstance(offset, int) and isinstance(delta, int):
        return offset + delta
    return Scalar(index(offset, "a block pointer's offset")) + Scalar(index(delta, "tl.advance's offset"))


def make_tensor_descriptor(base: Any, shape: Any, strides: Any, block_shape: Any) -> TensorDescriptor:
    """Triton's ``tl.make_tensor_descriptor``: ``block_shape`` windows of the array ``base``."""
    view = _array(base, shape, strides, "tl.make_tensor_descriptor")
    return TensorDescriptor(view, _block_shape(block_shape, view, "tl.make_tensor_descriptor"))


PADDINGS = {"": 0.0, "zero": 0.0, "nan": float("nan")}
"""``padding_option``: what a block pointer's load reads outside the array."""




def carried_as_offsets(v: Any) -> bool:
    """Whether ``v`` is carried through loops and ``if``\\ s as its offsets: a block pointer, or a
    pointer (:class:`tilec.lang.pointers.Pointer`)."""
    return getattr(type(v), "carried_as_offsets", False) is True  # the class's: a NoValue's attributes raise


def offset_positions(init: Sequence[Any]) -> frozenset[int]:
    """The positions in :func:`flatten_carried`'s flat values of the (block) pointers' offsets."""
    out, k = set(), 0
    for v in init:
        n = len(v.offsets) if carried_as_offsets(v) else 1
        if carried_as_offsets(v):
            out.update(range(k, k + n))
        k += n
    return frozenset(out)


def flatten_carried(init: Sequence[Any], names: Sequence[str]) -> tuple[list[Any], list[str], Callable, Callable]:
    """Carried values with each block pointer (or pointer) replaced by its offsets: (flat values, their
    names, ``unpack(flat) -> values``, ``pack(values) -> flat``). ``pack`` checks that a name holding a
    block pointer before holds one of the same array and window shape after (its offsets are what moves)."""
    layout: list[Any] = []
    flat: list[Any] = []
    flat_names: list[str] = []
    for name, v in zip(names, init):
        if carried_as_offsets(v):
            layout.append(v)
            flat += v.offsets
            flat_names += [f"{name}_offset{k}" for k in range(len(v.offsets))]
        else:
            layout.append(None)
            flat.append(v)
            flat_names.append(name)

    def unpack(values: Sequence[Any]) -> list[Any]:
        out, k = [], 0
        for template in layout:
            if template is None:
                out.append(values[k])
                k += 1
            else:
                n = len(template.offsets)
                out.append(template.with_offsets(values[k:k + n]))
                k += n
        return out

    def pack(values: Sequence[Any]) -> list[Any]:
        out: list[Any] = []
        for name, template, v in zip(names, layout, values):
            if template is None and carried_as_offsets(v):
                raise error(f"'{name}' becomes a {v.describe()} here but is not one before: make it before the "
                            "loop or if (moving it inside is fine)")
            if template is None:
                out.append(v)
            elif template.same_window_shape(v):
                out += v.offsets
            else:
                raise error(f"'{name}' is a {template.describe()} and a {getattr(v, 'describe', lambda: repr(v))()}: "
                            "a pointer carried through a loop or chosen by an if keeps its array (a block pointer "
                            "its block shape too); only its offsets move")
        return out

    return flat, flat_names, unpack, pack


def any_block_ptr(values: Sequence[Any]) -> bool:
    """Whether any of ``values`` is carried as its offsets (:func:`carried_as_offsets`)."""
    return any(carried_as_offsets(v) for v in values)


__all__ = ["BlockPtr", "TensorDescriptor", "advance", "carried_as_offsets", "flatten_carried", "make_block_ptr", "make_tensor_descriptor"]
