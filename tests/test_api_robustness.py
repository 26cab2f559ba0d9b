"""The Python API on arbitrary input: a clear exception naming what is wrong, never anything else.

Hypothesis drives ``tilec.layout.parse`` (any string: a layout or ValueError), ``tilec.compile`` (any
text, and mutations of the GEMM example: a kernel or CompilationError) and ``tilec.matmul_kernel``
(arrays of any dtype, rank and shape: a kernel, or TypeError/ValueError naming the argument).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tilec
from tilec.api import CompilationError
from tilec.layout import parse

EXAMPLE = (Path(__file__).resolve().parents[1] / "examples" / "gemm.mlir").read_text()
LAYOUT_ALPHABET = "()0123456789,:-_ oSw<>"


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=60), st.text(alphabet=LAYOUT_ALPHABET, max_size=60)))
def test_layout_parse_gives_a_layout_or_a_value_error(text):
    try:
        parse(text)
    except ValueError:
        pass


def test_layout_parse_refuses_huge_and_deep_input():
    with pytest.raises(ValueError, match="at most 64 bits"):
        parse("(99999999999999999999999,2):(1,2)")
    with pytest.raises(ValueError, match="nested too deeply"):
        parse("(" * 3000 + "1" + ")" * 3000 + ":1")
    with pytest.raises(ValueError, match="at most 32"):
        parse("Sw<3,99999999999,3> o 0 o (8,8):(8,1)")


def _mutate(data: st.DataObject, text: str) -> str:
    lines = text.split("\n")
    kind = data.draw(st.sampled_from(["delete", "duplicate", "replace_char", "truncate", "number"]))
    i = data.draw(st.integers(0, len(lines) - 1))
    if kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "truncate":
        return text[: data.draw(st.integers(0, len(text)))]
    elif kind == "number":
        value = data.draw(st.sampled_from(["0", "-1", "1", "3", "4294967296", "9223372036854775808", "10" * 20]))
        lines[i] = "".join(value if c.isdigit() else c for c in lines[i])
    elif lines[i]:
        j = data.draw(st.integers(0, len(lines[i]) - 1))
        lines[i] = lines[i][:j] + data.draw(st.sampled_from(list("(){}<>:,%@x!0 "))) + lines[i][j + 1:]
    return "\n".join(lines)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_compile_gives_a_kernel_or_a_compilation_error(data):
    text = data.draw(st.one_of(st.text(max_size=80), st.just(EXAMPLE).map(lambda t: t)))
    if text == EXAMPLE:
        text = _mutate(data, EXAMPLE)
    try:
        tilec.compile(text, arch="sm_80", cache=False)
    except CompilationError as e:
        assert str(e)


def test_compile_refuses_bytes_that_are_not_utf8_and_missing_tools():
    with pytest.raises(CompilationError, match="not UTF-8"):
        tilec.compile(b"\xff\xfe func.func", arch="sm_80", cache=False)
    with pytest.raises(CompilationError, match="not on PATH|mlir-opt"):
        tilec.compile(EXAMPLE, pipeline="mlir-opt[canonicalize]", arch="sm_80", cache=False)


DTYPES = [np.float16, np.float32, np.float64, np.int32, np.int8, np.bool_]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES), st.lists(st.integers(0, 70), min_size=0, max_size=3),
       st.lists(st.integers(0, 70), min_size=0, max_size=3))
def test_matmul_gives_a_kernel_or_names_the_argument(dtype_a, dtype_b, shape_a, shape_b):
    a, b = np.ones(shape_a, dtype_a), np.ones(shape_b, dtype_b)
    try:
        tilec.matmul_kernel(a, b, arch="sm_80")
    except (TypeError, ValueError) as e:
        assert str(e).startswith("tilec.matmul: "), str(e)
        assert any(name in str(e) for name in ("a ", "b ", " a", " b", "K ", "out")), str(e)


@pytest.mark.parametrize("which", ["a", "b", "a_columns"])
def test_matmul_refuses_an_output_that_overlaps_an_input(which):
    """Any overlap: the output is (a view of) an input, or shares some of its memory."""
    a = np.ones((64, 64), np.float16)
    b = np.ones((64, 64), np.float16)
    wide = np.ones((64, 128), np.float16)
    if which == "a":
        args, out = (a, b), a
    elif which == "b":
        args, out = (a, b), b.T.T
    else:  # a is the left half of `wide`, the output its right half shifted by one column
        args, out = (wide[:, :64], b), wide[:, 63:127]
    with pytest.raises(ValueError, match="out overlaps (a|b) in memory"):
        tilec.matmul_kernel(*args, out=out)


def test_products_check_their_outputs_and_options_before_any_gpu():
    """attention, softmax and the norms (a helper's hunt, session 33): bad outputs and options are refused
    with the argument named before anything needs a GPU; an output sharing memory with an input (another
    block still reads it) or with itself (stride 0) as matmul refuses it."""
    from tests.test_matmul import FakeCudaArray as F

    q = F((1, 4, 16, 64))
    with pytest.raises(ValueError, match="tilec.attention: empty input"):
        tilec.attention_kernel(q, F((1, 0, 16, 64)), F((1, 0, 16, 64)), arch="sm_80")
    with pytest.raises(TypeError, match="tilec.attention: q must be an array"):
        tilec.attention_kernel([[1.0]], q, q, return_lse=True, arch="sm_80")
    with pytest.raises(TypeError, match="tilec.attention: out must be an array"):
        tilec.attention(q, q, q, out=[[1.0]])
    with pytest.raises(TypeError, match="return_lse must be a bool"):
        tilec.attention_kernel(q, q, q, return_lse="no", arch="sm_80")
    k = F((1, 4, 16, 64))
    with pytest.raises(ValueError, match="tilec.attention: out overlaps k in memory"):
        tilec.attention(q, k, F((1, 4, 16, 64)), out=k)
    with pytest.raises(ValueError, match="tilec.attention: out: .* elements that share memory"):
        tilec.attention(q, k, F((1, 4, 16, 64)), out=F((1, 4, 16, 64), strides=(0, 0, 0, 1)))
    with pytest.raises(ValueError, match="more than the 2\\*\\*31 - 1 blocks"):
        from tilec.kernels.attention import grid
        grid(F((65535, 1, 32769 * 128, 64)))
    x = F((64, 256))
    shifted = F((64, 256), address=x._managed.dl_tensor.data + 512)
    with pytest.raises(ValueError, match="tilec.softmax: out overlaps x in memory"):
        tilec.softmax(x, out=shifted)
    with pytest.raises(ValueError, match="tilec.layer_norm: out: .* elements that share memory"):
        tilec.layer_norm(x, F((256,)), out=F((64, 256), strides=(0, 1)))
    with pytest.raises(TypeError, match="tilec.softmax: cannot allocate the output like a FakeCudaArray; pass out="):
        tilec.softmax(x)
    for eps in (None, "yes"):
        with pytest.raises(TypeError, match="tilec.rms_norm: eps must be a real number"):
            tilec.rms_norm(np.ones((4, 8), np.float32), np.ones(8, np.float32), eps=eps)
    for eps in (-1.0, float("nan"), 10**400):
        with pytest.raises(ValueError, match="tilec.rms_norm: eps must be finite and >= 0"):
            tilec.rms_norm(np.ones((4, 8), np.float32), np.ones(8, np.float32), eps=eps)


def test_outputs_that_share_no_element_with_an_input_are_taken():
    """Two halves of one wide buffer share no element though their spans meet (an output next to its
    input); softmax and the norms take ``out=x`` (each block writes the rows it read): both reach the
    GPU check. A half shifted by one element does overlap, and is refused."""
    from tests.test_matmul import FakeCudaArray as F
    from tilec.runtime import NoDeviceError

    base = 0x7F5000000000
    x = F((64, 256), strides=(512, 1), address=base)
    right = F((64, 256), strides=(512, 1), address=base + 256 * 2)
    for call in (lambda: tilec.softmax(x, out=right), lambda: tilec.softmax(x, out=x),
                 lambda: tilec.layer_norm(x, F((256,)), out=x)):
        with pytest.raises(NoDeviceError):
            call()
    with pytest.raises(ValueError, match="tilec.softmax: out overlaps x in memory"):
        tilec.softmax(x, out=F((64, 256), strides=(512, 1), address=base + 2))
    q = F((1, 2, 16, 64), strides=(4096, 2048, 128, 1), address=base)
    o = F((1, 2, 16, 64), strides=(4096, 2048, 128, 1), address=base + 128)
    with pytest.raises(NoDeviceError):
        tilec.attention(q, F((1, 2, 16, 64)), F((1, 2, 16, 64)), out=o)


def test_arguments_hunt_2_of_session_38_found_unchecked():
    """Each was another exception type, a traceback from inside, or accepted silently."""
    src = (Path(__file__).resolve().parents[1] / "examples" / "gemm.mlir").read_text()
    one_line = "func.func @x() { }" + " " * 300  # no newline: it was taken for a path (OSError: name too long)
    with pytest.raises(tilec.CompilationError, match=r"<source>:1:\d+: error"):
        tilec.compile(one_line + "x", arch="sm_80")
    for level in (3.0, 2.0, True, "3"):
        with pytest.raises(ValueError, match=r"tilec.compile: opt_level must be an int from 0 to 3, got"):
            tilec.compile(src, arch="sm_80", opt_level=level)
    with pytest.raises(TypeError, match=r"tilec.compile: pipeline must be tile-opt pass text, a pass or a sequence"):
        tilec.compile(src, pipeline=42, arch="sm_80")
    with pytest.raises(TypeError, match=r"tilec.compile: cache must be a CubinCache, a folder, None or False"):
        tilec.compile(src, cache=123, arch="sm_80")
    x = np.zeros((4, 100), np.float32)
    for arch in ("", 0, False):
        with pytest.raises(ValueError, match="unsupported GPU architecture"):
            tilec.softmax_kernel(x, arch=arch)
        with pytest.raises(ValueError, match="unsupported GPU architecture"):
            tilec.matmul_kernel(np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float16), arch=arch)
    assert tilec.softmax_kernel(x, dtype=np.float32, arch="sm_80") is not None
    a16 = np.zeros((16, 64), np.float16)
    with pytest.raises(ValueError, match=r"split_k=2 needs device arrays"):  # a numpy int is an int
        tilec.matmul_kernel(a16, a16.T.copy(), split_k=np.int64(2), arch="sm_80")


def test_numpy_bf16_inputs_give_numpy_bf16_outputs():
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="numpy's bf16 type is ml_dtypes'")
    b16 = np.zeros((64, 64), ml_dtypes.bfloat16)
    assert tilec.matmul_kernel(b16, b16, arch="sm_80") is not None
