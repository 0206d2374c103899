"""`zmigrate go-live SRC DST`: bring the copy into service after a final sync; `--back` undoes
it. Every command is shown first; nothing runs without --yes or a yes on the terminal."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from zmigrate.engine import cmdline, zfs
from zmigrate.engine.golive import record as golive_record
from zmigrate.engine.hosts.login import HostSpec

from ..engine.golive import GoLivePlan, Step
from ..engine.history import recent_runs
from ..engine.hosts import Host, one_connection
from .common import EXIT_ERROR, EXIT_OK, TerminalPrompts, connect_host, print_json, split_location


def add_parser(sub: Any) -> None:
    """Add `zmigrate go-live` to the CLI's subcommands."""
    gp = sub.add_parser("go-live", help="bring a final-synced copy into service (or --back)")
    gp.add_argument("source", help="[user@]host:pool/ds - the tree's root that was copied")
    gp.add_argument("destination", help="[user@]host:pool/ds - its copy")
    gp.add_argument("--back", action="store_true",
                    help="undo what go-live did: the copy unmounted and read-only again, the "
                    "source's mounts and canmount as they were")
    gp.add_argument("--mount-root", metavar="PATH",
                    help="mount the copy under PATH instead of where the source was mounted")
    gp.add_argument("-n", "--dry-run", action="store_true", help="print the commands only")
    gp.add_argument("-y", "--yes", action="store_true", help="do not ask before running them")
    gp.add_argument("--json", action="store_true", help="the plan and each step as JSON lines")
    gp.add_argument("--sudo", action="store_true", help="run zfs through sudo -n on both hosts")


def _lines(plan: GoLivePlan) -> list[str]:
    return [f"# on the {s.side}: {s.what}\n{cmdline.join(s.argv)}" for s in plan.steps]


def _confirm(args: argparse.Namespace, err: TextIO) -> bool:
    if args.yes:
        return True
    if not sys.stdin.isatty():
        print("error: going live changes mounts on the hosts: run again with --yes after "
              "reading the commands above", file=err)
        return False
    return input("Run these commands? [y/N] ").strip().lower() in ("y", "yes")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
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
    if args.dry_run or not plan.steps:
        return EXIT_OK
    if not _confirm(args, err):
        return EXIT_ERROR

    def said(step: Step) -> None:
        if args.json:
            print_json({"event": "go_live_step", **step.to_json()}, out)
        else:
            print(f"{step.side}: {step.what}", file=err)

    golive_record.apply(plan, src, dst, said)
    print(f"live: {destination_root} on {dst.label} is in service; `zmigrate go-live --back` "
          "undoes it", file=err)
    return EXIT_OK


def _back(args: argparse.Namespace, src: Host, dst: Host, destination_root: str,
          out: TextIO, err: TextIO) -> int:
    steps = golive_record.recorded(dst, destination_root)
    for s in reversed(steps):
        if s.undo is not None:
            print(f"# on the {s.side}: undo {s.what}\n{cmdline.join(s.undo)}", file=out)
    if args.dry_run:
        return EXIT_OK
    if steps and not _confirm(args, err):
        return EXIT_ERROR
    golive_record.back(src, dst, destination_root)
    print(f"back: {destination_root} on {dst.label} is out of service again", file=err)
    return EXIT_OK
