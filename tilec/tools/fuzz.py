"""A mutation fuzzer for ``tile-opt``: seeds, mutators, an in-process runner
with a timeout, an outcome classifier, a pool of worker processes and a
minimizer.

tile-opt promises that every error is a diagnostic (``file:line:col: error:``
and exit status 1), never a Python traceback. The fuzzer checks that promise
on inputs made by mutating the lit tests and examples::

    seeds = collect_seeds(Path("."))
    case = make_case(seeds, seed=1, index=7, mode="ptx")
    outcome = run_case(case, timeout=20.0)
    outcome.kind   # 'accepted', 'located', 'unlocated', 'internal' or 'hang'

Everything is deterministic in (seed, index, mode), so a case is reproduced
from those three numbers. ``bench/fuzz.py`` runs campaigns;
``tests/tools/test_fuzz.py`` runs a small fixed one.
"""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import io
import multiprocessing
import multiprocessing.connection
import os
import random
import re
import resource
import signal
import tempfile
import time
import traceback
import types
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import tilec.ir  # noqa: F401  first: installs the lazy assembly formats (tilec/ir/lazy_formats.py)
import xdsl

# --------------------------------------------------------------------------
# Seeds
# --------------------------------------------------------------------------

SEED_GLOBS = ("tests/lit/**/*.mlir", "examples/**/*.mlir")
SPLIT_MARKER = "// -----"
_COMMENT_LINE = re.compile(r"^\s*//")


@dataclass(frozen=True)
class Seed:
    """One chunk of a lit test or example: mutations start from its text."""

    name: str
    text: str


def split_chunks(text: str) -> list[str]:
    """The chunks of a ``--split-input-file`` file, as tile-opt cuts them."""
    return text.split(SPLIT_MARKER)


def strip_comment_lines(text: str) -> str:
    """Drop whole-line comments (RUN, CHECK, expected-error): mutating them
    changes nothing tile-opt sees, so they only waste mutations."""
    return "".join(line for line in text.splitlines(keepends=True) if not _COMMENT_LINE.match(line))


def collect_seeds(root: Path, globs: Sequence[str] = SEED_GLOBS) -> list[Seed]:
    """Every non-empty, distinct chunk of the .mlir files under ``root``, in a
    stable order (sorted paths), so that case numbers mean the same inputs."""
    seeds: list[Seed] = []
    seen: set[str] = set()
    paths = sorted({p for g in globs for p in root.glob(g)})
    for path in paths:
        for i, chunk in enumerate(split_chunks(path.read_text(errors="replace"))):
            text = strip_comment_lines(chunk).strip("\n") + "\n"
            if text.strip() and text not in seen:
                seen.add(text)
                seeds.append(Seed(f"{path.relative_to(root)}#{i}", text))
    return seeds


# --------------------------------------------------------------------------
# Interesting values
# --------------------------------------------------------------------------

INTERESTING_INTS: tuple[int, ...] = (
    0, 1, -1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 127, 128, 255, 256,
    1023, 1024, 4096, 65535, 65536, 2**31 - 1, 2**31, -(2**31), 2**32, 2**63 - 1,
    2**63, -(2**63), 2**64, 10**30, 10**100,
)  # fmt: skip

ELEMENT_TYPES: tuple[str, ...] = (
    "f16", "bf16", "f32", "f64", "f80", "f128", "tf32", "i1", "i8", "i16", "i32",
    "i64", "i128", "i0", "i7", "ui32", "si8", "index", "f8E4M3FN", "f8E5M2",
    "none", "vector<4xf16>", "complex<f32>", "!tile.gl<f16, [?, ?]>",
)  # fmt: skip

_PUNCTUATION = "(){}<>[],:;=%@#!^?*x0-\"'\\\t\x00\u00e9"

_ELEMENT_TYPE = re.compile(
    r"(?<![A-Za-wyz0-9_%@#^.$])(?:bf16|f16|f32|f64|f80|f128|tf32|i1|i8|i16|i32|i64|index|f8E4M3FN|f8E5M2)(?!\w)"
)
_INTEGER = re.compile(r"(?<![\w%#@^.$-])-?\d+(?![\w.])|(?<=[<x])\d+(?=x)")
_SWIZZLE = re.compile(r"(?:Sw|swizzle)<([^<>]*)>")
_OP_NAME = re.compile(r"(?<![\w.])([!#]?)(tile|frag|arith|scf|func|llvm|memref|gpu|nvvm|vector)\.([a-z_0-9]+)")
_SSA_VALUE = re.compile(r"%[\w$.-]+")
_TOKEN = re.compile(r"[%@#!^]?[\w.$]+|[^\s\w]")
_NEAR_MISS_NAMES = ("tile.lod", "tile.row_maxx", "tile.store_", "frag.mma_", "tile.Load", "tile.", "tile.matmull")


def interesting_int(rng: random.Random, old: int | None = None) -> int:
    """A boundary value, or a neighbour / multiple / negation of ``old``."""
    if old is not None and rng.random() < 0.3:
        return rng.choice([old + 1, old - 1, -old, old * 2, old * 1000, old // 2])
    return rng.choice(INTERESTING_INTS)


# --------------------------------------------------------------------------
# Text mutators: (rng, text, donor) -> new text, or None where one does not apply
# --------------------------------------------------------------------------

Mutator = Callable[[random.Random, str, str], "str | None"]


def _replace_span(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def _pick_match(rng: random.Random, pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    matches = list(pattern.finditer(text))
    return rng.choice(matches) if matches else None


def truncate(rng: random.Random, text: str, donor: str) -> str | None:
    """Inputs that stop mid-op must give parse errors, not crashes."""
    return text[: rng.randrange(len(text))] if text else None


def delete_lines(rng: random.Random, text: str, donor: str) -> str | None:
    """Removed definitions, terminators and region ends."""
    lines = text.splitlines(keepends=True)
    if len(lines) < 2:
        return None
    start = rng.randrange(len(lines))
    del lines[start : start + rng.choice([1, 1, 2, 3])]
    return "".join(lines)


def duplicate_lines(rng: random.Random, text: str, donor: str) -> str | None:
    """Redefined values, repeated ops and attributes."""
    lines = text.splitlines(keepends=True)
    if not lines:
        return None
    start = rng.randrange(len(lines))
    block = lines[start : start + rng.choice([1, 1, 2, 4])]
    at = rng.choice([start, rng.randrange(len(lines) + 1)])
    return "".join(lines[:at] + block + lines[at:])


def splice_lines(rng: random.Random, text: str, donor: str) -> str | None:
    """Lines of another seed in this one: ops in unexpected contexts."""
    donor_lines = donor.splitlines(keepends=True)
    lines = text.splitlines(keepends=True)
    if not donor_lines:
        return None
    start = rng.randrange(len(donor_lines))
    block = donor_lines[start : start + rng.choice([1, 2, 3, 6])]
    at = rng.randrange(len(lines) + 1)
    return "".join(lines[:at] + block + lines[at:])


def swap_tokens(rng: random.Random, text: str, donor: str) -> str | None:
    """Two nearby tokens exchanged: operands, types and punctuation out of order."""
    tokens = list(_TOKEN.finditer(text))
    if len(tokens) < 2:
        return None
    i = rng.randrange(len(tokens) - 1)
    j = min(len(tokens) - 1, i + rng.choice([1, 1, 2, 3, 8]))
    a, b = tokens[i], tokens[j]
    if a.group() == b.group():
        return None
    return text[: a.start()] + b.group() + text[a.end() : b.start()] + a.group() + text[b.end() :]


def change_integer(rng: random.Random, text: str, donor: str) -> str | None:
    """Sizes, strides, indices and constants at their limits (0, -1, 2**63, 10**30...)."""
    m = _pick_match(rng, _INTEGER, text)
    if m is None:
        return None
    new = interesting_int(rng, int(m.group()))
    return _replace_span(text, m.start(), m.end(), str(new))


def plausible_integer(rng: random.Random, text: str, donor: str) -> str | None:
    """A size a user might write (a small power of two): inputs that still
    verify, so the passes see tile shapes the tests do not."""
    m = _pick_match(rng, _INTEGER, text)
    if m is None:
        return None
    return _replace_span(text, m.start(), m.end(), str(rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256])))


def plausible_element_type(rng: random.Random, text: str, donor: str) -> str | None:
    """Another supported float type (f16, bf16, f32): still valid, other code paths."""
    m = _pick_match(rng, _ELEMENT_TYPE, text)
    if m is None or m.group() not in ("f16", "bf16", "f32"):
        return None
    return _replace_span(text, m.start(), m.end(), rng.choice(["f16", "bf16", "f32"]))


def _replace_all(pattern: re.Pattern[str], text: str, old: str, new: str) -> str:
    return pattern.sub(lambda m: new if m.group() == old else m.group(), text)


def consistent_integer(rng: random.Random, text: str, donor: str) -> str | None:
    """Every occurrence of one number changed alike: a type spelt at each use
    stays the same type, so the input gets past the verifier more often."""
    m = _pick_match(rng, _INTEGER, text)
    if m is None:
        return None
    new = rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256, interesting_int(rng, int(m.group()))])
    return _replace_all(_INTEGER, text, m.group(), str(new))


def consistent_element_type(rng: random.Random, text: str, donor: str) -> str | None:
    """Every occurrence of one element type changed alike (f16 -> bf16 everywhere)."""
    m = _pick_match(rng, _ELEMENT_TYPE, text)
    if m is None:
        return None
    return _replace_all(_ELEMENT_TYPE, text, m.group(), rng.choice(["f16", "bf16", "f32", *ELEMENT_TYPES]))


def change_element_type(rng: random.Random, text: str, donor: str) -> str | None:
    """Element types the ops do not support (f80, i7, tf32 where f16 is expected)."""
    m = _pick_match(rng, _ELEMENT_TYPE, text)
    if m is None:
        return None
    return _replace_span(text, m.start(), m.end(), rng.choice(ELEMENT_TYPES))


def corrupt_swizzle(rng: random.Random, text: str, donor: str) -> str | None:
    """Swizzle parameters out of range (``Sw<3,3,3>`` -> ``Sw<40,3,3>``), wrong arity."""
    m = _pick_match(rng, _SWIZZLE, text)
    if m is None:
        return None
    params = [p.strip() for p in m.group(1).split(",")]
    choice = rng.random()
    if choice < 0.7:
        i = rng.randrange(len(params))
        params[i] = str(interesting_int(rng, int(params[i]) if params[i].lstrip("-").isdigit() else None))
    elif choice < 0.85:
        params = params[:-1] if len(params) > 1 else params + params
    else:
        params.append(str(interesting_int(rng)))
    new = m.group(0).split("<")[0] + "<" + ",".join(params) + ">"
    return _replace_span(text, m.start(), m.end(), new)


def _matching(text: str, start: int, step: int) -> int | None:
    """Index of the bracket matching the one at ``start`` (step +1: '(' to the
    right; -1: ')' to the left)."""
    depth = 0
    for i in range(start, len(text) if step > 0 else -1, step):
        depth += {"(": step, ")": -step}.get(text[i], 0)
        if depth == 0:
            return i
    return None


def layout_spans(text: str) -> list[tuple[int, int, int]]:
    """(start, colon, end) of every ``(shape):(stride)`` layout in ``text``."""
    spans: list[tuple[int, int, int]] = []
    for m in re.finditer(r"\):\(", text):
        left = _matching(text, m.start(), -1)
        right = _matching(text, m.start() + 2, +1)
        if left is not None and right is not None:
            spans.append((left, m.start() + 1, right + 1))
    return spans


def _deep_layout(rng: random.Random) -> str:
    depth = rng.choice([10, 100, 1000, 5000])
    return "(" * depth + "4" + ")" * depth + ":" + "(" * depth + "1" + ")" * depth


def _mutate_layout_text(rng: random.Random, layout: str, colon: int) -> str:
    """One corruption of a layout's text (``colon`` is the index of its ':')."""
    shape, stride = layout[:colon], layout[colon + 1 :]
    choice = rng.randrange(6)
    if choice == 0:  # a number changed
        numbers = list(re.finditer(r"-?\d+", layout))
        m = rng.choice(numbers)
        return _replace_span(layout, m.start(), m.end(), str(interesting_int(rng, int(m.group()))))
    if choice == 1:
        return _deep_layout(rng)
    if choice == 2:  # shape and stride of different ranks
        return re.sub(r",\s*-?\d+", "", shape, count=1) + ":" + stride
    if choice == 3:
        return stride + ":" + shape
    if choice == 4:
        return rng.choice(["():()", "(,):(,)", "(4,8):", ":(1,4)", "(4,8):(1,4):(1,1)", "(?,8):(1,?)"])
    return "(" + shape + "," + shape + "):(" + stride + "," + stride + ")"


def corrupt_layout(rng: random.Random, text: str, donor: str) -> str | None:
    """Layouts with changed numbers, mismatched ranks, deep nesting, junk."""
    spans = layout_spans(text)
    if not spans:
        return None
    start, colon, end = rng.choice(spans)
    new = _mutate_layout_text(rng, text[start:end], colon - start)
    return _replace_span(text, start, end, new)


def add_swizzle(rng: random.Random, text: str, donor: str) -> str | None:
    """A swizzle (maybe out of range) composed onto a plain layout."""
    spans = layout_spans(text)
    if not spans:
        return None
    start, _, _ = rng.choice(spans)
    bits = [str(rng.choice([0, 1, 2, 3, 4, 7, 40, -1, 2**31])) for _ in range(3)]
    offset = rng.choice(["0", "0", "1", "-1", "99999"])
    return _replace_span(text, start, start, f"Sw<{','.join(bits)}> o {offset} o ")


def near_miss_op_name(rng: random.Random, text: str, donor: str) -> str | None:
    """Misspelt op, type and attribute names (``tile.lod``, ``tile.row_maxx``)."""
    m = _pick_match(rng, _OP_NAME, text)
    if m is None:
        return None
    prefix, dialect, name = m.groups()
    choice = rng.randrange(6)
    if choice == 0 and len(name) > 1:
        i = rng.randrange(len(name))
        name = name[:i] + name[i + 1 :]
    elif choice == 1:
        name += name[-1]
    elif choice == 2:
        dialect = {"tile": "frag", "frag": "tile"}.get(dialect, "tile")
    elif choice == 3 and len(name) > 1:
        i = rng.randrange(len(name) - 1)
        name = name[:i] + name[i + 1] + name[i] + name[i + 2 :]
    elif choice == 4:
        name = rng.choice(["", "_", name.upper(), name + "_x"])
    else:
        return _replace_span(text, m.start(), m.end(), prefix + rng.choice(_NEAR_MISS_NAMES))
    return _replace_span(text, m.start(), m.end(), f"{prefix}{dialect}.{name}")


def swap_op_name(rng: random.Random, text: str, donor: str) -> str | None:
    """A real op name in place of another: right syntax for the wrong op."""
    here = [m for m in _OP_NAME.finditer(text) if not m.group(1)]
    names = sorted({m.group(0) for m in _OP_NAME.finditer(text + donor) if not m.group(1)})
    if not here or len(names) < 2:
        return None
    m = rng.choice(here)
    return _replace_span(text, m.start(), m.end(), rng.choice(names))


def swap_value(rng: random.Random, text: str, donor: str) -> str | None:
    """One use of an SSA value replaced by another: type mismatches, use before def."""
    uses = list(_SSA_VALUE.finditer(text))
    names = sorted({m.group() for m in uses} | {"%undefined"})
    if not uses:
        return None
    m = rng.choice(uses)
    return _replace_span(text, m.start(), m.end(), rng.choice(names))


def change_char(rng: random.Random, text: str, donor: str) -> str | None:
    """One character inserted, deleted or replaced: lexer edge cases."""
    if not text:
        return None
    i = rng.randrange(len(text))
    choice = rng.randrange(3)
    if choice == 0:
        return text[:i] + rng.choice(_PUNCTUATION) + text[i:]
    if choice == 1:
        return text[:i] + text[i + 1 :]
    return text[:i] + rng.choice(_PUNCTUATION) + text[i + 1 :]


def deep_nesting(rng: random.Random, text: str, donor: str) -> str | None:
    """Deeply nested brackets in an attribute or type: recursion limits."""
    depth = rng.choice([50, 500, 3000, 20000])
    left, right = rng.choice([("[", "]"), ("(", ")"), ("<", ">"), ("{", "}"), ("vector<1x", ">")])
    nested = left * depth + "1" + right * depth
    spots = [m.start() for m in re.finditer(r"= |<|\(", text)]
    if not spots:
        return None
    at = rng.choice(spots) + 1
    return text[:at] + nested + text[at:]


MUTATORS: dict[str, Mutator] = {
    "truncate": truncate,
    "delete_lines": delete_lines,
    "duplicate_lines": duplicate_lines,
    "splice_lines": splice_lines,
    "swap_tokens": swap_tokens,
    "change_integer": change_integer,
    "change_element_type": change_element_type,
    "plausible_integer": plausible_integer,
    "plausible_element_type": plausible_element_type,
    "consistent_integer": consistent_integer,
    "consistent_element_type": consistent_element_type,
    "corrupt_swizzle": corrupt_swizzle,
    "corrupt_layout": corrupt_layout,
    "add_swizzle": add_swizzle,
    "near_miss_op_name": near_miss_op_name,
    "swap_op_name": swap_op_name,
    "swap_value": swap_value,
    "change_char": change_char,
    "deep_nesting": deep_nesting,
}

# How often each mutator is drawn: the structure-aware ones reach deeper than
# character noise, which mostly stops at the lexer.
MUTATOR_WEIGHTS: dict[str, int] = {
    "truncate": 2, "delete_lines": 4, "duplicate_lines": 3, "splice_lines": 3,
    "swap_tokens": 4, "change_integer": 10, "change_element_type": 6,
    "plausible_integer": 6, "plausible_element_type": 3, "consistent_integer": 10,
    "consistent_element_type": 5,
    "corrupt_swizzle": 4, "corrupt_layout": 8, "add_swizzle": 3,
    "near_miss_op_name": 4, "swap_op_name": 4, "swap_value": 4, "change_char": 3,
    "deep_nesting": 1,
}  # fmt: skip


def mutate_text(rng: random.Random, text: str, donor: str, count: int) -> tuple[str, tuple[str, ...]]:
    """Apply ``count`` mutators that apply (a few tries each); return the text
    and the names of those applied, in order."""
    names = list(MUTATORS)
    weights = [MUTATOR_WEIGHTS[n] for n in names]
    applied: list[str] = []
    for _ in range(count):
        for _attempt in range(8):
            name = rng.choices(names, weights)[0]
            new = MUTATORS[name](rng, text, donor)
            if new is not None and new != text:
                text = new
                applied.append(name)
                break
    return text, tuple(applied)


# --------------------------------------------------------------------------
# Modes and pass options
# --------------------------------------------------------------------------

MODES: dict[str, tuple[str, ...]] = {
    "parse": (),
    "ptx": ("-p", "tile-to-ptx", "-t", "ptx"),
    "llvm": ("-p", "tile-to-llvm", "-t", "llvm"),
}
"""tile-opt arguments of each mode (the input file comes first)."""


def _int_list(rng: random.Random, n: int) -> str:
    return ",".join(str(rng.choice([rng.choice(INTERESTING_INTS), 2, 4, 16, 64, 128])) for _ in range(n))


_BAD_OPTIONS: tuple[Callable[[random.Random], str], ...] = (
    lambda r: f"block={_int_list(r, r.choice([3, 3, 3, 2, 4, 1]))}",
    lambda r: r.choice(["block=0,0,0", "block=-64,64,32", "block=64,64,0", "block=48,48,16"]),
    lambda r: f"warps={_int_list(r, r.choice([2, 2, 1, 3]))}",
    lambda r: r.choice(["warps=3,1", "warps=0,0", "warps=-1,2", "warps=64,64", "warps=1"]),
    lambda r: f"stages={r.choice([0, 1, 2, 4, 1000, -1, 2**31, 2**63, 10**30])}",
    lambda r: f"group={r.choice([0, -1, 1, 3, 2**31, 10**30])}",
    lambda r: r.choice(["thread_tile=-1,4", "thread_tile=0,0", "thread_tile=3,3", "thread_tile=1",
                        "thread_tile=16,16", "thread_tile=1024,1", f"thread_tile={_int_list(r, 2)}"]),
    lambda r: r.choice(["tf32=true", "bulk=true", "wgmma=true", "release=false", "tf32=maybe",
                        "bulk=1", "wgmma=true bulk=true"]),
    lambda r: r.choice(["stages=2 stages=3", "block=64,64,32 block=32,32,32", "unknown=1", "block=", "block=1,,2"]),
)  # fmt: skip


def _ptx_options(rng: random.Random) -> str:
    return " ".join(rng.choice(_BAD_OPTIONS)(rng) for _ in range(rng.choice([1, 1, 2, 3])))


def _explicit_ptx_pipeline(rng: random.Random) -> str:
    """tile-to-ptx spelt out, each inner pass with odd options."""
    max_bits = rng.choice([-1, 0, 1, 2, 3, 4, 7, 8, 64, 2**31])
    stages = rng.choice([0, 1, 2, 3, 1000, -1])
    tiling = rng.choice(["", "{block=64,64,32 warps=2,2}", "{thread_tile=-1,4}", "{block=16,16,16 warps=1,1}"])
    layout = rng.choice(["", "{block_tiles=false}"])
    return (
        f"tile-tiling{tiling},tile-swizzle{{max_bits={max_bits}}},tile-pipeline{{stages={stages}}},"
        f"tile-layout{layout},tile-distribute,tile-to-llvm"
    )


def mutate_ptx_args(rng: random.Random) -> tuple[str, ...]:
    """ptx mode with bad pass or target options (``tile-to-ptx{block=0,0,0}``)."""
    choice = rng.random()
    if choice < 0.6:
        passes = f"tile-to-ptx{{{_ptx_options(rng)}}}"
    elif choice < 0.75:
        passes = rng.choice(["tile-to-ptx{", "tile-to-ptx{}", "tile-to-ptx{{}}", "tile-to-ptx{stages=3",
                             "tile-to-ptx,tile-to-ptx", "tile-to-ptx{block=64 64 32}"])  # fmt: skip
    else:
        passes = _explicit_ptx_pipeline(rng)
    return ("-p", passes, "-t", _ptx_target(rng))


def _ptx_target(rng: random.Random) -> str:
    """Mostly a valid target (a bad one stops tile-opt before the passes run)."""
    if rng.random() < 0.8:
        return rng.choice(["ptx", "ptx", "ptx{arch=sm_90}", "ptx{arch=sm_90a}", "ptx{arch=sm_86}"])
    return rng.choice(
        ["ptx{arch=sm_1}", "ptx{arch=}", "ptx{opt_level=-1}", "ptx{opt_level=99}", "ptx{arch=sm_90 arch=sm_80}"]
    )


def mutate_llvm_args(rng: random.Random) -> tuple[str, ...]:
    """llvm mode after other passes, or with options tile-to-llvm lacks."""
    passes = rng.choice([
        "tile-layout,tile-distribute,tile-to-llvm",
        "tile-regalloc,tile-to-llvm",
        f"tile-swizzle{{max_bits={rng.choice([-1, 0, 8, 2**31])}}},tile-layout,tile-distribute,tile-to-llvm",
        "tile-layout{block_tiles=false},tile-distribute,tile-to-llvm",
        "tile-to-llvm,tile-to-llvm",
        "tile-to-llvm{x=1}",
    ])  # fmt: skip
    return ("-p", passes, "-t", rng.choice(["llvm"] * 8 + ["llvm{x=1}", "ptx"]))


def mode_args(rng: random.Random, mode: str, mutate: bool) -> tuple[str, ...]:
    """tile-opt's arguments for ``mode``, maybe with mutated pass options."""
    if not mutate or mode == "parse":
        return MODES[mode]
    return mutate_ptx_args(rng) if mode == "ptx" else mutate_llvm_args(rng)


# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One input to run: the text, tile-opt's arguments, and how it was made."""

    text: str
    args: tuple[str, ...]
    mode: str
    origin: str = ""
    mutations: tuple[str, ...] = ()

    def command(self, path: str = "input.mlir") -> str:
        """The shell command that reproduces this case."""
        quoted = " ".join(f"'{a}'" if re.search(r"[\s{}]", a) else a for a in self.args)
        return f"python -m tilec.tools.tile_opt {path} {quoted}".rstrip()


PASS_MUTATION_RATE = 0.35


def make_case(seeds: Sequence[Seed], seed: int, index: int, mode: str) -> Case:
    """Case ``index`` of campaign ``seed`` in ``mode``. Every mode runs the same
    mutant of the same seed, except that a run with bad pass options sometimes
    takes the seed unmutated (so an options bug is not hidden by a parse error)."""
    rng = random.Random(f"tilec-fuzz/{seed}/{index}")
    base = rng.choice(seeds)
    donor = rng.choice(seeds)
    count = rng.choice([1, 1, 1, 1, 2, 2, 3, 4])
    mode_rng = random.Random(f"tilec-fuzz/{seed}/{index}/{mode}")
    mutate_args = mode != "parse" and mode_rng.random() < PASS_MUTATION_RATE
    if mutate_args and mode_rng.random() < 0.3:
        count = 0  # a seed as it is, with bad options only
    text, applied = mutate_text(rng, base.text, donor.text, count)
    args = mode_args(mode_rng, mode, mutate_args)
    if args != MODES[mode]:
        applied += ("pass_options",)
    return Case(text, args, mode, base.name, applied)


# --------------------------------------------------------------------------
# Running one case in process, with a timeout
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """One frame of a traceback or a sampled stack."""

    file: str
    line: int
    func: str
    code: str


class FuzzTimeout(BaseException):
    """Raised by SIGALRM in the middle of tile-opt. A BaseException, so that
    tile-opt's ``except Exception`` (its internal-error report) lets it through.
    ``stacks`` are the stacks sampled before it was raised (outermost frame first)."""

    def __init__(self, message: str, stacks: list[list[Frame]]):
        super().__init__(message)
        self.stacks = stacks


@dataclass
class Outcome:
    """What one run did."""

    kind: str
    """'accepted', 'located', 'unlocated', 'internal' or 'hang'."""
    status: int | None
    seconds: float
    stderr: str = ""
    signature: str = ""
    """Crash group: exception type and innermost tilec/xDSL frame ('internal'),
    the function the run was stuck in ('hang'), or the normalised message
    ('unlocated'); empty otherwise."""
    message: str = ""
    """One line: the exception or the diagnostic."""
    frame: str = ""
    """The traceback's last frame and its source line, where there is one."""


KINDS = ("accepted", "located", "unlocated", "internal", "hang")
STDERR_LIMIT = 20_000

_LOCATED = re.compile(r"^\S.*?:\d+:\d+: error: ", re.MULTILINE)
_INTERNAL = re.compile(r"^tile-opt: internal error|^Traceback \(most recent call last\):", re.MULTILINE)


def classify(status: int | None, stderr: str, timed_out: bool = False) -> str:
    """The outcome kind of a run from its exit status and stderr."""
    if timed_out:
        return "hang"
    if status not in (0, 1) or _INTERNAL.search(stderr):
        return "internal"
    if status == 0:
        return "accepted"
    return "located" if _LOCATED.search(stderr) else "unlocated"


HANG_SAMPLES = 5


@contextlib.contextmanager
def alarm(seconds: float, samples: int = HANG_SAMPLES) -> Iterator[None]:
    """Raise FuzzTimeout in this (main) thread after ``seconds``. The last
    moments are sampled first (``samples`` stacks, a fraction of a second
    apart) to tell where the run is stuck; the alarm keeps ringing until the
    block ends, in case a handler swallows one."""
    interval = min(0.2, seconds / (2 * samples))
    stacks: list[list[Frame]] = []

    def ring(signum: int, frame: types.FrameType | None) -> None:
        stack = traceback.extract_stack(frame)
        stacks.append([Frame(f.filename, f.lineno or 0, f.name, f.line or "") for f in stack])
        if len(stacks) >= samples:
            raise FuzzTimeout(f"no result after {seconds} s", stacks)

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds - (samples - 1) * interval, interval)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def call_main(argv: Sequence[str]) -> tuple[int | None, str, str]:
    """tile-opt's ``main`` in this process: (exit status, stdout, stderr).

    An exception that escapes ``main`` (other than FuzzTimeout) is a bug: its
    traceback becomes the stderr and the status is None."""
    # lazy: tile-opt and the passes it registers cost ~180 ms of import (measured); the mutators need none
    from tilec.tools.tile_opt import main

    out, err = io.StringIO(), io.StringIO()
    status: int | None = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        except FuzzTimeout:
            raise
        except BaseException as e:  # noqa: BLE001 - anything that escapes is a finding
            err.write("".join(traceback.format_exception(e)))
            status = None
    return status, out.getvalue(), err.getvalue()


def run_case(case: Case, timeout: float = 20.0, workdir: Path | None = None) -> Outcome:
    """Run ``case`` through tile-opt in this process and classify the outcome.
    Must be called from the main thread (SIGALRM)."""
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="tilec-fuzz-") as tmp:
            return run_case(case, timeout, Path(tmp))
    path = workdir / "input.mlir"
    path.write_text(case.text, encoding="utf-8", errors="surrogateescape")
    argv = [str(path), *case.args, "--show-traceback"]
    start = time.perf_counter()
    try:
        with alarm(timeout):
            status, _, stderr = call_main(argv)
    except FuzzTimeout as e:
        return describe_hang(e, time.perf_counter() - start)
    return describe(classify(status, stderr), status, time.perf_counter() - start, stderr, str(path))


# --------------------------------------------------------------------------
# Crash signatures
# --------------------------------------------------------------------------

_FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')
_REPEATED = re.compile(r"^\s*\[Previous line repeated (\d+) more times?\]")


@functools.cache
def _package_dirs() -> dict[str, str]:
    """Where the tilec and xDSL packages live: their frames are 'project' frames."""
    return {"tilec": os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
            "xdsl": os.path.dirname(os.path.abspath(xdsl.__file__ or ""))}


def _project_path(path: str) -> str | None:
    """``tilec/...`` or ``xdsl/...`` for a file of those packages, else None."""
    for name, directory in _package_dirs().items():
        if os.path.abspath(path).startswith(directory + os.sep):
            return name + "/" + os.path.relpath(path, directory).replace(os.sep, "/")
    return None


def short_path(path: str) -> str:
    """``.../site-packages/xdsl/ir/core.py`` -> ``xdsl/ir/core.py``; other files: their name."""
    return _project_path(path) or os.path.basename(path)


def last_traceback(text: str) -> tuple[list[Frame], str]:
    """Frames and first exception line of the last traceback in ``text`` (the
    exception that ended the run, after any it was raised while handling)."""
    start = text.rfind("Traceback (most recent call last):")
    if start < 0:
        return [], ""
    lines = text[start:].splitlines()[1:]
    frames: list[Frame] = []
    exception = ""
    for i, line in enumerate(lines):
        m = _FRAME.match(line)
        repeated = _REPEATED.match(line)
        if m:
            code = lines[i + 1].strip() if i + 1 < len(lines) and lines[i + 1].startswith("    ") else ""
            frames.append(Frame(m["file"], int(m["line"]), m["func"], code))
        elif repeated and frames:  # a recursion, abridged by traceback
            frames += [frames[-1]] * int(repeated[1])
        elif line and not line.startswith(" "):
            exception = line
            break
    return frames, exception


def _is_project_frame(frame: Frame) -> bool:
    where = _project_path(frame.file)
    return where is not None and where != "tilec/tools/fuzz.py"


def innermost_project_frame(frames: Sequence[Frame]) -> Frame | None:
    """The frame nearest the raise that is tilec's or xDSL's code."""
    for frame in reversed(frames):
        if _is_project_frame(frame):
            return frame
    return None


def _fold_recursion(frames: Sequence[Frame]) -> list[Frame]:
    """Project frames, each function kept at its first (outermost) call only."""
    seen: set[tuple[str, str]] = set()
    folded: list[Frame] = []
    for frame in frames:
        if _is_project_frame(frame) and (frame.file, frame.func) not in seen:
            seen.add((frame.file, frame.func))
            folded.append(frame)
    return folded


def stuck_frame(stacks: Sequence[Sequence[Frame]]) -> Frame | None:
    """The deepest tilec/xDSL function that every sampled stack is inside:
    where a hang loops (below it the samples differ)."""
    common: Frame | None = None
    for level in zip(*(_fold_recursion(stack) for stack in stacks)):
        if any((f.file, f.func) != (level[0].file, level[0].func) for f in level):
            break
        common = level[-1]
    return common


def recursing_frame(frames: Sequence[Frame]) -> Frame | None:
    """The tilec/xDSL function that occurs most often in a RecursionError's
    traceback (the recursion), the outermost one on a tie."""
    counts = Counter((f.file, f.func) for f in frames if _is_project_frame(f))
    if not counts:
        return None
    most = max(counts.values())
    return next(f for f in frames if counts.get((f.file, f.func)) == most)


def _where(frame: Frame, line: bool = True) -> str:
    return f"{short_path(frame.file)}{f':{frame.line}' if line else ''} in {frame.func}"


def _exception_type(exception_line: str) -> str:
    name = exception_line.split(":", 1)[0].strip()
    return name.rsplit(".", 1)[-1] or "?"


def normalize_message(line: str, path: str) -> str:
    """A diagnostic's first line with the file name and numbers abstracted, so
    that one bug's messages fall in one group."""
    line = line.replace(path, "FILE")
    line = re.sub(r"'[^']*'", "'…'", line)
    line = re.sub(r'"[^"]*"', '"…"', line)
    line = re.sub(r"-?\d+", "N", line)
    previous = ""
    while previous != line:  # innermost brackets first: types, layouts, lists
        previous, line = line, re.sub(r"<[^<>]*>|\([^()]*\)|\[[^\[\]]*\]", "…", line)
    return line


def describe(kind: str, status: int | None, seconds: float, stderr: str, path: str) -> Outcome:
    """An Outcome with its crash signature, message and frame filled in."""
    outcome = Outcome(kind, status, seconds, stderr[:STDERR_LIMIT])
    frames, exception = last_traceback(stderr)
    if frames:
        outcome.frame = f"{_where(frames[-1])}: {frames[-1].code}"
    first_line = stderr.strip().splitlines()[0] if stderr.strip() else ""
    outcome.message = first_line
    if kind == "internal":
        outcome.message = exception or first_line or f"exit status {status}"
        outcome.signature = internal_signature(frames, exception) if exception else f"exit status {status}"
    elif kind == "unlocated":
        outcome.signature = "unlocated: " + normalize_message(first_line, path)
    return outcome


def internal_signature(frames: Sequence[Frame], exception: str) -> str:
    """Exception type and innermost tilec/xDSL frame; for a RecursionError the
    recursing function (its innermost frame is wherever the limit struck)."""
    kind = _exception_type(exception)
    if kind == "RecursionError":
        frame = recursing_frame(frames)
        return f"{kind} @ {_where(frame, line=False)}" if frame else kind
    frame = innermost_project_frame(frames)
    return f"{kind} @ {_where(frame) if frame else '?'}"


def describe_hang(timeout: FuzzTimeout, seconds: float) -> Outcome:
    """A hang, named by the function every sampled stack was inside."""
    stuck = stuck_frame(timeout.stacks)
    last = innermost_project_frame(timeout.stacks[-1]) if timeout.stacks else None
    samples = "\n\n".join("".join(traceback.format_list(
        [(f.file, f.line, f.func, f.code) for f in stack])) for stack in timeout.stacks[-2:])  # fmt: skip
    return Outcome(
        "hang", None, seconds, f"{timeout}\nlast sampled stacks:\n{samples}"[:STDERR_LIMIT],
        signature=f"Hang @ {_where(stuck, line=False)}" if stuck else "Hang",
        message=f"{timeout}", frame=f"{_where(last)}: {last.code}" if last else "",
    )


# --------------------------------------------------------------------------
# Worker processes
# --------------------------------------------------------------------------

DEFAULT_MEMORY_LIMIT = 4 << 30


def limit_memory(limit: int) -> None:
    """Cap the address space, so a runaway allocation is a fast MemoryError."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def warm_up() -> None:
    """Import every pass and target once, so forked workers start warm."""
    # lazy: every pass and target (~0.3 s), only for a campaign's workers
    from tilec.passes.registry import get_all_passes, get_all_targets

    for factory in get_all_passes().values():
        factory()
    for factory in get_all_targets().values():
        with contextlib.suppress(Exception):
            factory()


@contextlib.contextmanager
def capture_fd2(path: Path) -> Iterator[None]:
    """Send file descriptor 2 to ``path`` during the block: what C code (LLVM)
    prints before it aborts the process is then still there to read."""
    saved = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _worker_loop(conn: multiprocessing.connection.Connection, directory: Path, memory_limit: int) -> None:
    """A worker: run each (case, timeout) received, send back the Outcome."""
    limit_memory(memory_limit)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles ^C
    faulthandler.enable(2)  # a fatal signal dumps the Python stack into the capture file
    while True:
        job = conn.recv()
        if job is None:
            return
        case, timeout = job
        with capture_fd2(directory / FD2_FILE):
            outcome = run_case(case, timeout, directory)
        conn.send(outcome)


FD2_FILE = "fd2.txt"


_FAULT_FRAME = re.compile(r'^\s+File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)', re.MULTILINE)


def _fault_frame(printed: str) -> str:
    """The innermost tilec/xDSL frame of faulthandler's dump (most recent call first)."""
    for m in _FAULT_FRAME.finditer(printed):
        frame = Frame(m["file"], int(m["line"]), m["func"], "")
        if _is_project_frame(frame):
            return f"{short_path(frame.file)}:{frame.line} in {frame.func}"
    return ""


def _first_message(printed: str) -> str:
    """What the dying code said (``LLVM ERROR: ...``), not faulthandler's header."""
    for line in printed.splitlines():
        if line.startswith(("Current thread", "Thread 0x")):
            return ""
        if line.strip() and not line.startswith("Fatal Python error"):
            return line.strip()
    return ""


def died_outcome(code: int | None, seconds: float, directory: Path) -> Outcome:
    """The outcome of a case whose worker died: 'internal', named by the exit
    signal, the Python frame it died in and the first line C code printed."""
    reason = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
    try:
        printed = (directory / FD2_FILE).read_text(errors="replace")
    except OSError:
        printed = ""
    first, where = _first_message(printed), _fault_frame(printed)
    signature = f"worker died ({reason})" + (f" @ {where}" if where else "")
    signature += f": {normalize_message(first, str(directory / 'input.mlir'))}" if first else ""
    message = f"the worker process died ({reason})" + (f": {first}" if first else "")
    return Outcome("internal", code, seconds, printed[:STDERR_LIMIT], signature, message, where)


@dataclass
class _Worker:
    process: multiprocessing.process.BaseProcess
    conn: multiprocessing.connection.Connection
    directory: Path
    runs: int = 0
    job: tuple[int, Case] | None = None
    started: float = 0.0


def _needs_restart(outcome: Outcome) -> bool:
    """After a hang or a MemoryError a worker's state is suspect (an import
    cut short, a half-built cache): start a fresh one."""
    return outcome.kind == "hang" or "MemoryError" in outcome.signature


@dataclass
class WorkerPool:
    """Worker processes that run cases in isolation: a worker that dies or
    stops answering (a hang in C code that SIGALRM cannot interrupt) is killed
    and replaced, and its case recorded as 'internal' or 'hang'."""

    workers: int = 2
    timeout: float = 20.0
    memory_limit: int = DEFAULT_MEMORY_LIMIT
    recycle_after: int = 300
    grace: float = 10.0
    _slots: list[_Worker] = field(default_factory=list[_Worker])

    def __post_init__(self) -> None:
        methods = multiprocessing.get_all_start_methods()
        self._ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self._tmp = tempfile.TemporaryDirectory(prefix="tilec-fuzz-")

    def _start(self, directory: Path) -> _Worker:
        directory.mkdir(exist_ok=True)
        parent, child = self._ctx.Pipe()
        process = self._ctx.Process(target=_worker_loop, args=(child, directory, self.memory_limit), daemon=True)
        process.start()
        child.close()
        return _Worker(process, parent, directory)

    def _stop(self, worker: _Worker, kill: bool) -> None:
        if kill:
            worker.process.kill()
        else:
            with contextlib.suppress(OSError):
                worker.conn.send(None)
        worker.process.join(5)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
        worker.conn.close()

    def close(self) -> None:
        for worker in self._slots:
            self._stop(worker, kill=worker.job is not None)
        self._slots.clear()
        self._tmp.cleanup()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, cases: Iterable[Case], deadline: float | None = None) -> Iterator[tuple[int, Case, Outcome]]:
        """Yield (number, case, outcome) for each case as it finishes (not in
        order); stop taking new cases once ``time.monotonic()`` passes ``deadline``."""
        pending = iter(enumerate(cases))
        if not self._slots:
            self._slots = [self._start(Path(self._tmp.name) / f"worker{i}") for i in range(self.workers)]
        exhausted = False
        while True:
            if not exhausted:
                exhausted = self._dispatch(pending, deadline)
            busy = [w for w in self._slots if w.job is not None]
            if not busy:
                return
            yield from self._collect(busy)

    def _dispatch(self, pending: Iterator[tuple[int, Case]], deadline: float | None) -> bool:
        """Give idle workers a case each; True once there are no more to give."""
        for worker in self._slots:
            if worker.job is not None:
                continue
            if deadline is not None and time.monotonic() > deadline:
                return True
            job = next(pending, None)
            if job is None:
                return True
            worker.job, worker.started = job, time.monotonic()
            worker.conn.send((job[1], self.timeout))
        return False

    def _collect(self, busy: list[_Worker]) -> Iterator[tuple[int, Case, Outcome]]:
        """Wait for a result or an overdue worker; yield what finished."""
        limit = self.timeout + self.grace
        wait = min(w.started + limit for w in busy) - time.monotonic()
        ready = multiprocessing.connection.wait([w.conn for w in busy], timeout=max(0.0, wait))
        for worker in busy:
            assert worker.job is not None
            number, case = worker.job
            if worker.conn in ready:
                outcome = self._receive(worker)
            elif time.monotonic() - worker.started > limit:
                outcome = Outcome("hang", None, limit, signature="Hang (worker killed: no answer to SIGALRM)",
                                  message=f"no answer after {limit:.0f} s")  # fmt: skip
                self._replace(worker, kill=True)
            else:
                continue
            worker.job = None
            yield number, case, outcome

    def _receive(self, worker: _Worker) -> Outcome:
        try:
            outcome: Outcome = worker.conn.recv()
        except (EOFError, OSError):
            worker.process.join(5)
            outcome = died_outcome(worker.process.exitcode, time.monotonic() - worker.started, worker.directory)
            self._replace(worker, kill=True)
            return outcome
        worker.runs += 1
        if _needs_restart(outcome) or worker.runs >= self.recycle_after:
            self._replace(worker, kill=False)
        return outcome

    def _replace(self, worker: _Worker, kill: bool) -> None:
        """Stop ``worker`` and put a fresh process in its slot (same object)."""
        job = worker.job
        self._stop(worker, kill)
        fresh = self._start(worker.directory)
        worker.process, worker.conn, worker.runs, worker.job = fresh.process, fresh.conn, 0, job

    def run_one(self, case: Case) -> Outcome:
        """One case through the pool (for the minimizer)."""
        for _, _, outcome in self.run([case]):
            return outcome
        raise AssertionError("no outcome")


# --------------------------------------------------------------------------
# Minimizing
# --------------------------------------------------------------------------


def _ddmin(parts: list[str], still_fails: Callable[[list[str]], bool], deadline: float) -> list[str]:
    """Remove chunks of ``parts`` (halving the chunk size) while the failure stays."""
    chunk = max(1, len(parts) // 2)
    while chunk >= 1 and time.monotonic() < deadline:
        i = 0
        while i < len(parts) and time.monotonic() < deadline:
            candidate = parts[:i] + parts[i + chunk :]
            if candidate and still_fails(candidate):
                parts = candidate
            else:
                i += chunk
        if chunk == 1:
            break
        chunk //= 2
    return parts


def minimize(text: str, still_fails: Callable[[str], bool], budget: float = 60.0) -> str:
    """A smaller text for which ``still_fails`` holds: whole lines first, then
    tokens (with the whitespace after them). Stops after ``budget`` seconds."""
    deadline = time.monotonic() + budget
    lines = _ddmin(text.splitlines(keepends=True), lambda p: still_fails("".join(p)), deadline)
    tokens = re.findall(r"\S+\s*|\s+", "".join(lines))
    tokens = _ddmin(tokens, lambda p: still_fails("".join(p)), deadline)
    return "".join(tokens)


def same_failure(pool: WorkerPool, case: Case, signature: str) -> Callable[[str], bool]:
    """A minimizer predicate: the text still fails with ``signature`` in ``case``'s mode."""

    def check(text: str) -> bool:
        return pool.run_one(replace(case, text=text)).signature == signature

    return check
