"""Run ``tile-opt`` or ``filecheck`` through the lit suite's fork server (``fork_server.py``).

    python -S fork_client.py TOOL ARGS...

Sends the server this process's stdin, stdout and stderr, its working directory, environment and
arguments, and exits with the tool's status. Without a server (``$TILEC_LIT_FORKSERVER`` unset or
not answering) it becomes ``python -m`` of the tool itself, so a RUN line means the same either
way. Standard library only, and run with ``-S``: it starts in a few milliseconds.
"""

import json
import os
import socket
import struct
import sys

MODULES = {"tile-opt": "tilec.tools.tile_opt", "filecheck": "filecheck"}
NOT_RUN = -1000  # fork_server.NOT_RUN: the server could not start the call


def run_directly(tool: str, args: list[str]) -> None:
    """Replace this process by ``python -m`` of the tool (with site-packages, unlike this client)."""
    os.execv(sys.executable, [sys.executable, "-m", MODULES[tool], *args])


def main() -> None:
    tool, args = sys.argv[1], sys.argv[2:]
    path = os.environ.get("TILEC_LIT_FORKSERVER")
    if not path:
        run_directly(tool, args)
    body = json.dumps({"tool": tool, "args": args, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    message = struct.pack("!I", len(body)) + body
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
        sent = socket.send_fds(conn, [message], [0, 1, 2])
        if sent < len(message):  # never a send after the last byte: the call may be over, its socket closed
            conn.sendall(message[sent:])
    except OSError:  # the server has not got the whole request, so it runs nothing
        run_directly(tool, args)
    answer = b""
    while len(answer) < 4:
        more = conn.recv(4 - len(answer))
        if not more:
            sys.stderr.write(f"fork_client: {tool} ended without an exit status (killed by a signal?)\n")
            sys.exit(1)
        answer += more
    status = struct.unpack("!i", answer)[0]
    if status == NOT_RUN:
        conn.close()
        run_directly(tool, args)
    sys.exit(status & 0xFF)


if __name__ == "__main__":
    main()
