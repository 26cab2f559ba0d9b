"""Kernels written in tilec.lang against tilec's built-in kernels, torch/cuBLAS and Triton, in one run.

    python bench/lang.py [--json out.json] [--rows-only | --gemm-only | --attention-only]

The language's softmax and layer norm (``examples/lang/``) launched through ``kernel[grid](...)``
with the tiling tilec's built-in row kernels choose (:func:`tilec.kernels.row_tiling.row_tiling`),
next to ``tilec.softmax`` / ``tilec.layer_norm``, torch and ``torch.compile``; bandwidth is
(bytes read + bytes written) / device time, timed as ``bench/softmax.py`` times (the median of 30
batches of 10 back-to-back calls after warm-up). ``host us`` is the launcher's own time per call
(on a tiny input), which a kernel shorter than it cannot hide. Then the language's GEMM
(``examples/lang/matmul.py``: 128x128x32 block tiles, 4x2 warps, 4 stages; ``matmul_block``,
the same GEMM written Triton's way, staged and split over the warps by the compiler; and
``matmul_masked``, Triton's tutorial with its masks) against
``tilec.matmul``, ``torch.matmul`` (cuBLAS) and the autotuned Triton tutorial GEMM
(``bench/triton_matmul.py``), f16, in TFLOP/s (2 M N K / device time). Then the language's flash
attention (``examples/lang/flash_attention.py``, Triton's structure; ``--attention-only``) against
``tilec.attention``, torch SDPA (FlashAttention-2, cuDNN) and ``bench/triton_attention.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import torch
import torch.nn.functional as F

import tilec
import tilec.lang as tl
from tilec.kernels.row_tiling import row_tiling

from softmax import host_us, time_ms  # bench/softmax.py's timers (this folder is on sys.path)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "lang"


def _example(name: str):
    """A module of examples/lang (by path: its names would clash with bench/'s)."""
    spec = importlib.util.spec_from_file_location(f"lang_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lang_softmax = _example("softmax").softmax
layer_norm = _example("layer_norm").layer_norm
lang_matmul = _example("matmul")
lang_attention = _example("flash_attention")

SHAPES = [(4096, 4096), (16384, 4096), (8192, 8192), (4096, 16384), (16384, 1024)]
DTYPES = [torch.float16, torch.float32]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here too")
    p.add_argument("--rows-only", action="store_true", help="the row kernels only (no GEMM)")
    p.add_argument("--gemm-only", action="store_true", help="the GEMMs only")
    p.add_argument("--attention-only", action="store_true", help="the Triton-style flash attention only")
    args = p.parse_args()
    print(f"GPU: {torch.cuda.get_device_name()}")
    if args.gemm_only or args.attention_only:
        key, rows = ("gemm", gemm_rows()) if args.gemm_only else ("attention", attention_rows())
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"gpu": torch.cuda.get_device_name(), key: rows}, f, indent=1)
        return
    rows = []
    compiled_softmax = torch.compile(lambda t: torch.softmax(t, -1))
    compiled_ln = torch.compile(lambda t, w, b: F.layer_norm(t, (t.shape[-1],), w, b, 1e-5))
    tiny = torch.randn(4, 256, device="cuda")
    tiny_o = torch.empty_like(tiny)
    t = row_tiling(256, "float32")
    host = {"lang softmax": host_us(lambda: lang_softmax[(1,)](tiny, tiny_o, BM=t.rows, N=t.cols, num_warps=t.warps)),
            "tilec.softmax": host_us(lambda: tilec.softmax(tiny, out=tiny_o))}
    print("host us per call: " + ", ".join(f"{k} {v:.1f}" for k, v in host.items()))
    print(f"{'kernel':>10} {'shape':>14} {'dtype':>8} {'lang':>7} {'tilec':>7} {'torch':>7} {'compile':>7} "
          f"{'lang/tilec':>10} {'lang/compile':>12}  GB/s")
    for dtype in DTYPES:
        name = str(dtype).removeprefix("torch.")
        for shape in SHAPES:
            m, n = shape
            tiling = row_tiling(n, name)
            if tiling.passes != 1:
                continue
            x = torch.randn(shape, device="cuda", dtype=dtype)
            w, b = torch.randn(n, device="cuda", dtype=dtype), torch.randn(n, device="cuda", dtype=dtype)
            grid = (-(-m // tiling.rows),)
            moved = 2 * x.numel() * x.element_size()
            for kernel, lang, builtin, ref_fn, compiled in (
                ("softmax",
                 lambda o: lang_softmax[grid](x, o, BM=tiling.rows, N=tiling.cols, num_warps=tiling.warps),
                 lambda o: tilec.softmax(x, out=o), lambda: torch.softmax(x.double(), -1),
                 lambda: compiled_softmax(x)),
                ("layer_norm",
                 lambda o: layer_norm[grid](x, w, b, o, BM=tiling.rows, N=tiling.cols, num_warps=tiling.warps),
                 lambda o: tilec.layer_norm(x, w, b, out=o),
                 lambda: F.layer_norm(x.double(), (n,), w.double(), b.double(), 1e-5),
                 lambda: compiled_ln(x, w, b)),
            ):
                o = torch.full_like(x, float("nan"))
                lang(o)
                ref = ref_fn()
                err = ((o.double() - ref).abs().max() / ref.abs().max()).item()
                o2 = torch.empty_like(x)
                torch_fn = (lambda: torch.softmax(x, -1)) if kernel == "softmax" else \
                    (lambda: F.layer_norm(x, (n,), w, b, 1e-5))
                gbs = {k: moved / time_ms(f) / 1e6 for k, f in (("lang", lambda: lang(o2)), ("tilec", lambda: builtin(o2)),
                                                                ("torch", torch_fn), ("compile", compiled))}
                rows.append({"kernel": kernel, "shape": list(shape), "dtype": name, "max_rel_error": err,
                             **{k: round(v, 1) for k, v in gbs.items()}})
                print(f"{kernel:>10} {str(shape):>14} {name:>8} {gbs['lang']:>7.0f} {gbs['tilec']:>7.0f} "
                      f"{gbs['torch']:>7.0f} {gbs['compile']:>7.0f} {gbs['lang'] / gbs['tilec']:>10.2f} "
                      f"{gbs['lang'] / gbs['compile']:>12.2f}  err {err:.1e}")
    gemms = gemm_rows() if not args.rows_only else []
    attention = attention_rows() if not args.rows_only else []
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "host_us": host, "rows": rows, "gemm": gemms,
                       "attention": attention}, f, indent=1)


def gemm_rows() -> list[dict]:
    """The language's GEMMs (examples/lang/matmul.py: mma.sync, and on sm_90 wgmma with bulk copies,
    also as a persistent kernel) against tilec.matmul, torch (cuBLAS) and Triton, f16."""
    import triton_matmul  # bench/triton_matmul.py: the autotuned Triton tutorial kernel

    hopper = torch.cuda.get_device_capability() == (9, 0)
    # the same wgmma GEMM without its producer warpgroup (no warp specialisation)
    no_ws = tl.Kernel(lang_matmul.matmul_wgmma.fn, num_warps=8, num_stages=3, bulk=True, producer=False)
    # ... and with it, but each K step's wgmma waited for in its own step (no wgmma in flight)
    from tilec.api import BLOCK_LEVEL_PIPELINE

    WS_SYNC = BLOCK_LEVEL_PIPELINE.replace("tile-pipeline", "tile-pipeline{stages=3 bulk=true producer=true in-flight=false}")
    ws_sync = tl.Kernel(lang_matmul.matmul_wgmma.fn, num_warps=8)  # its passes come with the call
    out = []
    print(f"{'gemm':>12} {'size':>6} {'lang':>7} {'tilec':>7} {'cuBLAS':>7} {'triton':>7} {'lang/tilec':>10} "
          f"{'lang/cuBLAS':>11} {'lang/triton':>11}  TFLOP/s")
    for size in (4096, 8192, 2000):
        a = torch.randn(size, size, device="cuda", dtype=torch.float16)
        b = torch.randn(size, size, device="cuda", dtype=torch.float16)
        c = torch.full((size, size), float("nan"), device="cuda", dtype=torch.float16)
        c2 = torch.empty_like(c)
        ref = a.double() @ b.double()
        kernels = {"lang mma": lambda: lang_matmul.matmul[lang_matmul.grid(size, size)](a, b, c, **lang_matmul.CONFIG),
                   # the Triton-style form: block tiles, staged and split by the compiler
                   "lang block": lambda: lang_matmul.matmul_block[lang_matmul.grid(size, size)](
                       a, b, c, arch="sm_80", **lang_matmul.CONFIG_BLOCK),  # mma.sync
                   # the tutorial's masks as written (K residue, C's edges): masked staged copies
                   "masked mma": lambda: lang_matmul.matmul_masked[lang_matmul.grid(size, size)](
                       a, b, c, size, size, size, arch="sm_80", **lang_matmul.CONFIG_BLOCK)}
        if hopper:
            # the same Triton-style kernel on sm_90a: the block's warpgroup MMAs on the staged tiles
            bcfg = lang_matmul.CONFIG_BLOCK_WGMMA
            kernels["block wgmma"] = lambda: lang_matmul.BLOCK_WGMMA[lang_matmul.grid(size, size, **bcfg)](
                a, b, c, arch="sm_90a", **bcfg)
            kernels["masked wgmma"] = lambda: lang_matmul.MASKED_WGMMA[lang_matmul.grid(size, size, **bcfg)](
                a, b, c, size, size, size, arch="sm_90a", **bcfg)
            cfg = lang_matmul.CONFIG_WGMMA
            kernels["lang wgmma"] = lambda: lang_matmul.matmul_wgmma[lang_matmul.grid(size, size, **cfg)](
                a, b, c, arch="sm_90a", **cfg)
            kernels["lang no-ws"] = lambda: no_ws[lang_matmul.grid(size, size, **cfg)](a, b, c, arch="sm_90a", **cfg)
            kernels["lang ws-sync"] = lambda: ws_sync[lang_matmul.grid(size, size, **cfg)](
                a, b, c, arch="sm_90a", pipeline=WS_SYNC, **cfg)
            # one block an SM looping over the tiles (examples/lang/matmul.py's matmul_persistent)
            blocks = lang_matmul.persistent_blocks(size, size, torch.cuda.get_device_properties(0).multi_processor_count,
                                                   **cfg)
            kernels["lang persist"] = lambda blocks=blocks: lang_matmul.matmul_persistent[(blocks,)](
                a, b, c, arch="sm_90a", **cfg)
        others = {"tilec": lambda: tilec.matmul(a, b, out=c2), "cuBLAS": lambda: torch.matmul(a, b),
                  "triton": lambda: triton_matmul.triton_matmul(a, b, c2)}
        flops = 2 * size ** 3
        theirs = {k: flops / time_ms(f, batches=20, batch=5) / 1e9 for k, f in others.items()}
        for name, run in kernels.items():
            c.fill_(float("nan"))
            run()
            err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
            ours = flops / time_ms(run, batches=20, batch=5) / 1e9
            out.append({"kernel": name, "size": size, "max_rel_error": err, "lang": round(ours, 1),
                        **{k: round(v, 1) for k, v in theirs.items()}})
            print(f"{name:>12} {size:>6} {ours:>7.0f} {theirs['tilec']:>7.0f} {theirs['cuBLAS']:>7.0f} "
                  f"{theirs['triton']:>7.0f} {ours / theirs['tilec']:>10.2f} {ours / theirs['cuBLAS']:>11.2f} "
                  f"{ours / theirs['triton']:>11.2f}  err {err:.1e}")
    return out


def attention_rows() -> list[dict]:
    """examples/lang/flash_attention.py (Triton's fused-attention structure, block tiles only) for the GPU's
    default arch (mma.sync) and, on sm_90, for sm_90a (the block's warpgroup MMAs), against
    ``tilec.attention``, torch SDPA's FlashAttention-2 and cuDNN backends and bench/'s Triton kernel, f16,
    B S = 16k tokens, H D = 2048; TFLOP/s = 4 B H S^2 D (halved for causal) / device time."""
    import math

    import triton_attention  # bench/triton_attention.py: the fused-attention tutorial's structure
    from torch.nn.attention import SDPBackend, sdpa_kernel

    hopper = torch.cuda.get_device_capability() == (9, 0)
    out = []
    print(f"{'attention':>16} {'lang':>7} {'sm_90a':>7} {'tilec':>7} {'FA2':>7} {'cuDNN':>7} {'triton':>7} "
          f"{'lang/FA2':>8} {'90a/cuDNN':>9} {'90a/triton':>10}  TFLOP/s")
    for d in (64, 128):
        for s, causal in ((4096, False), (4096, True), (16384, False)):
            b, h = 16384 // s, 2048 // d
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.float16) for _ in range(3))
            o = torch.full_like(q, float("nan"))
            flops = 4 * b * h * s * s * d / (2 if causal else 1)
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal).double()
            runs = {}
            for arch in ["sm_80"] + (["sm_90a"] if hopper else []):  # mma.sync (sm_80 PTX), wgmma
                kern, cfg = lang_attention.kernel_for(d, arch)
                runs["lang" if arch == "sm_80" else "sm_90a"] = lambda kern=kern, cfg=cfg, arch=arch: kern[
                    (-(-s // cfg["BM"]), b, h)](q, k, v, o, 1 / math.sqrt(d), D=d, CAUSAL=causal, arch=arch, **cfg)
            errs = {}
            for name, run in runs.items():
                o.fill_(float("nan"))
                run()
                errs[name] = ((o.double() - ref).abs().max() / ref.abs().max()).item()

            def sdpa(backend):
                def call():
                    with sdpa_kernel(backend):
                        F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                return call

            runs.update({"tilec": lambda: tilec.attention(q, k, v, causal=causal),
                         "FA2": sdpa(SDPBackend.FLASH_ATTENTION), "cuDNN": sdpa(SDPBackend.CUDNN_ATTENTION),
                         "triton": lambda: triton_attention.attention(q, k, v, causal=causal)})
            tf = {name: flops / time_ms(run, batches=10, batch=3) / 1e9 for name, run in runs.items()}
            ours = tf.get("sm_90a", float("nan"))
            out.append({"d": d, "s": s, "causal": causal, "max_rel_error": errs, **{k: round(x, 1) for k, x in tf.items()}})
            label = f"d{d} s{s}{' causal' if causal else ''}"
            print(f"{label:>16} {tf['lang']:>7.0f} {ours:>7.0f} {tf['tilec']:>7.0f} {tf['FA2']:>7.0f} "
                  f"{tf['cuDNN']:>7.0f} {tf['triton']:>7.0f} {tf['lang'] / tf['FA2']:>8.2f} "
                  f"{ours / tf['cuDNN']:>9.2f} {ours / tf['triton']:>10.2f}  err "
                  + ", ".join(f"{k} {e:.1e}" for k, e in errs.items()))
    return out


if __name__ == "__main__":
    main()
