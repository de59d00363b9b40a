"""``python -m dejavu_agents.web``: play Déjà Vu in the browser, and record the games people agree to record.

Examples::

    python -m dejavu_agents.web                      # http://127.0.0.1:8000/
    python -m dejavu_agents.web --log games.jsonl    # ask each player, record those who agree
    python -m dejavu_agents.web --checkpoint grid:mine=runs/grid/best.zip

    python -m dejavu_agents.web --host 0.0.0.0 --allow-host games.lab.example   # reached by that name

Then share a link such as ``/play?game=grid&opponent=counting`` or
``/play?game=grab&opponents=human-casual,perfect&flip_ms=800``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from dejavu_agents.cli import Parser, fail, positive_int
from dejavu_agents.games import GAMES
from dejavu_env.core.providers import provided_names

PROG = "python -m dejavu_agents.web"
NAME = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")
HOST_NAME = re.compile(r"(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\]")
LOOPBACK = ("127.0.0.1", "localhost", "::1")
EVERY_INTERFACE = ("0.0.0.0", "::")


def host_name(text: str) -> str:
    """A name the server may be reached by (``games.lab.example``, ``*.lab.example``, ``10.0.0.5``, ``[fe80::1]``)."""
    if not HOST_NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(f"must be a host name or address such as games.lab.example, got {text!r:.80}")
    return text.lower()


def build_parser() -> Parser:
    parser = Parser(
        prog=PROG, description="Serve the browser game (Starlette on uvicorn).", example=f"{PROG} --log games.jsonl"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (another one exposes the server)")
    parser.add_argument(
        "--allow-host", action="append", default=[], type=host_name, metavar="NAME",
        help="a name in the Host header that is answered, beside the loopback names and --host (repeatable; "
        "*.example.org for its subdomains)",
    )  # fmt: skip
    parser.add_argument("--port", type=positive_int, default=8000, help="TCP port")
    parser.add_argument("--log", type=Path, help="JSONL file the agreed games are appended to (default: none)")
    parser.add_argument(
        "--checkpoint", action="append", default=[], metavar="GAME:NAME=PATH",
        help="a checkpoint links may name as NAME (repeatable); links never name paths",
    )  # fmt: skip
    return parser


def parse_checkpoints(items: Sequence[str]) -> dict[str, dict[str, Path]]:
    """``grid:mine=runs/best.zip`` items as game -> name -> checked path; ``ValueError`` naming a bad one."""
    from dejavu_agents.specs import checkpoint_spec

    found: dict[str, dict[str, Path]] = {}
    for item in items:
        game, colon, rest = item.partition(":")
        name, equals, path = rest.partition("=")
        if not colon or not equals or game not in GAMES or not name or not path:
            raise ValueError(f"write a checkpoint as GAME:NAME=PATH with GAME one of {', '.join(GAMES)}, got {item!r}")
        if not NAME.fullmatch(name):
            raise ValueError(f"a checkpoint's name goes into links: letters, digits, '.', '-' or '_', got {name!r}")
        if name in provided_names(game) or name in found.get(game, {}):
            raise ValueError(f"{name!r} already names a {game} player; give the checkpoint another name")
        spec = checkpoint_spec(game, name, path)
        assert spec.checkpoint is not None
        found.setdefault(game, {})[name] = spec.checkpoint
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Check the arguments (one line on stderr and exit status 2 on a mistake), then serve until Ctrl-C."""
    args = build_parser().parse_args(argv)
    if not 1 <= args.port <= 65535:
        return fail(PROG, f"--port must be 1 to 65535, got {args.port}")
    if args.log is not None:
        log = args.log.expanduser()
        if log.is_dir() or not log.parent.is_dir():
            return fail(PROG, f"--log {args.log}: not a file in an existing folder")
        args.log = log
    try:
        checkpoints = parse_checkpoints(args.checkpoint)
    except (ValueError, OSError) as err:
        return fail(PROG, str(err))
    from dejavu_agents.web.app import create_app
    from dejavu_agents.web.guards import Limits
    from dejavu_agents.web.serve import listen, make_server, url

    hosts = allowed_hosts(args.host, args.allow_host)
    try:
        sock = listen(args.host, args.port)
    except ValueError as err:
        return fail(PROG, str(err))
    limits = Limits()
    server = make_server(create_app(args.log, checkpoints, hosts, limits), limits)
    if args.host not in LOOPBACK:
        print(f"{PROG}: warning: --host {args.host} serves plain HTTP beyond this machine; only requests for "
              f"{', '.join(hosts)} are answered (--allow-host NAME adds a name)", file=sys.stderr)  # fmt: skip
    print(f"{PROG}: serving {url(args.host, args.port)}" + ("" if args.host in LOOPBACK else " (exposed)"), flush=True)
    with sock:
        server.run(sockets=[sock])
    return 0


def allowed_hosts(host: str, extra: Sequence[str]) -> list[str]:
    """The ``Host`` names answered: the loopback names, ``host`` itself (unless it means every
    interface, which no browser asks for by name) and the operator's ``--allow-host`` names.

    Why a list even for ``--host 0.0.0.0``: without one, any web site could reach the server
    through DNS rebinding (a name of its own that resolves to this machine).
    """
    names = ["127.0.0.1", "localhost", "[::1]"]
    if host not in LOOPBACK + EVERY_INTERFACE:
        names.append(f"[{host.lower()}]" if ":" in host else host.lower())
    return list(dict.fromkeys([*names, *extra]))


if __name__ == "__main__":
    sys.exit(main())
