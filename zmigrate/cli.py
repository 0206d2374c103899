"""The command-line face: `zmigrate list`, `zmigrate send`, and friends."""

from __future__ import annotations

import argparse
import getpass
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any, TextIO

from . import __version__, history, shell, zfs
from .errors import CancelledError, InvalidNameError, ZmigrateError
from .events import Failed, Finished, LogLine, PlanReady, Progress, Sample, Side, StageChanged
from .hosts import Host
from .job import Job, Request
from .mbuffer import format_rate, format_size, parse_size
from .plan import Options, Transport
from .ssh import HostKeyDecision, HostKeyInfo, HostSpec, Prompts, connect

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


class TerminalPrompts(Prompts):
    """Ask on the terminal, the way ssh does; answer no when there is no terminal."""

    def unknown_host_key(self, info: HostKeyInfo) -> HostKeyDecision:
        if not sys.stdin.isatty():
            print(f"{info.openssh_text}\nNo terminal to ask on: refused. Add the key with "
                  f"`ssh -p PORT HOST true` first, or accept it in the GUI.", file=sys.stderr)
            return HostKeyDecision.REJECT
        print(info.openssh_text, file=sys.stderr)
        answer = input("Are you sure you want to continue connecting (yes/no/once)? ").strip()
        if answer.lower() == "yes":
            return HostKeyDecision.ACCEPT_AND_REMEMBER
        if answer.lower() == "once":
            return HostKeyDecision.ACCEPT_ONCE
        return HostKeyDecision.REJECT

    def secret(self, prompt: str) -> str | None:
        if not sys.stdin.isatty():
            return None
        return getpass.getpass(prompt + ": ")


def split_location(text: str) -> tuple[str, str]:
    """Split `[user@]host:path` into (host, path); no `host:` means this machine.

    ZFS names may contain ':', so only a prefix without '/' counts as a host.
    """
    if ":" in text:
        prefix, rest = text.split(":", 1)
        if "/" not in prefix and prefix and rest:
            return prefix, rest
    return "local", text


def _connect(host_text: str, sudo: bool, prompts: Prompts) -> Host:
    return connect(HostSpec.parse(host_text, sudo=sudo), prompts)


def _fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    s = int(seconds)
    if s >= 3600:
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{s // 60}:{s % 60:02d}"


class LiveLine:
    """The one-line status shown on a terminal while a transfer runs."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.fill = {Side.SEND: 0.0, Side.RECEIVE: 0.0}
        self.last_draw = 0.0
        self.extra = ""

    def __call__(self, event: object) -> None:
        if isinstance(event, Sample):
            self.fill[event.side] = event.fill
        elif isinstance(event, StageChanged):
            self.clear()
            print(f"{event.stage}: {event.detail}" if event.detail else event.stage,
                  file=self.out)
        elif isinstance(event, LogLine):
            self.clear()
            print(f"[{event.host}] {event.text}", file=self.out)
        elif isinstance(event, Progress):
            now = time.monotonic()
            if now - self.last_draw < 0.25:
                return
            self.last_draw = now
            pct = f" {event.done / event.total:4.0%}" if event.total else ""
            total = f" / {format_size(event.total)}" if event.total else ""
            step = f" step {event.step}/{event.steps}" if event.steps > 1 else ""
            text = (f"{format_rate(event.rate)}  buffers send {self.fill[Side.SEND]:3.0f}% "
                    f"recv {self.fill[Side.RECEIVE]:3.0f}%  {format_size(event.done)}{total}"
                    f"{pct}  ETA {_fmt_time(event.eta)}{step}{self.extra}")
            self.out.write("\r\x1b[K" + text)
            self.out.flush()

    def clear(self) -> None:
        self.out.write("\r\x1b[K")


def _json_default(obj: object) -> object:
    if isinstance(obj, (Side, Transport)):
        return obj.value
    if isinstance(obj, (set, tuple)):
        return list(obj)
    return str(obj)


def event_to_json(event: object) -> dict[str, Any] | None:
    """The --json form of an event (numbers in bytes and seconds), or None to skip it."""
    if isinstance(event, PlanReady):
        p = event.plan
        return {
            "event": "plan",
            "source": p.source,
            "destination": p.destination,
            "snapshot": p.source_snapshot,
            "destination_dataset": p.destination_dataset,
            "kind": p.kind,
            "base": p.base,
            "transport": p.transport.value,
            "port": p.port,
            "estimate": p.estimate,
            "estimate_exact": p.estimate_exact,
            "resume": p.resume_token is not None,
            "resumed_from": p.resumed_from,
            "resumable": p.resumable,
            "raw": p.raw,
            "replicate": p.replicate,
            "send_flags": list(p.send_flags),
            "snapshots": list(p.arrives),
            "destroys": list(p.destroys),
            "commands": [{"host": h, "command": c} for h, c in p.commands()],
            "description": p.describe(),
        }
    if isinstance(event, Sample):
        return {"event": "sample", **asdict(event)}
    if isinstance(event, Progress):
        return {"event": "progress", **asdict(event)}
    if isinstance(event, StageChanged):
        return {"event": "stage", "stage": event.stage, "detail": event.detail}
    if isinstance(event, LogLine):
        return {"event": "log", "host": event.host, "side": event.side.value, "text": event.text}
    if isinstance(event, Finished):
        s = event.summary
        return {"event": "done", "bytes": s.bytes, "seconds": s.seconds, "rate": s.rate,
                "receive_empty_count": s.receive_empty_count, "source_guid": s.source_guid,
                "destination_guid": s.destination_guid, "hash_match": s.hash_match,
                "verified": s.verified, "snapshots": list(s.snapshots_sent), **s.extra}
    if isinstance(event, Failed):
        return error_json(event.error, cancelled=event.cancelled)
    to_json = getattr(event, "to_json", None)
    if callable(to_json):
        result = to_json()
        return result if isinstance(result, dict) else None
    return None


def error_json(err: ZmigrateError, cancelled: bool = False) -> dict[str, Any]:
    return {"event": "error", "message": err.message, "host": err.host, "fix": err.fix,
            "cancelled": cancelled}


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
        base=shell.snap_part(args.base) if args.base else None,
        verify_hash=args.hash,
        ssh_options=tuple(_ssh_option(o) for o in args.ssh_option),
        connect_address=args.connect_address,
        allow_address=args.allow_address,
        resume=args.resume,
        discard_partial=args.discard_partial,
        resumable=False if args.no_resumable else None,
        raw=True if args.raw else (False if args.decrypt else None),
        decrypt=args.decrypt,
        compressed=False if args.no_compressed else None,
        replicate=args.replicate,
        properties=tuple(_property(p) for p in args.property),
        exclude_properties=tuple(args.exclude_property),
        mount=not args.no_mount,
        bookmark=args.bookmark,
    )


def _property(text: str) -> tuple[str, str]:
    """`name=value` of -o/--property."""
    if "=" not in text:
        raise InvalidNameError(f"-o {text!r} is not of the form name=value")
    name, value = text.split("=", 1)
    return name, value


def _ssh_option(text: str) -> str:
    """An OpenSSH `-o Key=Value` option, checked so it can't smuggle another command."""
    key = text.split("=", 1)[0]
    if not key.isalnum() or "=" not in text:
        raise InvalidNameError(f"--ssh-option {text!r} is not of the form Key=Value")
    return "-o" + text


def cmd_send(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    src_host, snapshot = split_location(args.source)
    dst_host, destination = split_location(args.destination)
    shell.snapshot(snapshot)
    shell.dataset(destination)
    options = _options(args)
    if options.resume and options.discard_partial:
        raise InvalidNameError("--resume and --discard-partial exclude each other")
    prompts = TerminalPrompts()
    hosts: list[Host] = []
    try:
        src = _connect(src_host, args.sudo or args.sudo_source, prompts)
        hosts.append(src)
        if HostSpec.parse(dst_host).label == HostSpec.parse(src_host).label \
                and not (args.sudo_destination and not args.sudo_source):
            dst = src
        else:
            dst = _connect(dst_host, args.sudo or args.sudo_destination, prompts)
            hosts.append(dst)
        job = Job(src, dst, Request(snapshot, destination, options))
        if not args.dry_run and not args.no_history:
            recorder = history.Recorder.for_default_store()
            job.subscribe(recorder)
        if args.dry_run:
            plan = job.prepare()
            if args.json:
                print(json.dumps(event_to_json(PlanReady(plan)), default=_json_default), file=out)
            else:
                print(plan.describe(), file=out)
                for w in plan.warnings:
                    print(f"warning: {w}", file=out)
                for host, line in plan.commands():
                    print(f"\n# on {host}:\n{line}", file=out)
            return EXIT_OK
        if args.json:
            def emit_json(event: object) -> None:
                data = event_to_json(event)
                if data is not None:
                    out.write(json.dumps(data, default=_json_default) + "\n")
                    out.flush()
            job.subscribe(emit_json)
        elif err.isatty():
            job.subscribe(LiveLine(err))
        else:
            job.subscribe(lambda e: _plain(e, err))
        return _run_job(job, out, err, args.json)
    finally:
        for h in hosts:
            h.close()


def _plain(event: object, err: TextIO) -> None:
    if isinstance(event, StageChanged):
        print(f"{event.stage}: {event.detail}" if event.detail else event.stage, file=err)
    elif isinstance(event, LogLine):
        print(f"[{event.host}] {event.text}", file=err)


def run_interruptibly(start: Callable[[], None], finished: Callable[[float], bool],
                      cancel: Callable[[], None]) -> None:
    """Start background work and wait for it; Ctrl-C calls `cancel` (cleanup runs in the work's
    own thread, so the wait goes on until it is done)."""
    previous = signal.getsignal(signal.SIGINT)
    in_main = threading.current_thread() is threading.main_thread()
    if in_main:
        signal.signal(signal.SIGINT, lambda _sig, _frame: cancel())
    try:
        start()
        while not finished(0.2):
            pass
    finally:
        if in_main:
            signal.signal(signal.SIGINT, previous)


def _run_job(job: Job, out: TextIO, err: TextIO, as_json: bool) -> int:
    def cancel() -> None:
        print("\ncancelling: stopping both ends...", file=err)
        job.cancel()

    run_interruptibly(job.start, job.wait, cancel)
    if job.summary is not None:
        s = job.summary
        if not as_json:
            if err.isatty():
                err.write("\r\x1b[K")
            plan = job.plan
            where = f"{plan.destination}:{plan.destination_snapshot}" if plan else ""
            hash_text = {True: "stream md5 equal on both ends",
                         None: "stream checksums checked by zfs receive",
                         False: "HASH MISMATCH"}
            print(f"done: {format_size(s.bytes)} in {_fmt_time(s.seconds)} "
                  f"({format_rate(s.rate)} average), verified {where} guid {s.destination_guid}, "
                  f"{hash_text[s.hash_match]}"
                  + (f", resumed after {format_size(plan.resumed_from)}"
                     if plan and plan.resume_token else "")
                  + (f", receive buffer ran empty {s.receive_empty_count}x"
                     if s.receive_empty_count else ""), file=out)
        return EXIT_OK
    error = job.error or ZmigrateError("the job ended without a result")
    if not as_json:
        if err.isatty():
            err.write("\r\x1b[K")
        print(f"error: {error}", file=err)
    return EXIT_CANCELLED if isinstance(error, CancelledError) else EXIT_ERROR


def cmd_list(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    host_text, root = split_location(args.target) if ":" in args.target else (args.target, "")
    if root:
        shell.dataset(root)
    host = _connect(host_text, args.sudo, TerminalPrompts())
    try:
        caps = zfs.probe(host)
        zfs.require_zfs(host, caps)
        datasets = zfs.inventory(host, caps, root or None)
        if root and not datasets:
            raise ZmigrateError(f"{root} does not exist", host=host.label,
                                fix=f"run `zmigrate list {host_text}` to see what there is")
        if args.json:
            for ds in datasets:
                print(json.dumps({
                    "name": ds.name, "type": ds.type, "guid": ds.guid, "used": ds.used,
                    "referenced": ds.referenced, "available": ds.available,
                    "creation": ds.creation, "resume_token": ds.resume_token,
                    "snapshots": [{"name": s.name, "guid": s.guid, "creation": s.creation,
                                   "used": s.used, "referenced": s.referenced}
                                  for s in ds.snapshots],
                    # Bookmarks (pool/ds#mark) where the host has them (OpenZFS), else [].
                    "bookmarks": [{"name": b.name, "guid": b.guid, "creation": b.creation,
                                   "createtxg": b.createtxg} for b in ds.bookmarks],
                }), file=out)
            return EXIT_OK
        print(f"# {host.label}: {caps.describe()}", file=out)
        print(f"{'NAME':<48} {'USED':>10} {'REFER':>10}  {'CREATED':<16} GUID", file=out)
        for ds in datasets:
            print(f"{ds.name:<48} {format_size(ds.used):>10} {format_size(ds.referenced):>10}  "
                  f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(ds.creation)):<16} {ds.guid}",
                  file=out)
            for s in ds.snapshots if args.snapshots else []:
                print(f"  @{s.short:<45} {format_size(s.used):>10} {format_size(s.referenced):>10}"
                      f"  {time.strftime('%Y-%m-%d %H:%M', time.localtime(s.creation)):<16} "
                      f"{s.guid}", file=out)
        return EXIT_OK
    finally:
        host.close()


def add_path_options(p: argparse.ArgumentParser) -> None:
    """Options that say how the two hosts reach each other (send and doctor share them)."""
    p.add_argument("--port", type=int, help="TCP port on the destination (default: a free one)")
    p.add_argument("--connect-address", help="address the source uses to reach the destination")
    p.add_argument("--allow-address",
                   help="the source's address as the destination sees it (only it may connect)")
    p.add_argument("--ssh-option", action="append", default=[], metavar="KEY=VALUE",
                   help="extra -o option for the source's own ssh (ssh transport)")
    p.add_argument("--sudo", action="store_true", help="run zfs through sudo -n on both hosts")
    p.add_argument("--sudo-source", action="store_true", help="sudo -n on the source only")
    p.add_argument("--sudo-destination", action="store_true",
                   help="sudo -n on the destination only")


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

    lp = sub.add_parser("list", help="list datasets and snapshots of a host")
    lp.add_argument("target", help="HOST or HOST:pool/dataset (HOST may be an ssh alias or local)")
    lp.add_argument("-s", "--snapshots", action="store_true", help="show snapshots too")
    lp.add_argument("--json", action="store_true", help="one JSON object per dataset")
    lp.add_argument("--sudo", action="store_true", help="run zfs through sudo -n")

    sp = sub.add_parser("send", help="send a snapshot to another host")
    sp.add_argument("source", help="[user@]host:pool/ds@snap (no host: this machine)")
    sp.add_argument("destination", help="[user@]host:pool/ds")
    sp.add_argument("--transport", choices=[t.value for t in Transport],
                    help="tcp: mbuffer to mbuffer, fastest, cleartext (default between hosts); "
                    "ssh: the source's ssh; local: same host")
    sp.add_argument("--no-intermediates", action="store_true",
                    help="send only the endpoint snapshot of an incremental (-i, not -I)")
    sp.add_argument("--history", action="store_true",
                    help="full send carries all older snapshots of the dataset")
    sp.add_argument("--base", help="incremental base snapshot (default: newest common by guid)")
    sp.add_argument("--force", action="store_true",
                    help="allow zfs receive -F (rolls the destination back; "
                    "destroys newer snapshots)")
    sp.add_argument("--no-readonly", action="store_true", help="leave the copy writable")
    sp.add_argument("--bwlimit", metavar="RATE", help="limit the rate, e.g. 20M (bytes/s)")
    sp.add_argument("--buffer", default="1G", metavar="SIZE",
                    help="mbuffer size on each end (default 1G, capped at 25%% of free memory)")
    sp.add_argument("--block", default="128k", metavar="SIZE", help="mbuffer block size")
    add_path_options(sp)
    sp.add_argument("--hash", action="store_true",
                    help="also compare the stream's md5 at both ends (about 1.7 s of CPU per GiB "
                    "on each host; zfs receive checks the stream's own checksums anyway)")
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
    sp.add_argument("--no-compressed", action="store_true",
                    help="do not send compressed blocks as they are (-c)")
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
    sp.add_argument("--json", action="store_true", help="newline-delimited JSON events on stdout")
    sp.add_argument("-n", "--dry-run", action="store_true",
                    help="check and print the plan and its commands; run nothing")
    sp.add_argument("--no-history", action="store_true",
                    help="do not record this transfer in `zmigrate history`")
    from . import doctor_cli, history_cli

    history_cli.add_parser(sub)
    doctor_cli.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.self_test:
        from .selftest import run as run_self_test

        return run_self_test()
    if args.command in (None, "gui"):
        from .gui.app import run as run_gui

        return run_gui([])
    handlers = {"send": cmd_send, "list": cmd_list}
    extra = _extra_commands()
    handlers.update(extra)
    try:
        return handlers[args.command](args, out, err)
    except ZmigrateError as exc:
        if getattr(args, "json", False):
            print(json.dumps(error_json(exc)), file=out)
        else:
            print(f"error: {exc}", file=err)
        return EXIT_USAGE if isinstance(exc, InvalidNameError) else EXIT_ERROR
    except ValueError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted", file=err)
        return EXIT_CANCELLED


def _extra_commands() -> dict[str, Any]:
    """Commands that live in their own modules (doctor, history) register here."""
    from . import doctor_cli, history_cli

    return {"history": history_cli.run_cli, "doctor": doctor_cli.run_cli}
