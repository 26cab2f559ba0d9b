"""On-disk cache of compiled cubins.

Why: turning PTX into a cubin costs 0.1 s to seconds per kernel, and the same
kernel is compiled again in every process.  A cubin is stored under a sha256
key over everything that could change it (IR text, pipeline and options,
arch, the versions of tilec/xdsl/llvmlite, and the compiler: driver version
or the ptxas binary), so any change is a miss and a stale cubin is never used.
Writes go to a temporary file in the same folder and are published with
``os.replace``, so concurrent writers (threads or processes) can never leave
a torn file behind.  Hit/miss/compile counters make reuse observable.

Faults: the cache only saves time, so nothing found in it may break a
compile.  A cubin file holds the bare ELF image; its sha256 is kept in
``sha256/<key[:2]>/<key>.sha256``, written after it, and a cubin whose bytes
do not match (truncated, damaged, another's) is a miss that the rebuilt one
replaces; one without a checksum (an older tilec, a store cut short) is a
miss too.  Only trusted files are read (:func:`read_file`): regular files of
this user that no one else can write, in folders, from the cache folder
down, that are this user's and that no one else can write (unless sticky);
anything else is skipped with a :class:`CacheWarning`.  A folder where a file
belongs is removed if empty.  New folders are made 0700 and files 0600.  A
cache that cannot be written (read-only, full, untrusted) costs the caching
only, with one warning per cache folder per process (:func:`write_file`).
"""

from __future__ import annotations

import errno
import hashlib
import importlib.util
import json
import os
import stat
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Mapping

KEY_FORMAT = 1
_ELF_MAGIC = b"\x7fELF"

SUMS = "sha256"
"""Subfolder of the cubins' checksums: ``sha256/<key[:2]>/<key>.sha256`` (the cubin file stays a bare ELF image)."""


_MODULE_OF = {"tilec": "tilec", "xdsl": "xdsl", "llvmlite": "llvmlite", "cuda-bindings": "cuda.bindings"}


def _version_of(dist: str) -> str:
    # An imported package's own __version__ first, then the name of its wheel's .dist-info
    # folder: importlib.metadata scans sys.path, about 4 ms a package on the first (warm-cache)
    # compile of a process, which imports neither llvmlite nor cuda-python.
    name = _MODULE_OF.get(dist, dist)
    version = getattr(sys.modules.get(name), "__version__", None)
    if isinstance(version, str) and version:
        return version
    version = _wheel_version(dist, name)
    if version:
        return version
    from importlib import metadata  # lazy: saves ~8 ms of import time (it imports email, socket ...)

    try:
        return metadata.version(dist)
    except Exception:
        return "unknown"


def _wheel_version(dist: str, module: str) -> str | None:
    """The version in ``<dist>-<version>.dist-info`` beside ``module``'s package (how a wheel
    installs it, the name's dashes as underscores): a few stat calls, without importing it. None
    where there is not exactly one such folder (an editable install, a source tree)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith("__init__.py"):
        return None
    site = Path(spec.origin).parents[module.count(".") + 1]
    prefix = dist.replace("-", "_") + "-"
    found = [p.name for p in site.glob(prefix + "*.dist-info")]
    if len(found) != 1:
        return None
    return found[0][len(prefix):-len(".dist-info")] or None


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

    The bytes go to a temporary file (mode 0600) in the same folder (made if
    needed, 0700), which ``os.replace`` then publishes; concurrent writers of
    the same path leave one complete file. ``fsync`` also flushes it to disk first.
    """
    make_private_dirs(path.parent)
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


def make_private_dirs(folder: Path) -> None:
    """``mkdir -p`` that gives every folder it makes mode 0700.

    Why not ``os.makedirs(mode=0o700)``: it gives that mode to the last folder
    only, the ones above it get the umask's (often 0755).
    """
    if folder.is_dir():
        return
    if folder.parent != folder:
        make_private_dirs(folder.parent)
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        if not folder.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, f"{folder} is not a folder", str(folder)) from None


# ---------------------------------------------------------------- faults and trust


class CacheWarning(UserWarning):
    """A cache file was skipped (damaged, not a file, not trusted) or the cache could not be written."""


_warned: set[object] = set()
_warned_lock = threading.Lock()


def warn_once(message: str, topic: object = None) -> None:
    """Warn once per process per ``topic`` (default: the message): a broken cache is told, not at every compile."""
    topic = message if topic is None else topic
    with _warned_lock:
        if topic in _warned:
            return
        _warned.add(topic)
    warnings.warn(f"tilec cache: {message}", CacheWarning, stacklevel=3)


def owner_uid(st: os.stat_result) -> int:
    """The user owning a cache file or folder: the one place ownership is read (tests play another user here)."""
    return st.st_uid


def _distrust(st: os.stat_result, *, folder: bool) -> str | None:
    """Why a file or folder must not be trusted (another user's, or others can write it), else None.

    A sticky folder others can write is fine: they cannot rename or remove
    our files in it, and the files they add are theirs (so not trusted).
    """
    if not hasattr(os, "geteuid"):
        return None  # no POSIX owners (Windows)
    me, uid = os.geteuid(), owner_uid(st)
    if uid != me:
        return f"it is owned by uid {uid}, not by you (uid {me})"
    if st.st_mode & 0o022 and not (folder and st.st_mode & stat.S_ISVTX):
        return f"other users can write to it (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _folder_problem(root: Path, folder: Path) -> str | None:
    """Why ``folder`` or one above it, up to the cache folder ``root``, is not trusted, else None.

    A missing folder is no problem: there is nothing in it, and it is made 0700.
    """
    parts = folder.relative_to(root).parts
    for depth in range(len(parts) + 1):
        here = root.joinpath(*parts[:depth])
        try:
            st = os.stat(here)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None  # reading or writing below it fails, and says so
        why = _distrust(st, folder=True)
        if why:
            return f"not using {here}: {why}"
    return None


_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0))
"""No following a link, no waiting on a pipe: whatever sits at an entry's path, opening it returns at once."""


def read_file(root: Path, path: Path) -> bytes | None:
    """The bytes of the cache file ``path`` (under the cache folder ``root``), or None.

    None, silently, when it is missing; None with a :class:`CacheWarning` when
    it is not to be trusted (see :func:`_distrust`: its folders, or the file)
    or not a regular file (a folder, a link, a pipe) or cannot be read.
    """
    problem = _folder_problem(root, path.parent)
    if problem:
        warn_once(problem)
        return None
    try:
        fd = os.open(path, _READ_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        why = "it is a symbolic link" if e.errno == errno.ELOOP else (e.strerror or str(e))
        warn_once(f"skipping {path}: {why}")
        return None
    try:
        st = os.fstat(fd)
        why = _distrust(st, folder=False) if stat.S_ISREG(st.st_mode) else "it is not a regular file"
        if why:
            warn_once(f"skipping {path}: {why}")
            return None
        with open(fd, "rb", closefd=False) as f:
            return f.read()
    except OSError as e:
        warn_once(f"skipping {path}: {e.strerror or e}")
        return None
    finally:
        os.close(fd)


def write_file(root: Path, path: Path, data: bytes, *, fsync: bool = True) -> bool:
    """Publish ``data`` at ``path`` (under the cache folder ``root``) with :func:`atomic_write`.

    False, with a warning (once per process for an unwritable ``root``), when
    it cannot be: a read-only, full or untrusted cache costs the caching,
    never the compile.
    """
    problem = _folder_problem(root, path.parent)
    if problem:
        warn_once(problem)
        return False
    if not _clear_the_way(path):
        return False
    try:
        atomic_write(path, data, fsync=fsync)
    except OSError as e:
        warn_once(f"cannot write to {root} ({e.strerror or e}): compiling without caching", ("unwritable", root))
        return False
    return True


def _clear_the_way(path: Path) -> bool:
    """Remove an empty folder at ``path``, where a file is to be published (``os.replace`` cannot replace it).

    False, with a warning, when there is a folder with something in it:
    emptying it is not the cache's business.  Links and pipes need nothing:
    ``os.replace`` replaces them.
    """
    try:
        st = os.lstat(path)
    except OSError:
        return True  # nothing there (whatever else is wrong, the write tells)
    if not stat.S_ISDIR(st.st_mode):
        return True
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        warn_once(f"cannot replace the folder {path} with a file ({e.strerror or e}): not cached")
        return False
    return True


def discard(path: Path) -> None:
    """Remove a cache file that cannot be used (another process may have removed it first)."""
    try:
        path.unlink()
    except OSError:
        pass


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
    """A folder of ``<key[:2]>/<key>.cubin`` files and their ``sha256/<key[:2]>/<key>.sha256``.

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

    def sum_path(self, key: str) -> Path:
        """Where the sha256 of the cubin of ``key`` is kept (a separate file: the cubin stays a bare ELF image)."""
        return self.directory / SUMS / key[:2] / f"{key}.sha256"

    def load(self, key: str) -> bytes | None:
        """The cached cubin, or None; counts a hit or a miss.

        A file that is not an ELF image (damaged by something outside us)
        is removed; one whose sha256 is missing or differs is left for the
        rebuilt cubin to replace.  Either is a miss, as is an untrusted one
        (:func:`read_file`).
        """
        path = self.path_for(key)
        data = read_file(self.directory, path)
        if data is not None and not data.startswith(_ELF_MAGIC):
            warn_once(f"{path} is not a cubin: removed, compiled again")
            discard(path)
            data = None
        if data is not None and not self._checks_out(key, data, path):
            data = None
        self._count("misses" if data is None else "hits")
        return data

    def _checks_out(self, key: str, data: bytes, path: Path) -> bool:
        """Whether ``data`` has the sha256 stored for ``key`` (a miss, silently, when none is stored).

        Not removed when it differs: a concurrent store may be between its
        two writes; the next store replaces both.
        """
        recorded = read_file(self.directory, self.sum_path(key))
        if recorded is None:
            return False
        if recorded.strip() != hashlib.sha256(data).hexdigest().encode():
            warn_once(f"{path} is damaged (its sha256 differs from the one stored): compiled again")
            return False
        return True

    def store(self, key: str, data: bytes) -> Path | None:
        """Publish ``data`` under ``key`` atomically (temp file + ``os.replace``), then its sha256.

        Returns the cubin's path, or None when the cache cannot be written
        (a :class:`CacheWarning` says why; never an exception).
        """
        path = self.path_for(key)
        if not write_file(self.directory, path, data):
            return None
        if not write_file(self.directory, self.sum_path(key), hashlib.sha256(data).hexdigest().encode()):
            return None
        return path

    def get_or_build(self, key: str, build: Callable[[], bytes]) -> bytes:
        """Return the cached cubin for ``key``, building and storing it on a miss."""
        data = self.load(key)
        if data is not None:
            return data
        data = build()
        self._count("compiles")
        self.store(key, data)  # an unwritable cache must not break compilation: it warns
        return data

    def clear(self) -> None:
        """Remove every cached cubin, its checksum (and stray temporary files)."""
        remove_entries(self.directory, (".cubin", ".tmp"))
        remove_entries(self.directory / SUMS, (".sha256", ".tmp"))


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
