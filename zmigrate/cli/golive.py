"""`zmigrate go-live SRC DST`: bring the copy into service after a final sync; `--back` undoes
it. Every command is shown first; nothing runs without --yes or a yes on the terminal."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from zmigrate.engine import cmdline, losses, zfs
from zmigrate.engine.golive import record as golive_record
from zmigrate.engine.golive.carry_back import Writes
from zmigrate.engine.hosts.login import HostSpec
from zmigrate.engine.units import format_size

from ..engine.golive import GoLivePlan, Step
from ..engine.history import recent_runs
from ..engine.hosts import Host, one_connection
from .common import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    TerminalPrompts,
    connect_host,
    print_json,
    split_location,
)
from .send import print_losses


def add_parser(sub: Any) -> None:
    """Add `zmigrate go-live` to the CLI's subcommands."""
    gp = sub.add_parser("go-live", help="bring a final-synced copy into service (or --back)")
    gp.add_argument("source", help="[user@]host:pool/ds - the tree's root that was copied")
    gp.add_argument("destination", help="[user@]host:pool/ds - its copy")
    gp.add_argument("--back", action="store_true",
                    help="undo what go-live did (also one cut off halfway): what was written "
                    "to the copy carried back to the source first, the copy unmounted and "
                    "read-only again, the source's mounts, canmount and readonly as they were")
    gp.add_argument("--without-copy", action="store_true",
                    help="with --back, where the copy no longer exists (destroyed by hand): "
                    "undo the source's steps alone; what was written to the copy while live "
                    "is lost with it")
    gp.add_argument("--leave-writes", action="store_true",
                    help="with --back: leave what was written to the copy while it was live "
                    "on the copy (kept under a snapshot @zmigrate-left-...) instead of carrying "
                    "it back to the source first")
    gp.add_argument("--mount-root", metavar="PATH",
                    help="mount the copy under PATH instead of where the source was mounted")
    gp.add_argument("-n", "--dry-run", action="store_true", help="print the commands only")
    gp.add_argument("-y", "--yes", action="store_true", help="do not ask before running them")
    gp.add_argument("--json", action="store_true", help="the plan and each step as JSON lines")
    gp.add_argument("--sudo", action="store_true", help="run zfs through sudo -n on both hosts")


def _lines(plan: GoLivePlan) -> list[str]:
    lines = [f"# on the {s.side}: {s.what}\n{cmdline.join(s.argv)}" for s in plan.remaining]
    if plan.record is not None:
        lines.insert(0, f"# continuing the go-live cut off after {plan.done} of "
                     f"{len(plan.steps)} steps (as the history recorded it; "
                     "`go-live --back` undoes it instead)")
    return lines


def _confirm(args: argparse.Namespace, err: TextIO) -> bool:
    if args.yes:
        return True
    if not sys.stdin.isatty():
        print("error: going live changes mounts on the hosts: run again with --yes after "
              "reading the commands above", file=err)
        return False
    return input("Run these commands? [y/N] ").strip().lower() in ("y", "yes")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.leave_writes and not args.back:
        print("error: --leave-writes goes with --back (what going back does with the copy's "
              "writes)", file=err)
        return EXIT_USAGE
    if args.without_copy and not args.back:
        print("error: --without-copy goes with --back (going back where the copy is gone)",
              file=err)
        return EXIT_USAGE
    src_text, source_root = split_location(args.source)
    dst_text, destination_root = split_location(args.destination)
    cmdline.dataset(source_root)
    cmdline.dataset(destination_root)
    prompts = TerminalPrompts()
    hosts: list[Host] = []
    try:
        src = connect_host(src_text, args.sudo, prompts)
        hosts.append(src)
        if one_connection(HostSpec.parse(src_text), HostSpec.parse(dst_text)):
            dst = src
        else:
            dst = connect_host(dst_text, args.sudo, prompts)
            hosts.append(dst)
        if args.back:
            return _back(args, src, dst, destination_root, out, err)
        return _go_live(args, src, dst, source_root, destination_root, out, err)
    finally:
        for h in hosts:
            h.close()


def _go_live(args: argparse.Namespace, src: Host, dst: Host, source_root: str,
             destination_root: str, out: TextIO, err: TextIO) -> int:
    src_caps = zfs.probe(src)
    caps = src_caps if dst is src else zfs.probe(dst)
    plan = golive_record.prepare(src, dst, src_caps, caps, source_root, destination_root,
                                 mount_root=args.mount_root,
                                 records=recent_runs(destination_root))
    if args.json:
        print_json(plan.to_json(), out)
    else:
        print("\n".join(_lines(plan)) or "# nothing to change", file=out)
        for note in plan.notes:
            print(f"note: {note}", file=out)
        print_losses(plan.destroys, src.label, dst.label, out)
    if args.dry_run or not plan.remaining and plan.record is None:
        return EXIT_OK
    if not _confirm(args, err):
        return EXIT_ERROR

    def said(step: Step) -> None:
        if args.json:
            print_json({"event": "go_live_step", **step.to_json()}, out)
        else:
            print(f"{step.side}: {step.what}", file=err)

    try:
        golive_record.apply(plan, src, dst, said)
    except KeyboardInterrupt:
        print("\ngoing live was interrupted: the history holds what ran; `zmigrate go-live` "
              "again finishes it, `zmigrate go-live --back` undoes exactly that", file=err)
        raise
    print(f"live: {destination_root} on {dst.label} is in service; `zmigrate go-live --back` "
          "undoes it", file=err)
    return EXIT_OK


def _back(args: argparse.Namespace, src: Host, dst: Host, destination_root: str,
          out: TextIO, err: TextIO) -> int:
    gone = golive_record.without_copy(dst, destination_root, args.without_copy)
    steps = golive_record.recorded(dst, destination_root, copy_gone=gone)
    if gone and not args.json:  # the JSON plan says so in without_copy
        print(f"# the copy {destination_root} no longer exists on {dst.label}: only the "
              "source's steps are undone; what was written to the copy while live is lost "
              "with it", file=out)
    hidden = losses.going_back(steps, leave_writes=args.leave_writes, mounted_besides=[]
                               if gone else golive_record.mounted_besides(dst,
                                                                          destination_root))
    writes = golive_record.preview(src, dst, destination_root) if steps and not gone else None
    if args.json:
        print_json({"event": "go_back_plan", "destination": destination_root,
                    "steps": [{**s.to_json(), "command": cmdline.join(s.undo)}
                              for s in reversed(steps) if s.undo is not None],
                    "writes": writes.to_json() if writes is not None else None,
                    "leave_writes": args.leave_writes, "without_copy": gone,
                    "destroys": [x.to_json() for x in hidden]}, out)
    else:
        for s in reversed(steps):
            if s.undo is not None:
                print(f"# on the {s.side}: undo {s.what}\n{cmdline.join(s.undo)}", file=out)
        if writes is not None:
            print(_writes_said(writes, args.leave_writes), file=out)
        print_losses(hidden, src.label, dst.label, out)
    if args.dry_run:
        return EXIT_OK
    if steps and not _confirm(args, err):
        return EXIT_ERROR

    def said(step: Step) -> None:
        if args.json and step.undo is not None:
            print_json({"event": "go_back_step", **step.to_json(),
                        "command": cmdline.join(step.undo)}, out)
        else:
            print(f"{step.side}: undo {step.what}", file=err)

    try:
        went = golive_record.back(src, dst, destination_root, leave_writes=args.leave_writes,
                                  on_step=said, said=lambda text: print(f"  {text}", file=err),
                                  copy_gone=gone)
    except KeyboardInterrupt:
        print("\ngoing back was interrupted: the history holds what is still to undo; "
              "`zmigrate go-live --back` again continues it", file=err)
        raise
    if went.writes.changed and went.left:
        print(f"left on the copy: {format_size(went.writes.bytes)} written while live, in "
              f"{', '.join(went.writes.datasets)}, kept under the snapshot "
              f"{destination_root}@{went.snapshot}; the source does not have it", file=err)
    elif went.writes.changed:
        print(f"carried back: {format_size(went.writes.bytes)} written while live, in "
              f"{', '.join(went.writes.datasets)}, is on the source (snapshot "
              f"@{went.snapshot})", file=err)
    if went.copy_gone:
        print(f"back: the source is served as before; the copy {destination_root} was gone "
              f"from {dst.label}, and what was written to it while live with it", file=err)
    else:
        print(f"back: {destination_root} on {dst.label} is out of service again; the source "
              "is served as before", file=err)
    return EXIT_OK


def _writes_said(writes: Writes, leave: bool) -> str:
    """What going back does with what was written to the copy while live, in words."""
    if not writes.changed:
        return "# nothing was written to the copy while it was live"
    where = ", ".join(f"{name} ({format_size(n)})" for name, n in writes.changed)
    head = (f"# written to the copy since it went live: {format_size(writes.bytes)} in "
            f"{len(writes.changed)} dataset(s): {where}")
    if leave:
        return (head + "\n# --leave-writes: they stay on the copy only, kept under a snapshot "
                "@zmigrate-left-...; the source is served again without them")
    return (head + "\n# going back carries them back to the source first: a snapshot of the "
            "copy @zmigrate-back-... sent incrementally (--leave-writes leaves them on the copy)")
