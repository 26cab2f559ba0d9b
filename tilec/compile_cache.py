"""On-disk cache of :func:`tilec.compile` results: a warm compile reads one file.

Why: compiling a GEMM runs every pass and LLVM (about a second); the same
source is compiled again in every process (``tilec.matmul`` compiles its
kernels on first use). An entry holds everything a
:class:`~tilec.api.CompiledKernel` is made of except the cubin, which the
cubin cache (:mod:`tilec.runtime.cache`) keeps under its own key: the name,
the LLVM IR and PTX texts, the launch signature, the gl parameters, the
``#tile.launch`` defaults and the pipeline that ran (with every option; it
is part of the cubin's key).

The key is a sha256 over the source IR text as given (a ModuleOp: its
printed form), the pipeline (every option of every pass spelled out, so the
same passes given as text or as objects are one key; ``auto`` when
:func:`tilec.compile` chose it from the IR), the arch, the LLVM opt level, the kernel
name asked for, and a fingerprint of the compiler itself: the path, size and
modification time of every ``.py`` file of the ``tilec`` package (once per
process, a millisecond) and the xDSL and llvmlite versions. Any change of either is a
miss, so a stale entry is never used.

Entries live next to the cubins, ``<cache dir>/kernels/<key[:2]>/<key>.json``
(the cache dir is ``$TILEC_CACHE_DIR``, else ``~/.cache/tilec``), written to
a temporary file and published with ``os.replace``, so readers never see a
torn file. An entry is a ``sha256 <hex>`` line, the checksum of the JSON
that follows it, so an entry damaged or edited after it was written (a
truncated file, a changed PTX text) is caught before it is used. One that
cannot be read back (damaged, another format, a different key inside) is
removed with a :class:`~tilec.runtime.cache.CacheWarning` and counts as a
miss: the kernel is compiled again. Untrusted files and folders (another
user's, writable by others), a folder where an entry belongs, and a cache
that cannot be written are handled as in :mod:`tilec.runtime.cache`: a
miss, or no caching, never an exception. ``TILEC_COMPILE_CACHE=0`` turns
this cache off (the cubin cache stays on); ``tilec.compile(..., cache=False)``
turns both off.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from tilec.dialects.abi import GlParam
from tilec.runtime import LaunchDefaults, Param
from tilec.runtime.cache import (
    CacheStats,
    default_directory,
    discard,
    read_file,
    remove_entries,
    tool_versions,
    warn_once,
    write_file,
)

FORMAT = 3
"""Version of the entry format (part of the key). 2: entries hold the pipeline; 3: a sha256 line first."""

ENV = "TILEC_COMPILE_CACHE"
"""``0`` (or ``false``/``no``/``off``) disables the compile cache."""

SUBDIR = "kernels"


def enabled_by_env() -> bool:
    """False when ``$TILEC_COMPILE_CACHE`` turns the compile cache off (read at each call)."""
    return os.environ.get(ENV, "").strip().lower() not in ("0", "false", "no", "off")


@lru_cache(maxsize=1)
def compiler_fingerprint() -> str:
    """What a compile's result depends on besides its inputs: tilec's own sources
    (:func:`sources_fingerprint`) and the versions of xDSL and llvmlite."""
    versions = tool_versions()
    h = hashlib.sha256(sources_fingerprint(Path(__file__).resolve().parent).encode())
    h.update(f"xdsl={versions['xdsl']} llvmlite={versions['llvmlite']}".encode())
    return h.hexdigest()


def sources_fingerprint(root: Path) -> str:
    """sha256 over the relative path, size and modification time of every ``.py`` under ``root``.

    Like Python's own ``.pyc`` check, an edit changes the size or the time: stat-ing the
    ninety-odd files costs a millisecond, reading and hashing their bytes cost 6-10 ms of
    every cold compile.
    """
    files: list[str] = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        files += [os.path.join(folder, n) for n in names if n.endswith(".py")]
    h = hashlib.sha256()
    for path in sorted(files):
        st = os.stat(path)
        h.update(f"{os.path.relpath(path, root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def compile_key(*, source: str, pipeline: str, arch: str, opt_level: int, kernel: str | None) -> str:
    """The sha256 hex key of one :func:`tilec.compile` call."""
    header = json.dumps({"format": FORMAT, "pipeline": pipeline, "arch": arch, "opt_level": opt_level,
                         "kernel": kernel, "compiler": compiler_fingerprint()}, sort_keys=True)
    h = hashlib.sha256(header.encode())
    h.update(b"\0")
    h.update(source.encode("utf-8", errors="surrogateescape"))
    return h.hexdigest()


# ---------------------------------------------------------------- entries


def encode(key: str, *, name: str, asm: dict[str, Any], signature, launch, gl_params, pipeline: str) -> bytes:
    """The JSON bytes of one entry (``asm``: its ``llvm`` and ``ptx`` texts are kept)."""
    entry = {
        "format": FORMAT,
        "key": key,
        "name": name,
        "pipeline": pipeline,
        "llvm": asm["llvm"],
        "ptx": asm["ptx"],
        "signature": [{f.name: getattr(p, f.name) for f in fields(p)} for p in signature],
        "launch": {f.name: getattr(launch, f.name) for f in fields(launch)},
        "gl_params": [{f.name: getattr(g, f.name) for f in fields(g)} for g in gl_params],
    }
    return seal(json.dumps(entry, ensure_ascii=False).encode("utf-8", errors="surrogateescape"))


def seal(body: bytes) -> bytes:
    """``sha256 <hex of body>``, a newline, then ``body``: what a reader checks before trusting the rest."""
    return b"sha256 " + hashlib.sha256(body).hexdigest().encode() + b"\n" + body


def unseal(data: bytes) -> bytes:
    """The body of a :func:`seal`\\ ed entry; ValueError when the checksum line is missing or does not match."""
    head, newline, body = data.partition(b"\n")
    if not newline or head != b"sha256 " + hashlib.sha256(body).hexdigest().encode():
        raise ValueError("damaged entry: its sha256 does not match")
    return body


def _tuples(value: Any) -> Any:
    """JSON's lists back to the tuples they were written from (the dataclasses hold tuples)."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def _fields(record: dict[str, Any]) -> dict[str, Any]:
    return {name: _tuples(value) for name, value in record.items()}


def decode(data: bytes, key: str) -> dict[str, Any]:
    """The fields of a :class:`~tilec.api.CompiledKernel` (but the source text and caches) from an entry.

    Raises ValueError (or KeyError/TypeError) if the entry is not one this
    version wrote for ``key``, or was changed since (its checksum).
    """
    entry = json.loads(unseal(data).decode("utf-8", errors="surrogateescape"))
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != key:
        raise ValueError("not an entry of this format for this key")
    if not all(isinstance(entry[k], str) for k in ("ptx", "llvm", "name", "pipeline")):
        raise ValueError("damaged entry")
    return {
        "name": entry["name"],
        "pipeline": entry["pipeline"],
        "llvm": entry["llvm"],
        "ptx": entry["ptx"],
        "signature": tuple(Param(**_fields(p)) for p in entry["signature"]),
        "launch": LaunchDefaults(**_fields(entry["launch"])),
        "gl_params": tuple(GlParam(**_fields(g)) for g in entry["gl_params"]),
    }


# ---------------------------------------------------------------- the folder


_stats = CacheStats()
_stats_lock = threading.Lock()


def stats() -> CacheStats:
    """Process-wide counts: ``hits``, ``misses``, ``compiles`` (entries stored)."""
    return _stats


def reset_stats() -> None:
    with _stats_lock:
        _stats.hits = _stats.misses = _stats.compiles = 0


def _count(field: str) -> None:
    with _stats_lock:
        setattr(_stats, field, getattr(_stats, field) + 1)


class CompileCache:
    """A folder of ``kernels/<key[:2]>/<key>.json`` entries under a cache directory.

    ``directory=None`` follows ``$TILEC_CACHE_DIR`` (else ``~/.cache/tilec``)
    at every access, like the default cubin cache.
    """

    def __init__(self, directory: str | os.PathLike | None = None):
        self._directory = Path(directory) if directory is not None else None

    @property
    def root(self) -> Path:
        """The cache folder (shared with the cubins): trust is checked from here down."""
        return self._directory if self._directory is not None else default_directory()

    @property
    def directory(self) -> Path:
        return self.root / SUBDIR

    def path_for(self, key: str) -> Path:
        if len(key) < 3 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.directory / key[:2] / f"{key}.json"

    def load(self, key: str) -> dict[str, Any] | None:
        """The decoded entry (see :func:`decode`), or None; a damaged entry is removed, with a warning."""
        path = self.path_for(key)
        data = read_file(self.root, path)
        if data is None:
            _count("misses")
            return None
        try:
            entry = decode(data, key)
        except Exception as e:  # whatever is in the file, the caller compiles instead
            warn_once(f"{path} is damaged or not an entry of this tilec ({e}): removed, compiled again")
            discard(path)
            _count("misses")
            return None
        _count("hits")
        return entry

    def store(self, key: str, data: bytes) -> None:
        """Publish an :func:`encode`\\ d entry; an unwritable or untrusted folder is a warning, not an error."""
        if write_file(self.root, self.path_for(key), data, fsync=False):
            _count("compiles")

    def clear(self) -> None:
        """Remove every entry (and stray temporary files)."""
        remove_entries(self.directory, (".json", ".tmp"))


__all__ = ["ENV", "FORMAT", "CompileCache", "compile_key", "compiler_fingerprint", "decode", "encode",
           "enabled_by_env", "reset_stats", "seal", "stats", "unseal"]
