"""`zmigrate send SRC DST`: plan, run and verify one transfer."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any, TextIO

from zmigrate.engine import cmdline, plain_words
from zmigrate.engine.golive import readonly_window
from zmigrate.engine.golive.final_sync import final_sync_window, remember_readonly
from zmigrate.engine.verdict.stall import STALL_AFTER

from ..engine.errors import InvalidNameError
from ..engine.events import Observer, PlanReady, json_default
from ..engine.history import Recorder
from ..engine.job import Job, Request
from ..engine.losses import Loss
from ..engine.plan import Options
from ..engine.runner import keep
from ..engine.transports import Compression, Transport
from ..engine.tree import TreeJob, TreePlanReady, TreeRequest, describe_summary
from ..engine.tree.planning.listing import DatasetCommands, list_commands
from ..engine.units import parse_size
from . import jobs, words
from .common import (
    EXIT_OK,
    LiveLine,
    add_path_options,
    connected_pair,
    dataset_closing,
    event_to_json,
    plain,
    print_json,
    run_job,
    seconds,
    split_location,
    ssh_option,
)


def add_parser(sub: Any) -> None:
    """Add `zmigrate send` to the CLI's subcommands."""
    sp = sub.add_parser("send", help="send a snapshot to another host")
    sp.add_argument("source", help="[user@]host:pool/ds@snap (no host: this machine)")
    sp.add_argument("destination", help="[user@]host:pool/ds")
    sp.add_argument("--transport", choices=[t.value for t in Transport],
                    help="private: mbuffer to mbuffer over TLS 1.3 with keys made for the job "
                    "(default between hosts that both have socat or OpenSSL 3); tcp: the same "
                    "in cleartext, fastest (the default otherwise); ssh: the source's ssh; "
                    "relay: through this computer; local: same host")
    sp.add_argument("--no-intermediates", action="store_true",
                    help="send only the endpoint snapshot of an incremental (-i, not -I)")
    sp.add_argument("--history", action="store_true",
                    help="full send carries all older snapshots of the dataset")
    sp.add_argument("--base", help="incremental base snapshot (default: newest common by guid)")
    sp.add_argument("--force", action="store_true",
                    help="allow zfs receive -F: rolls the destination back (destroys its "
                    "newer snapshots), replaces the WHOLE content of an existing dataset "
                    "without snapshots that is not proven empty (its files are lost), and with "
                    "-R also destroys the copy's datasets and snapshots the source no longer "
                    "has; the plan lists each by name first")
    sp.add_argument("--no-readonly", action="store_true", help="leave the copy writable")
    sp.add_argument("--bwlimit", metavar="RATE", help="limit the rate, e.g. 20M (bytes/s)")
    sp.add_argument("--buffer", default="1G", metavar="SIZE",
                    help="mbuffer size on each end (default 1G, capped at 25%% of free memory)")
    sp.add_argument("--block", default="128k", metavar="SIZE", help="mbuffer block size")
    add_path_options(sp)
    sp.add_argument("--hash", action="store_true",
                    help="also compare the stream's md5 at both ends (about 1.7 s of CPU per GiB "
                    "on each host; zfs receive checks the stream's own checksums anyway)")
    _add_stream_arguments(sp)
    sp.add_argument("-R", "--replicate", action="store_true",
                    help="send the dataset with its children, snapshots and properties (-R)")
    sp.add_argument("-o", "--property", action="append", default=[], metavar="NAME=VALUE",
                    help="set a property on the copy (zfs receive -o), e.g. mountpoint=none")
    sp.add_argument("-x", "--exclude-property", action="append", default=[], metavar="NAME",
                    help="do not receive this property (zfs receive -x)")
    sp.add_argument("--no-mount", action="store_true", help="do not mount the copy (-u)")
    sp.add_argument("--bookmark", action="store_true",
                    help="bookmark the sent snapshot on the source afterwards, so later "
                    "incrementals work after it is pruned")
    tree = sp.add_argument_group(
        "trees", "move a dataset with its children, dataset by dataset (each resumable)")
    tree.add_argument("-r", "--recursive", action="store_true",
                      help="SOURCE is the root of a tree: copy it and every child, parents "
                      "first, each with its older snapshots; a rerun sends only what changed")
    tree.add_argument("--snapshot", action="store_true",
                      help="take a snapshot now (@zmigrate-YYYYMMDD-HHMMSS, UTC) and send up "
                      "to it (for -r without @snap in SOURCE)")
    tree.add_argument("--exclude", action="append", default=[], metavar="DATASET",
                      help="leave this child and its descendants out (repeatable)")
    tree.add_argument("--final", action="store_true",
                      help="cut over: set readonly=on on the source datasets first, then "
                      "snapshot and send the last delta")
    tree.add_argument("--mount-root", metavar="PATH",
                      help="mount the copy under PATH (default: received unmounted, "
                      "mountpoints kept, where the destination's zfs can)")
    tree.add_argument("--parallel", type=int, default=None, metavar="N",
                      help="up to N small datasets (under 64 MiB) in flight at once; a bigger "
                      "one always runs alone (default: up to 4, as both hosts' memory allows; "
                      "1 sends one dataset at a time)")
    sp.add_argument("--json", action="store_true", help="newline-delimited JSON events on stdout")
    sp.add_argument("-n", "--dry-run", action="store_true",
                    help="check and print the plan and its commands; run nothing")
    sp.add_argument("--no-history", action="store_true",
                    help="do not record this transfer in `zmigrate history`")
    sp.add_argument("--detach", action="store_true",
                    help="run the transfer apart from this terminal (a job of its own: "
                    "`zmigrate jobs`, `zmigrate attach ID`, `zmigrate stop ID`)")
    sp.add_argument("--runner", metavar="HOST",
                    help="with --detach: run the job on HOST (one of the two hosts, or a "
                    "machine that stays on) where zmigrate's command line is installed; HOST "
                    "logs in to both hosts with its own ssh config and keys, so SOURCE and "
                    "DESTINATION name them as HOST knows them")
    sp.add_argument("--keep-syncing", metavar="INTERVAL",
                    help="with -r --snapshot --detach: after the first copy, repeat the "
                    "catch-up (a new snapshot, only what changed) every INTERVAL (30s, 15m, "
                    "1h; at least 1m) until `zmigrate final-sync ID` cuts over or "
                    "`zmigrate stop ID`")


def _add_stream_arguments(sp: Any) -> None:
    """How the stream goes: stalls, resuming, encryption, compression."""
    sp.add_argument("--stall-after", type=seconds, default=STALL_AFTER, metavar="SECONDS",
                    help="report a stall after this long without a byte moving, and where the "
                    f"stream stopped (default {STALL_AFTER:.0f})")
    sp.add_argument("--stall-timeout", type=seconds, metavar="SECONDS",
                    help="give up (a failure) after this long without a byte moving; the "
                    "partial receive is kept where the destination can resume (default: wait)")
    sp.add_argument("--resume", action="store_true",
                    help="continue the destination's interrupted transfer (zfs send -t): "
                    "only the rest is sent")
    sp.add_argument("--discard-partial", action="store_true",
                    help="drop the destination's interrupted transfer (zfs receive -A) first")
    sp.add_argument("--no-resumable", action="store_true",
                    help="do not receive with -s (an interruption then leaves nothing)")
    sp.add_argument("--raw", action="store_true",
                    help="send raw (-w); the default for encrypted datasets")
    sp.add_argument("--decrypt", action="store_true",
                    help="send an encrypted dataset decrypted: the copy is NOT encrypted")
    sp.add_argument("--compress", choices=[c.value for c in Compression],
                    help="compress the stream in transit between two hosts (private, tcp, ssh, "
                    "relay): zstd (-T0 -3) or lz4 on the source, the decompressor before zfs "
                    "receive; pays on links slower than the source's compressor with "
                    "compression=off data (`zmigrate doctor` measures both); both hosts need "
                    "the tool")
    sp.add_argument("--compress-always", action="store_true",
                    help="also compress raw (-w) streams and compressed blocks sent as stored "
                    "(-c), which gain next to nothing")
    sp.add_argument("--no-compressed", action="store_true",
                    help="do not send compressed blocks as they are (-c)")


def tree_request(args: argparse.Namespace, source: str, destination: str,
                  options: Options) -> TreeRequest:
    root, _, snap = source.partition("@")
    if snap and args.snapshot:
        raise InvalidNameError(f"{source} names a snapshot and --snapshot asks for a new one: "
                               "give one or the other")
    if not snap and not args.snapshot:
        raise InvalidNameError(f"{source} names no snapshot: add @SNAP to send every dataset up "
                               "to that snapshot, or --snapshot to take one now")
    for flag, given in (("--replicate", args.replicate), ("--resume", args.resume),
                        ("--discard-partial", args.discard_partial), ("--base", args.base)):
        if given:
            raise InvalidNameError(f"{flag} is for one dataset; -r decides per dataset")
    return TreeRequest(root=cmdline.dataset(root), destination=destination,
                       snapshot=snap or None, excludes=tuple(args.exclude), final=args.final,
                       mount_root=args.mount_root, options=options,
                       parallel=_parallel(args.parallel))


def _parallel(n: int | None) -> int | None:
    if n is not None and not 1 <= n <= 16:
        raise InvalidNameError(f"--parallel {n} is out of range", fix="give 1 to 16")
    return n


def run(args: argparse.Namespace, out: TextIO, err: TextIO,
        observer: Observer | None = None) -> int:
    """Run `send`; `observer` (the job runner's record) sees the job's events too."""
    src_host, snapshot = split_location(args.source)
    dst_host, destination = split_location(args.destination)
    cmdline.dataset(destination)
    options = _options(args)
    tree_req = tree_request(args, snapshot, destination, options) if args.recursive \
        else None
    if tree_req is None:
        cmdline.snapshot(snapshot)
        for flag, given in (("--snapshot", args.snapshot), ("--exclude", args.exclude),
                            ("--parallel", args.parallel is not None),
                            ("--final", args.final), ("--mount-root", args.mount_root)):
            if given:
                raise InvalidNameError(f"{flag} goes with -r (a tree)")
    if options.resume and options.discard_partial:
        raise InvalidNameError("--resume and --discard-partial exclude each other")
    if getattr(args, "runner", None) and not getattr(args, "detach", False):
        raise InvalidNameError("--runner HOST says where a detached job runs",
                               fix="add --detach")
    if args.keep_syncing:
        _check_keep_syncing(args)
    if getattr(args, "detach", False):
        return jobs.detach(args, src_host, dst_host, destination, out)
    with connected_pair(args, src_host, dst_host) as (src, dst):
        if tree_req is not None:
            return _run_tree(args, remember_readonly(TreeJob(src, dst, tree_req)), out, err,
                             observer)
        job = Job(src, dst, Request(snapshot, destination, options))
        if not args.dry_run and not args.no_history:
            recorder = Recorder.for_default_store()
            job.subscribe(recorder)
        if args.dry_run:
            plan = job.prepare()
            if args.json:
                print(json.dumps(event_to_json(PlanReady(plan)), default=json_default), file=out)
            else:
                print(plan.describe(), file=out)
                print_losses(plan.destroys, plan.source, plan.destination, out)
                for w in plan.warnings:
                    print(f"warning: {w}", file=out)
                if plan.replaces is not None and not plan.replaces.empty:
                    print(f"warning: {words.replaced(plan.replaces)}", file=out)
                for host, line in plan.commands():
                    print(f"\n# on {host}:\n{line}", file=out)
            return EXIT_OK
        _follow(job, args.json, out, err, observer)
        return run_job(job, out, err, args.json,
                       closing=lambda s: dataset_closing(job.plan, s))


def _run_tree(args: argparse.Namespace, job: TreeJob, out: TextIO, err: TextIO,
              observer: Observer | None = None) -> int:
    if not args.dry_run and not args.no_history:
        job.subscribe(Recorder.for_default_store())
    window = final_sync_window(job)
    if args.dry_run:
        plan = job.plan or job.prepare()
        if args.json:
            print_json({**plan.to_json(), **(
                {"readonly_window": window.to_json()} if window is not None else {})}, out)
            return EXIT_OK
        print(plan.describe(), file=out)
        print_losses(plan.destroys, plan.source_host, plan.destination_host, out)
        if plan.room_warning():
            print(f"warning: {plan.room_warning()}", file=out)
        if window is not None:
            print(f"Final sync: {readonly_window.describe(window)}.", file=out)
        for host, line in plan.commands():
            print(f"\n# on {host}:\n{line}", file=out)
        for listed in list_commands(job, plan):
            _print_listed(listed, out)
        return EXIT_OK
    if window is not None:
        # Said before the source becomes read-only, so the user can still stop here.
        if args.json:
            print_json({"event": "readonly_window", **window.to_json()}, out)
        else:
            print(f"Final sync: {readonly_window.describe(window)}.", file=err)
    _follow(job, args.json, out, err, observer)
    return run_job(job, out, err, args.json,
                   closing=lambda s: describe_summary(job.plan, s) if job.plan else "done")


def _print_listed(d: DatasetCommands, out: TextIO) -> None:
    """One dataset of the dry run: its fate, then its exact commands or why none are shown (a
    skipped or carried dataset's reason already names why, or the stream it arrives in)."""
    e = d.entry
    print(f"\n# {e.source} -> {e.destination}: {e.action}"
          + (f" ({e.reason})" if e.reason else ""), file=out)
    if d.error is not None:
        print(f"#   (decided when it runs: {d.error.message})", file=out)
    if d.ahead is not None:
        print(f"#   (planned as if @{d.ahead} existed: it is taken first)", file=out)
    for host, line in d.commands:
        print(f"# on {host}:\n{line}", file=out)


def _follow(job: Job | TreeJob, as_json: bool, out: TextIO, err: TextIO,
            observer: Observer | None = None) -> None:
    """Show the job's events: JSON lines, the live line on a terminal, or plain lines."""
    if observer is not None:
        job.subscribe(observer)
    if as_json:
        job.subscribe(lambda e: print_json(event_to_json(e), out))
        return
    job.subscribe(lambda e: announce_losses(e, err))
    if err.isatty():
        job.subscribe(LiveLine(err))
    else:
        job.subscribe(lambda e: plain(e, err))


def print_losses(lost: Sequence[Loss], source: str, destination: str, out: TextIO) -> None:
    """`Will be destroyed on HOST:` and each thing by name, for every host that loses any;
    then `Will be hidden on HOST:` (unmounted, or covered by a mount)."""
    for hidden in (False, True):
        for host, lines in plain_words.losses_by_host(lost, source, destination,
                                                      hidden=hidden):
            print(f"Will be {'hidden' if hidden else 'destroyed'} on {host}:", file=out)
            for line in lines:
                print(f"  - {line}", file=out)


def announce_losses(event: object, err: TextIO) -> None:
    """A run's plan (a dataset's or a tree's): what it destroys, said before it runs; a tree's
    copy that will not fit, too."""
    if isinstance(event, PlanReady):
        print_losses(event.plan.destroys, event.plan.source, event.plan.destination, err)
    elif isinstance(event, TreePlanReady):
        p = event.plan
        print_losses(p.destroys, p.source_host, p.destination_host, err)
        if p.room_warning():  # said before hours of sending, not after
            print(f"warning: {p.room_warning()}", file=err)


def _check_keep_syncing(args: argparse.Namespace) -> None:
    """--keep-syncing repeats a tree's catch-up (each a new snapshot) in a job of its own."""
    keep.parse_interval(args.keep_syncing)
    for need, given, fix in (("-r", args.recursive,
                              "add -r: a dataset without children is a tree of one, and "
                              "--exclude DATASET leaves a child out"),
                             ("--snapshot", args.snapshot, "drop @SNAP and add --snapshot: "
                              "each catch-up takes a snapshot of its own"),
                             ("--detach", args.detach,
                              "add --detach: the job repeats apart from this terminal")):
        if not given:
            raise InvalidNameError(f"--keep-syncing needs {need}", fix=fix)
    if args.final or args.dry_run:
        raise InvalidNameError(f"--keep-syncing repeats catch-ups; "
                               f"{'--final' if args.final else '--dry-run'} runs one",
                               fix="`zmigrate final-sync ID` ends a kept-in-sync job with "
                               "its final sync")


def options_of(args: argparse.Namespace) -> Options:
    """The engine's options from `send`'s arguments."""
    return _options(args)


def _options(args: argparse.Namespace) -> Options:
    return Options(
        transport=Transport(args.transport) if args.transport else None,
        intermediates=not args.no_intermediates,
        history=args.history,
        force=args.force,
        readonly=not args.no_readonly,
        block_size=parse_size(args.block),
        buffer_size=parse_size(args.buffer),
        port=args.port,
        rate_limit=parse_size(args.bwlimit) if args.bwlimit else None,
        base=cmdline.snap_part(args.base) if args.base else None,
        verify_hash=args.hash,
        ssh_options=tuple(ssh_option(o) for o in args.ssh_option),
        connect_address=args.connect_address,
        allow_address=args.allow_address,
        resume=args.resume,
        discard_partial=args.discard_partial,
        resumable=False if args.no_resumable else None,
        raw=True if args.raw else (False if args.decrypt else None),
        decrypt=args.decrypt,
        compressed=False if args.no_compressed else None,
        compress=Compression(args.compress) if args.compress else None,
        compress_always=args.compress_always,
        replicate=args.replicate,
        properties=tuple(_property(p) for p in args.property),
        exclude_properties=tuple(args.exclude_property),
        mount=not args.no_mount,
        bookmark=args.bookmark,
        stall_after=args.stall_after,
        stall_timeout=args.stall_timeout,
    )


def _property(text: str) -> tuple[str, str]:
    """`name=value` of -o/--property."""
    if "=" not in text:
        raise InvalidNameError(f"-o {text!r} is not of the form name=value")
    name, value = text.split("=", 1)
    return name, value


