"""`zmigrate _runner ID`: the job's runner, started by `send --detach` (or the wizard) apart
from any terminal: `send` of the job's request, every event into the job's record."""

from __future__ import annotations

import argparse
import os
import signal
import threading
from typing import TextIO

from ..engine import runner
from ..engine.errors import CancelledError, ZmigrateError
from ..engine.events import Event, Failed
from ..engine.runner.state import JobState
from . import keep_sync, send
from .common import EXIT_CANCELLED, EXIT_ERROR


def _parser() -> argparse.ArgumentParser:
    """`send`'s own parser (the request is its arguments, `send` first)."""
    p = argparse.ArgumentParser(prog="zmigrate")
    send.add_parser(p.add_subparsers(dest="command"))
    return p


def run_runner(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The runner: `send` of the job's request, its events into the job's record."""
    directory = runner.job_dir(args.id)
    status = runner.status(args.id)
    writer = runner.Writer(directory, status)
    writer.update(pid=_pid(), state=JobState.RUNNING)

    def on_term(_sig: int, _frame: object) -> None:
        # Written by a thread: the handler may have interrupted this very thread inside the
        # writer (its lock and the record's flock held), where writing here would deadlock.
        threading.Thread(target=writer.update, kwargs={"stop_requested": True},
                         daemon=True).start()
        signal.raise_signal(signal.SIGINT)  # the send's own Ctrl-C: cancel, both ends stopped

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)  # a final sync asked of a job without one
    code = EXIT_ERROR
    try:
        send_args = _parser().parse_args(status.request["argv"])
        send_args.argv = list(status.request["argv"])
        if send_args.keep_syncing:
            code = keep_sync.run(send_args, writer, out, err)
        else:
            code = send.run(send_args, out, err, observer=writer)
    except KeyboardInterrupt:
        _end(writer, Failed(CancelledError("stopped before the transfer began"), True))
        code = EXIT_CANCELLED
    except ZmigrateError as exc:
        _end(writer, Failed(exc))
    except SystemExit as exc:  # a request argparse refuses
        _end(writer, Failed(ZmigrateError(f"the job's request was refused ({exc.code})")))
    finally:
        if not writer.status.state.final:
            _end(writer, Failed(ZmigrateError(f"the runner ended (status {code}) without "
                                              "an outcome"), writer.status.stop_requested))
        writer.close()
    return code


def _end(writer: runner.Writer, event: Event) -> None:
    if not writer.status.state.final:
        writer(event)


def _pid() -> int:
    return os.getpid()


