"""Assembling PTX with NVIDIA's `ptxas`: the check that our PTX is real.

LLVM happily prints PTX that ptxas rejects (wrong ISA version for an arch,
a bad operand), so tests assemble every PTX they produce, and benchmarks read
register and spill counts from `ptxas -v`. ptxas is `$TILEC_PTXAS` when that
is set, else looked up on PATH, then in the `nvidia-cuda-nvcc` wheel
(`nvidia/cu13/bin/ptxas`), then under `$CUDA_HOME/bin`; `tilec.runtime`
builds its cubins with the same one.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tilec.codegen.arch import check_arch


class PtxasNotFoundError(FileNotFoundError):
    """No ptxas executable could be found."""


class PtxasError(RuntimeError):
    """ptxas rejected the PTX; the message carries ptxas's own output."""


def _wheel_ptxas() -> Path | None:
    """ptxas shipped inside the `nvidia-cuda-nvcc` wheel, if installed."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        for candidate in sorted(Path(root).glob("cu*/bin/ptxas"), reverse=True):
            if os.access(candidate, os.X_OK):
                return candidate
        legacy = Path(root) / "cuda_nvcc" / "bin" / "ptxas"
        if os.access(legacy, os.X_OK):
            return legacy
    return None


PTXAS_ENV = "TILEC_PTXAS"
"""Environment variable naming the ptxas to use (none, if it is not executable)."""


def find_ptxas() -> Path | None:
    """The ptxas to use (`$TILEC_PTXAS`, else PATH, then the nvcc wheel, then `$CUDA_HOME/bin`), or None."""
    chosen = os.environ.get(PTXAS_ENV)
    if chosen:
        return Path(chosen) if os.access(chosen, os.X_OK) else None
    on_path = shutil.which("ptxas")
    if on_path:
        return Path(on_path)
    wheel = _wheel_ptxas()
    if wheel is not None:
        return wheel
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if cuda_home:
        candidate = Path(cuda_home) / "bin" / "ptxas"
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def _require_ptxas(ptxas: Path | str | None) -> Path:
    found = Path(ptxas) if ptxas is not None else find_ptxas()
    if found is None:
        raise PtxasNotFoundError(
            "ptxas not found on PATH, in the nvidia-cuda-nvcc wheel or under "
            "$CUDA_HOME/bin (or $TILEC_PTXAS is not executable); install the "
            "test extra (pip install 'nvidia-cuda-nvcc>=13')"
        )
    return found


def _run_ptxas(
    ptx_text: str, arch: str, extra: list[str], ptxas: Path | str | None
) -> tuple[bytes, str]:
    """Assemble; return the cubin and ptxas's combined output."""
    check_arch(arch)
    exe = _require_ptxas(ptxas)
    with tempfile.TemporaryDirectory(prefix="tilec-ptxas-") as tmp:
        source = Path(tmp) / "kernel.ptx"
        cubin = Path(tmp) / "kernel.cubin"
        source.write_text(ptx_text)
        done = subprocess.run(
            [str(exe), f"-arch={arch}", *extra, "-o", str(cubin), str(source)],
            capture_output=True,
            text=True,
            check=False,
        )
        output = (done.stdout + done.stderr).strip()
        if done.returncode != 0:
            raise PtxasError(
                f"ptxas -arch={arch} failed (exit {done.returncode}):\n{output}"
            )
        return cubin.read_bytes(), output


def assemble(ptx_text: str, arch: str, *, ptxas: Path | str | None = None) -> bytes:
    """The cubin of `ptx_text` for `arch`; raises PtxasError with ptxas's message."""
    return _run_ptxas(ptx_text, arch, [], ptxas)[0]


@dataclass(frozen=True)
class KernelResources:
    """What `ptxas -v` reports for one function."""

    registers: int
    spill_stores: int
    spill_loads: int
    stack_frame: int
    shared_bytes: int


_FUNCTION = re.compile(
    r"(?:Compiling entry function|Function properties for) '?([\w$.]+)'?"
)
_FRAME = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads"
)
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_resources(ptxas_output: str) -> dict[str, KernelResources]:
    """Per-function resources from the text of `ptxas -v`."""
    fields: dict[str, dict[str, int]] = {}
    current: str | None = None
    for line in ptxas_output.splitlines():
        if (m := _FUNCTION.search(line)) is not None:
            current = m.group(1)
            fields.setdefault(current, {})
        if current is None:
            continue
        if (m := _FRAME.search(line)) is not None:
            frame, stores, loads = (int(g) for g in m.groups())
            fields[current] |= {"stack_frame": frame, "spill_stores": stores,
                                "spill_loads": loads}
        if (m := _USED.search(line)) is not None:
            fields[current]["registers"] = int(m.group(1))
            smem = _SMEM.search(line)
            fields[current]["shared_bytes"] = int(smem.group(1)) if smem else 0
    return {
        name: KernelResources(
            registers=f.get("registers", 0),
            spill_stores=f.get("spill_stores", 0),
            spill_loads=f.get("spill_loads", 0),
            stack_frame=f.get("stack_frame", 0),
            shared_bytes=f.get("shared_bytes", 0),
        )
        for name, f in fields.items()
    }


def kernel_resources(
    ptx_text: str, arch: str, *, ptxas: Path | str | None = None
) -> dict[str, KernelResources]:
    """Registers, spills, stack and static shared memory of each function, by name."""
    return parse_resources(_run_ptxas(ptx_text, arch, ["-v"], ptxas)[1])
