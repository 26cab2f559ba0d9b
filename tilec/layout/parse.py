"""Reading CuTe's printed notation back into values.

Grammar (whitespace may separate tokens; CuTe's ``_8`` static-int spelling is accepted)::

    value    := layout | swizzle | composed
    composed := (swizzle | layout) "o" int "o" layout
    layout   := inttuple ":" inttuple
    swizzle  := "Sw<" int "," int "," int ">"
    inttuple := int | "(" ")" | "(" inttuple ("," inttuple)* ")"

``parse(str(x)) == x`` for every layout, swizzle and composed layout.
"""

from __future__ import annotations

from tilec.layout.int_tuple import IntTuple
from tilec.layout.layout import Layout
from tilec.layout.swizzle import ComposedLayout, Swizzle


class _Reader:
    def __init__(self, text: str):
        self.text = text
        self.src = text
        self.pos = 0

    def fail(self, expected: str) -> ValueError:
        self.skip_space()
        got = self.src[self.pos : self.pos + 12] or "end of text"
        return ValueError(f"cannot parse layout {self.text!r}: expected {expected} at {got!r}")

    def skip_space(self) -> None:
        """Whitespace separates tokens; it never joins the digits of two numbers."""
        while self.pos < len(self.src) and self.src[self.pos].isspace():
            self.pos += 1

    def peek(self, token: str) -> bool:
        self.skip_space()
        return self.src.startswith(token, self.pos)

    def take(self, token: str) -> bool:
        if self.peek(token):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.take(token):
            raise self.fail(f"'{token}'")

    def integer(self) -> int:
        self.take("_")
        start = self.pos
        if self.src.startswith("-", self.pos):
            self.pos += 1
        while self.pos < len(self.src) and self.src[self.pos] in "0123456789":
            self.pos += 1
        digits = self.src[start : self.pos]
        if digits in ("", "-"):
            self.pos = start
            raise self.fail("an integer")
        if len(digits.lstrip("-")) > 19 or not -(1 << 63) <= int(digits) < 1 << 63:
            self.pos = start
            raise self.fail("an integer of at most 64 bits")
        return int(digits)

    def int_tuple(self) -> IntTuple:
        if self.take("("):
            if self.take(")"):
                return ()
            modes = [self.int_tuple()]
            while self.take(","):
                modes.append(self.int_tuple())
            self.expect(")")
            return tuple(modes)
        return self.integer()

    def layout(self) -> Layout:
        shape = self.int_tuple()
        self.expect(":")
        stride = self.int_tuple()
        try:
            return Layout(shape, stride)
        except ValueError as err:
            raise ValueError(f"cannot parse layout {self.text!r}: {err}") from None

    def swizzle(self) -> Swizzle:
        self.expect("Sw<")
        bits = self.integer()
        self.expect(",")
        base = self.integer()
        self.expect(",")
        shift = self.integer()
        self.expect(">")
        try:
            return Swizzle(bits, base, shift)
        except ValueError as err:
            raise ValueError(f"cannot parse layout {self.text!r}: {err}") from None

    def function(self):
        return self.swizzle() if self.peek("Sw<") else self.layout()

    def value(self):
        first = self.function()
        if not self.take("o"):
            return first
        offset = self.integer()
        self.expect("o")
        return ComposedLayout(first, offset, self.layout())

    def done(self) -> None:
        self.skip_space()
        if self.pos != len(self.src):
            raise self.fail("end of text")


def parse(text: str):
    """A ``Layout``, ``Swizzle`` or ``ComposedLayout`` from its CuTe notation."""
    if not isinstance(text, str):
        raise ValueError(f"cannot parse layout from {text!r}: expected a string")
    reader = _Reader(text)
    try:
        value = reader.value()
    except RecursionError:
        raise ValueError(f"cannot parse layout {text[:40]!r}...: nested too deeply") from None
    reader.done()
    return value


def parse_layout(text: str) -> Layout:
    """A plain ``Layout`` (``shape:stride``)."""
    value = parse(text)
    if not isinstance(value, Layout):
        raise ValueError(f"{text!r} is not a plain layout 'shape:stride'")
    return value


def parse_int_tuple(text: str) -> IntTuple:
    reader = _Reader(text)
    value = reader.int_tuple()
    reader.done()
    return value
