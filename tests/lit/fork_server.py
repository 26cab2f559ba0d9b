"""A fork server for the lit suite: ``tile-opt`` and ``filecheck`` without a Python start each.

Each RUN line starts a fresh Python for every tool it names; on the 2-core CI machine the imports
(xDSL's dialects, numpy, llvmlite: about 0.6 s for ``tile-opt``, 0.15 s for ``filecheck``) were
most of the suite's four minutes. This server imports both tools once and forks a child per call:
the child takes the caller's stdin, stdout and stderr (the descriptors themselves, passed over a
Unix socket), its working directory, environment and arguments, runs the tool's ``main`` as
``python -m`` would and reports the exit status. The parent never runs a tool, so every call
starts from the same freshly imported state; what differs from a fresh process is only that
the imports are done (and the hash seed is the server's).

    python tests/lit/fork_server.py SOCKET     # prints "ready" when it accepts calls

``tests/test_lit.py`` starts it around the lit run and names the socket in
``$TILEC_LIT_FORKSERVER``; ``lit.cfg`` then routes the tools through ``fork_client.py``, which runs
the tool itself when no server answers.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
import json
import os
import signal
import socket
import struct
import sys
import traceback

TOOLS = {"tile-opt": ("tilec.tools.tile_opt", "main", "tilec.tools.tile_opt"),
         "filecheck": ("filecheck.main", "main", "filecheck.__main__")}
"""The tools the server runs: name -> (module, function, the module ``python -m`` runs, whose file is
``sys.argv[0]``), what ``python -m tilec.tools.tile_opt`` and ``python -m filecheck`` call."""

NOT_RUN = -1000
"""The status of a call the server could not start (the client then runs the tool itself)."""

CHILD_TIME_LIMIT_S = 600
"""A child still running after this long (its caller was killed by a timeout) ends itself."""


def _preload() -> None:
    """Import what the tools import, and tile-opt's passes and targets (loaded lazily on first use)."""
    import filecheck.main  # noqa: F401

    import tilec.tools.tile_opt  # noqa: F401
    from tilec.passes.registry import get_tilec_passes, get_tilec_targets

    for factory in (*get_tilec_passes().values(), *get_tilec_targets().values()):
        factory()


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    """One call: a 4-byte length, that many bytes of JSON, and the caller's three descriptors."""
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    while len(data) < 4 or len(data) < 4 + struct.unpack("!I", data[:4])[0]:
        more = conn.recv(1 << 16)
        if not more:
            raise ConnectionError("the caller hung up mid-request")
        data += more
    (size,) = struct.unpack("!I", data[:4])
    return json.loads(data[4:4 + size]), list(fds)


def _streams() -> None:
    """Fresh text streams over descriptors 0-2, as a new interpreter has them."""
    sys.stdin = io.TextIOWrapper(io.open(0, "rb", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.open(1, "wb", closefd=False), encoding="utf-8")
    sys.stderr = io.TextIOWrapper(io.open(2, "wb", closefd=False), encoding="utf-8", errors="backslashreplace",
                                  line_buffering=True)
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr


def _run(request: dict) -> int:
    """Run one tool in this (forked) process; its exit status."""
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        module, function, script = TOOLS[request["tool"]]
        sys.argv = [importlib.util.find_spec(script).origin, *request["args"]]
        getattr(importlib.import_module(module), function)()
        return 0
    except SystemExit as e:
        if e.code is None:
            return 0
        if isinstance(e.code, int):
            return e.code
        print(e.code, file=sys.stderr)
        return 1
    except BaseException:  # what the interpreter would print for an uncaught exception
        traceback.print_exc()
        return 1


def _child(conn: socket.socket, request: dict, fds: list[int]) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.alarm(CHILD_TIME_LIMIT_S)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    _streams()
    status = 1
    try:
        status = _run(request)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # a closed pipe: the reader is gone, the status still goes back
                pass
        try:
            conn.sendall(struct.pack("!i", status))
        finally:
            os._exit(status & 0xFF)


def serve(path: str) -> None:
    _preload()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        fds: list[int] = []
        try:
            request, fds = _receive(conn)
            if len(fds) != 3 or request.get("tool") not in TOOLS:
                raise ValueError(f"a bad request: {request.get('tool')!r} with {len(fds)} descriptors")
            sys.stdout.flush()
            sys.stderr.flush()
            if os.fork() == 0:
                try:
                    server.close()
                    _child(conn, request, fds)
                finally:
                    os._exit(1)  # never back into the server's loop
        except Exception as e:  # the client runs the tool itself
            print(f"fork_server: {e}", file=sys.stderr, flush=True)
            try:
                conn.sendall(struct.pack("!i", NOT_RUN))
            except OSError:
                pass
        finally:
            for fd in fds:
                os.close(fd)
            conn.close()


if __name__ == "__main__":
    serve(sys.argv[1])
