"""The runner of a kept-in-sync job (`send -r --snapshot --detach --keep-syncing 15m`): each
catch-up is `send` of the job's own arguments (a new snapshot, each dataset's delta), the
final sync the same with `--final`; engine/runner/keep.py repeats them and keeps the record."""

from __future__ import annotations

import argparse
import signal
from typing import TextIO

from ..engine import runner
from ..engine.events import Observer
from ..engine.golive.final_sync import final_sync_window
from ..engine.runner.keep import Loop, parse_interval
from ..engine.tree import TreeJob
from . import send
from .common import connected_pair, split_location


def without_keep(argv: list[str]) -> list[str]:
    """`argv` without `--keep-syncing DURATION` (either spelling)."""
    out: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
        elif a == "--keep-syncing":
            skip = True
        elif not a.startswith("--keep-syncing="):
            out.append(a)
    return out


def run(args: argparse.Namespace, writer: runner.Writer, out: TextIO, err: TextIO) -> int:
    """The first copy, the catch-ups every interval, and the final sync when asked."""
    interval = parse_interval(args.keep_syncing)
    base = without_keep(list(args.argv))
    parser = argparse.ArgumentParser(prog="zmigrate")
    send.add_parser(parser.add_subparsers(dest="command"))

    def parsed(final: bool) -> argparse.Namespace:
        a = parser.parse_args([*base, *(["--final"] if final else [])])
        a.argv = base
        return a

    def catch_up(final: bool, observer: Observer) -> int:
        return send.run(parsed(final), out, err, observer=observer)

    loop = Loop(writer, interval, catch_up, lambda: predict(parsed(True)))
    signal.signal(signal.SIGUSR1, lambda _sig, _frame: loop.ask_final())
    return loop.run()


def predict(args: argparse.Namespace) -> tuple[float | None, int]:
    """How long a final sync now would keep the source read-only (None: no run of this tree
    in the history to time it from), and the bytes changed since the copy's snapshot."""
    src_text, source = split_location(args.source)
    dst_text, destination = split_location(args.destination)
    with connected_pair(args, src_text, dst_text) as (src, dst):
        job = TreeJob(src, dst, send.tree_request(args, source, destination,
                                                  send.options_of(args)))
        window = final_sync_window(job)  # `args` asks for the final sync: never None
        return (window.seconds, window.changed) if window is not None else (None, 0)
