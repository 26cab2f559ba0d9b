"""On-disk cache of compiled cubins.

Why: turning PTX into a cubin costs 0.1 s to seconds per kernel, and the same
kernel is compiled again in every process.  A cubin is stored under a sha256
key over everything that could change it (IR text, pipeline and options,
arch, the versions of tilec/xdsl/llvmlite, and the compiler: driver version
or the ptxas binary), so any change is a miss and a stale cubin is never used.
Writes go to a temporary file in the same folder and are published with
``os.replace``, so concurrent writers (threads or processes) can never leave
a torn file behind.  Hit/miss/compile counters make reuse observable.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import threading
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Callable, Mapping

KEY_FORMAT = 1
_ELF_MAGIC = b"\x7fELF"


_MODULE_OF = {"tilec": "tilec", "xdsl": "xdsl", "llvmlite": "llvmlite", "cuda-bindings": "cuda.bindings"}


def _version_of(dist: str) -> str:
    # An imported package's own __version__ first: importlib.metadata scans sys.path,
    # a few milliseconds per package on the first (warm-cache) compile of a process.
    module = sys.modules.get(_MODULE_OF.get(dist, dist))
    version = getattr(module, "__version__", None)
    if isinstance(version, str) and version:
        return version
    try:
        return metadata.version(dist)
    except Exception:
        return "unknown"


def tool_versions() -> dict[str, str]:
    """Versions of the packages whose change must invalidate cached cubins."""
    return dict(_tool_versions())


@lru_cache(maxsize=1)
def _tool_versions() -> tuple[tuple[str, str], ...]:
    # looked up once per process: importlib.metadata scans sys.path (milliseconds per package)
    return tuple((name, _version_of(name)) for name in ("tilec", "xdsl", "llvmlite", "cuda-bindings"))


def cache_key(*, ir: str | bytes, pipeline: str, arch: str, compiler: str,
              extra: Mapping[str, object] | None = None,
              versions: Mapping[str, str] | None = None) -> str:
    """sha256 hex key over (IR, pipeline+options, arch, versions, compiler, extra)."""
    if isinstance(ir, bytes):
        ir = ir.decode("utf-8", errors="surrogateescape")
    payload = {
        "format": KEY_FORMAT,
        "ir": ir,
        "pipeline": pipeline,
        "arch": arch,
        "compiler": compiler,
        "versions": dict(sorted((versions if versions is not None else tool_versions()).items())),
        "extra": {str(k): repr(v) for k, v in sorted((extra or {}).items())},
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8", errors="surrogateescape")
    return hashlib.sha256(blob).hexdigest()


def atomic_write(path: Path, data: bytes, *, fsync: bool = True) -> None:
    """Write ``data`` to ``path`` so that no reader ever sees a partial file.

    The bytes go to a temporary file in the same folder (created if needed),
    which ``os.replace`` then publishes; concurrent writers of the same path
    leave one complete file. ``fsync`` also flushes it to disk first.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:16]}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def default_directory() -> Path:
    """``$TILEC_CACHE_DIR``, else ``~/.cache/tilec`` (read at each call)."""
    env = os.environ.get("TILEC_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "tilec"


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    compiles: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "compiles": self.compiles}


class CubinCache:
    """A folder of ``<key[:2]>/<key>.cubin`` files.

    ``directory=None`` follows :func:`default_directory` at every access, so
    setting ``TILEC_CACHE_DIR`` (e.g. in a test) redirects it.
    """

    def __init__(self, directory: str | os.PathLike | None = None):
        self._directory = Path(directory) if directory is not None else None
        self.stats = CacheStats()
        self._lock = threading.Lock()

    @property
    def directory(self) -> Path:
        return self._directory if self._directory is not None else default_directory()

    def path_for(self, key: str) -> Path:
        if len(key) < 3 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.directory / key[:2] / f"{key}.cubin"

    def _count(self, field: str) -> None:
        with self._lock:
            setattr(self.stats, field, getattr(self.stats, field) + 1)

    def reset_stats(self) -> None:
        with self._lock:
            self.stats = CacheStats()

    def load(self, key: str) -> bytes | None:
        """The cached cubin, or None; counts a hit or a miss.

        A file that is not an ELF image (damaged by something outside us)
        is removed and counts as a miss.
        """
        path = self.path_for(key)
        try:
            data = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            self._count("misses")
            return None
        if not data.startswith(_ELF_MAGIC):
            try:
                path.unlink()
            except OSError:
                pass
            self._count("misses")
            return None
        self._count("hits")
        return data

    def store(self, key: str, data: bytes) -> Path:
        """Publish ``data`` under ``key`` atomically (temp file + ``os.replace``)."""
        path = self.path_for(key)
        atomic_write(path, data)
        return path

    def get_or_build(self, key: str, build: Callable[[], bytes]) -> bytes:
        """Return the cached cubin for ``key``, building and storing it on a miss."""
        data = self.load(key)
        if data is not None:
            return data
        data = build()
        self._count("compiles")
        try:
            self.store(key, data)
        except OSError:
            pass  # an unwritable cache must not break compilation
        return data

    def clear(self) -> None:
        """Remove every cached cubin (and stray temporary files)."""
        remove_entries(self.directory, (".cubin", ".tmp"))


def remove_entries(root: Path, suffixes: tuple[str, ...]) -> None:
    """Delete the files ending in ``suffixes`` of a cache laid out as ``root/<2 hex>/<key><suffix>``."""
    if not root.is_dir():
        return
    for sub in root.iterdir():
        if sub.is_dir() and len(sub.name) == 2:
            for f in sub.iterdir():
                if f.suffix in suffixes:
                    try:
                        f.unlink()
                    except OSError:
                        pass  # another process removed it, or it is not ours to remove


_default: CubinCache | None = None


def default_cache() -> CubinCache:
    """The process-wide cache (its folder follows ``TILEC_CACHE_DIR``)."""
    global _default
    if _default is None:
        _default = CubinCache()
    return _default
