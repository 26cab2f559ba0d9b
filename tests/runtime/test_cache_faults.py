"""Faults in the on-disk caches (cubins, and the compile cache's entries): none reaches the caller.

Damaged, truncated or foreign files, folders where files belong, unwritable
folders, files and folders of another user or that others can write, and
processes storing the same entry at once. No GPU: fake cubins, and ptxas
where it is installed.
"""

from __future__ import annotations

import errno
import hashlib
import multiprocessing as mp
import os
import stat
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tilec.compile_cache import CompileCache, encode
from tilec.runtime import CubinCache, Kernel, LaunchDefaults, cache_key, find_ptxas
from tilec.runtime import cache as runtime_cache
from tilec.runtime.cache import CacheWarning

from runtime_kernels import AXPY_PTX, AXPY_SIGNATURE

CUBIN = b"\x7fELF" + bytes(range(256)) * (1 << 10)  # 256 KiB: a write takes long enough to be caught half-done
KEY = cache_key(ir="tile.func @k() {}", pipeline="tile-to-llvm", arch="sm_90", compiler="driver-jit/13000")
OTHER_KEY = cache_key(ir="tile.func @k() {}", pipeline="tile-to-llvm", arch="sm_80", compiler="driver-jit/13000")
ENTRY_KEY = "ab" * 32
PTX = "// ptx\n" * 1000
ENTRY = encode(ENTRY_KEY, name="k", asm={"llvm": "; llvm", "ptx": PTX}, signature=(),
               launch=LaunchDefaults((1, 1, 1), (32, 1, 1), 0, 0, False), gl_params=(), pipeline="tile-to-llvm")

needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="ptxas not found (PATH or nvidia-cuda-nvcc wheel)")


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees its own once-per-process warnings."""
    monkeypatch.setattr(runtime_cache, "_warned", set())


class Builds:
    """A build function that counts its calls."""

    def __init__(self, data: bytes = CUBIN):
        self.data, self.calls = data, 0

    def __call__(self) -> bytes:
        self.calls += 1
        return self.data


def stored(root: Path) -> CubinCache:
    cache = CubinCache(root)
    assert cache.store(KEY, CUBIN) == cache.path_for(KEY)
    cache.reset_stats()
    return cache


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@contextmanager
def no_cache_warnings() -> Iterator[None]:
    """A block in which a CacheWarning is an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        yield


# ---------------------------------------------------------------- checksums


def test_a_cubin_is_stored_private_with_its_sha256(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        cache = CubinCache(tmp_path / "a" / "cache")
        cache.store(KEY, CUBIN)
    finally:
        os.umask(old)
    path, digest = cache.path_for(KEY), cache.sum_path(KEY)
    assert path.read_bytes() == CUBIN  # the bare image: a cubin file is still a cubin
    assert digest.read_bytes() == hashlib.sha256(CUBIN).hexdigest().encode()
    assert mode(path) == mode(digest) == 0o600
    for folder in (path.parent, digest.parent, digest.parent.parent, cache.directory, tmp_path / "a"):
        assert mode(folder) == 0o700, folder


def damage(cache: CubinCache, how: str) -> None:
    path = cache.path_for(KEY)
    if how == "truncated to 100 bytes":
        path.write_bytes(CUBIN[:100])
    elif how == "ELF magic, then garbage":
        path.write_bytes(b"\x7fELF" + os.urandom(len(CUBIN) - 4))
    elif how == "one byte changed":
        path.write_bytes(CUBIN[:5000] + b"\x00" + CUBIN[5001:])
    elif how == "another key's cubin":
        other = CubinCache(cache.directory / "elsewhere")
        other.store(OTHER_KEY, b"\x7fELF another")
        os.replace(other.path_for(OTHER_KEY), path)
    elif how == "its sha256 damaged":
        cache.sum_path(KEY).write_bytes(b"0" * 64)
    else:
        assert how == "not a cubin"
        path.write_bytes(b"")


@pytest.mark.parametrize("how", ["truncated to 100 bytes", "ELF magic, then garbage", "one byte changed",
                                 "another key's cubin", "its sha256 damaged", "not a cubin"])
def test_a_damaged_cubin_is_rebuilt_and_replaced(tmp_path: Path, how: str) -> None:
    cache = stored(tmp_path)
    damage(cache, how)
    build = Builds()
    with pytest.warns(CacheWarning, match="is damaged|is not a cubin"):
        assert cache.get_or_build(KEY, build) == CUBIN
    assert build.calls == 1 and cache.stats.as_dict() == {"hits": 0, "misses": 1, "compiles": 1}
    assert cache.path_for(KEY).read_bytes() == CUBIN
    assert CubinCache(tmp_path).load(KEY) == CUBIN


def test_a_cubin_without_its_sha256_is_a_quiet_miss(tmp_path: Path) -> None:
    """Written by a tilec before checksums, or a store cut short between its two writes: nothing is wrong."""
    cache = stored(tmp_path)
    cache.sum_path(KEY).unlink()
    with no_cache_warnings():
        assert cache.load(KEY) is None
        assert cache.get_or_build(KEY, Builds()) == CUBIN
        assert cache.load(KEY) == CUBIN
    assert cache.stats.as_dict() == {"hits": 1, "misses": 2, "compiles": 1}


@needs_ptxas
def test_a_truncated_ptxas_cubin_is_built_again(tmp_path: Path) -> None:
    """Before checksums, a cubin cut to 100 bytes was served as a hit at every run."""
    cache = CubinCache(tmp_path)
    first = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE, backend="ptxas", cache=cache).cubin(arch="sm_80")
    (path,) = tmp_path.glob("*/*.cubin")
    path.write_bytes(first[:100])
    with pytest.warns(CacheWarning, match="is damaged"):
        again = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE, backend="ptxas", cache=cache).cubin(arch="sm_80")
    assert again == first and path.read_bytes() == first
    assert cache.stats.as_dict() == {"hits": 0, "misses": 2, "compiles": 2}


# ---------------------------------------------------------------- not a file


def put(path: Path, what: str, tmp_path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    if what == "an empty folder":
        path.mkdir()
    elif what == "a folder with files":
        (path / "inside").mkdir(parents=True)
    elif what == "a pipe":
        os.mkfifo(path)
    else:
        assert what == "a link to a good cubin"
        target = tmp_path / "elsewhere.cubin"
        target.write_bytes(CUBIN)
        path.symlink_to(target)


@pytest.mark.parametrize("what", ["an empty folder", "a pipe", "a link to a good cubin"])
def test_a_non_file_where_the_cubin_belongs_is_replaced(tmp_path: Path, what: str) -> None:
    cache = stored(tmp_path / "cache")
    path = cache.path_for(KEY)
    put(path, what, tmp_path)
    with pytest.warns(CacheWarning, match=f"skipping {path}"):
        assert cache.get_or_build(KEY, Builds()) == CUBIN
    assert stat.S_ISREG(path.lstat().st_mode) and mode(path) == 0o600
    assert cache.load(KEY) == CUBIN
    assert cache.stats.as_dict() == {"hits": 1, "misses": 1, "compiles": 1}


def test_a_folder_with_files_where_the_cubin_belongs_only_stops_caching(tmp_path: Path) -> None:
    cache = CubinCache(tmp_path)
    put(cache.path_for(KEY), "a folder with files", tmp_path)
    build = Builds()
    with pytest.warns(CacheWarning) as seen:
        for _ in range(3):
            assert cache.get_or_build(KEY, build) == CUBIN
    assert build.calls == 3 and (cache.path_for(KEY) / "inside").is_dir()
    assert len(seen) == 2  # the folder is skipped, and cannot be replaced: each told once


def test_a_file_where_a_folder_belongs_only_stops_caching(tmp_path: Path) -> None:
    cache = CubinCache(tmp_path)
    cache.path_for(KEY).parent.write_bytes(b"in the way")
    with pytest.warns(CacheWarning, match="cannot write to"):
        assert cache.get_or_build(KEY, Builds()) == CUBIN
        assert cache.get_or_build(KEY, Builds()) == CUBIN


def test_an_entry_path_that_is_a_folder_is_a_miss(tmp_path: Path) -> None:
    kernels = CompileCache(tmp_path)
    kernels.path_for(ENTRY_KEY).mkdir(parents=True)
    with pytest.warns(CacheWarning, match="not a regular file"):
        assert kernels.load(ENTRY_KEY) is None
    kernels.store(ENTRY_KEY, ENTRY)
    assert kernels.load(ENTRY_KEY)["ptx"] == PTX


# ---------------------------------------------------------------- unwritable


@pytest.mark.parametrize("how", ["chmod 0500", "read-only file system", "the cache folder is a file"])
def test_an_unwritable_cache_warns_once_and_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     how: str) -> None:
    root = tmp_path / "cache"
    if how == "chmod 0500":
        if os.geteuid() == 0:
            pytest.skip("running as root, which writes into a 0500 folder anyway; the read-only file system case covers the same path")
        root.mkdir(mode=0o500)
    elif how == "read-only file system":
        def read_only(path, data, **kwargs):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

        monkeypatch.setattr(runtime_cache, "atomic_write", read_only)
    else:
        root.write_bytes(b"not a folder")
    cubins, kernels = CubinCache(root), CompileCache(root)
    with pytest.warns(CacheWarning, match="compiling without caching") as seen:
        for key in (KEY, OTHER_KEY, KEY):
            assert cubins.get_or_build(key, Builds()) == CUBIN
            assert cubins.store(key, CUBIN) is None
            assert kernels.load(ENTRY_KEY) is None
            kernels.store(ENTRY_KEY, ENTRY)
    assert len(seen) == 1, [str(w.message) for w in seen]
    assert cubins.stats.as_dict() == {"hits": 0, "misses": 3, "compiles": 3}


def test_a_read_only_cache_still_serves_hits(tmp_path: Path) -> None:
    cache = stored(tmp_path / "cache")
    for folder in (cache.path_for(KEY).parent, cache.sum_path(KEY).parent):
        folder.chmod(0o500)
    with no_cache_warnings():
        assert cache.get_or_build(KEY, Builds()) == CUBIN
    assert cache.stats.hits == 1


# ---------------------------------------------------------------- trust


def another_owner(monkeypatch: pytest.MonkeyPatch, *paths: Path) -> None:
    """``paths`` look owned by uid 4242 (ownership is read by one function)."""
    real, ids = runtime_cache.owner_uid, {(p.stat().st_dev, p.stat().st_ino) for p in paths}
    monkeypatch.setattr(runtime_cache, "owner_uid",
                        lambda st: 4242 if (st.st_dev, st.st_ino) in ids else real(st))


@pytest.mark.parametrize("which", ["the cubin", "its sha256"])
def test_a_file_of_another_user_is_not_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              which: str) -> None:
    cache = stored(tmp_path)
    path = cache.path_for(KEY) if which == "the cubin" else cache.sum_path(KEY)
    real = runtime_cache.owner_uid
    another_owner(monkeypatch, path)
    with pytest.warns(CacheWarning, match=f"skipping {path}: it is owned by uid 4242"):
        assert cache.get_or_build(KEY, Builds()) == CUBIN
    assert cache.stats.as_dict() == {"hits": 0, "misses": 1, "compiles": 1}
    monkeypatch.setattr(runtime_cache, "owner_uid", real)  # the replaced file's inode number may be reused
    assert cache.load(KEY) == CUBIN  # replaced by files of ours


def test_a_file_others_can_write_is_not_loaded(tmp_path: Path) -> None:
    cache = stored(tmp_path)
    cache.path_for(KEY).chmod(0o646)
    with pytest.warns(CacheWarning, match="other users can write to it"):
        assert cache.load(KEY) is None
    cache.store(KEY, CUBIN)
    assert mode(cache.path_for(KEY)) == 0o600 and cache.load(KEY) == CUBIN


@pytest.mark.parametrize("folder", ["<root>", "<root>/<key[:2]>", "<root>/sha256", "<root>/sha256/<key[:2]>"])
@pytest.mark.parametrize("why", ["group-writable", "world-writable", "another owner"])
def test_an_untrusted_folder_is_neither_read_nor_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         folder: str, why: str) -> None:
    root = tmp_path / "cache"
    cache = stored(root)
    target = root / folder.replace("<root>", ".").replace("<key[:2]>", KEY[:2])
    files = {p: p.read_bytes() for p in (cache.path_for(KEY), cache.sum_path(KEY))}
    if why == "another owner":
        another_owner(monkeypatch, target)
    else:
        target.chmod(0o770 if why == "group-writable" else 0o777)
    build = Builds(b"\x7fELF rebuilt")
    with pytest.warns(CacheWarning, match=f"not using {target}: "):
        assert cache.get_or_build(KEY, build) == b"\x7fELF rebuilt"
    assert build.calls == 1 and cache.store(KEY, CUBIN) is None
    assert {p: p.read_bytes() for p in files} == files  # nothing replaced in it


def test_a_sticky_folder_others_can_write_is_trusted(tmp_path: Path) -> None:
    """Like /tmp: others cannot rename or remove our files there, and files of theirs are not trusted."""
    cache = stored(tmp_path)
    cache.path_for(KEY).parent.chmod(0o1777)
    with no_cache_warnings():
        assert cache.load(KEY) == CUBIN


# ---------------------------------------------------------------- processes at once


def _slow_build() -> bytes:
    time.sleep(0.01)  # a compile takes a while: the others get to miss meanwhile
    return CUBIN


def _compile_same_kernel(directory: str, start, rounds: int) -> None:
    """One process compiling the kernel: any warning, wrong byte or exception fails it (exit status)."""
    warnings.simplefilter("error", CacheWarning)
    cubins, kernels = CubinCache(directory), CompileCache(directory)
    start.wait()
    for _ in range(rounds):
        if cubins.get_or_build(KEY, _slow_build) != CUBIN:
            raise SystemExit("a wrong cubin")
        entry = kernels.load(ENTRY_KEY)
        if entry is None:
            kernels.store(ENTRY_KEY, ENTRY)
        elif entry["ptx"] != PTX:
            raise SystemExit("a wrong entry")
        cubins.store(KEY, CUBIN)  # stored again while the others read


def test_processes_compiling_one_kernel_at_once_leave_one_valid_entry(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    processes, rounds = 6, 10
    start = ctx.Barrier(processes)
    procs = [ctx.Process(target=_compile_same_kernel, args=(str(tmp_path), start, rounds))
             for _ in range(processes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * processes
    cubins, kernels = CubinCache(tmp_path), CompileCache(tmp_path)
    names = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert names == sorted([f"{KEY[:2]}/{KEY}.cubin", f"sha256/{KEY[:2]}/{KEY}.sha256",
                            f"kernels/{ENTRY_KEY[:2]}/{ENTRY_KEY}.json"]), "one of each, no temporary files"
    with no_cache_warnings():
        assert cubins.load(KEY) == CUBIN
        assert kernels.load(ENTRY_KEY)["ptx"] == PTX
