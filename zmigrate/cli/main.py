"""`zmigrate`: parse the command line and hand it to the command's module (or the wizard)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from .. import __version__
from ..engine.errors import InvalidNameError, ZmigrateError
from . import doctor, golive, history, jobs, list, remote_jobs, runner, send
from .common import EXIT_CANCELLED, EXIT_ERROR, EXIT_USAGE, error_json
from .words import error_text

Handler = Callable[[argparse.Namespace, TextIO, TextIO], int]
COMMANDS: dict[str, Handler] = {
    "list": list.run, "send": send.run, "history": history.run, "doctor": doctor.run,
    "go-live": golive.run, "jobs": jobs.run_jobs, "attach": jobs.run_attach,
    "stop": jobs.run_stop, "final-sync": jobs.run_final_sync, "_runner": runner.run_runner,
    "_reach": remote_jobs.run_reach,
}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="zmigrate",
        description="Move ZFS datasets between hosts fast, and see why a transfer is slow. "
        "With no command, opens the wizard.",
    )
    p.add_argument("--version", action="version", version=f"zmigrate {__version__}")
    p.add_argument("--self-test", action="store_true",
                   help="open the main window offscreen, draw a plot, and exit (for packagers)")
    sub = p.add_subparsers(dest="command")

    sub.add_parser("gui", help="open the migration wizard")

    list.add_parser(sub)
    send.add_parser(sub)
    history.add_parser(sub)
    doctor.add_parser(sub)
    golive.add_parser(sub)
    jobs.add_parsers(sub)
    return p


# What the wizard needs beyond the engine: the `gui` extra (pyproject.toml).
GUI_MODULES = ("PySide6", "pyqtgraph")
GUI_MISSING = (
    "zmigrate: the desktop app is not installed here ({missing} missing); the command line is:\n"
    "  zmigrate list|send|doctor|history ...   (zmigrate --help)\n"
    "For the wizard, install the gui extra:\n"
    "  pipx install 'zmigrate[gui]'   (from a checkout: pipx install '.[gui]')\n"
    "  pip install 'zmigrate[gui]'    (into the environment zmigrate runs from)\n"
    "or the Debian package (zmigrate_VERSION_amd64.deb), which includes it."
)


def gui_missing() -> tuple[str, ...]:
    """The wizard's packages that cannot be imported here (empty when the GUI can start)."""
    # (`list` is the list command's module here.)
    return tuple(name for name in GUI_MODULES if importlib.util.find_spec(name) is None)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    args = parser.parse_args(argv)
    # What `send --detach` hands its runner: these very arguments.
    args.argv = [*(sys.argv[1:] if argv is None else argv)]
    if args.self_test or args.command in (None, "gui"):
        missing = gui_missing()
        if missing:
            print(GUI_MISSING.format(missing=", ".join(missing)), file=err)
            return EXIT_USAGE
    if args.self_test:
        from ..gui.selftest import run as run_self_test

        return run_self_test()
    if args.command in (None, "gui"):
        from ..gui.app import run as run_gui

        return run_gui([])
    try:
        return COMMANDS[args.command](args, out, err)
    except ZmigrateError as exc:
        if getattr(args, "json", False):
            print(json.dumps(error_json(exc)), file=out)
        else:
            print(f"error: {error_text(exc)}", file=err)
        return EXIT_USAGE if isinstance(exc, InvalidNameError) else EXIT_ERROR
    except ValueError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted", file=err)
        return EXIT_CANCELLED
