"""`zmigrate doctor SRC DST`: the command-line face of zmigrate.doctor."""

from __future__ import annotations

import argparse
import json
import threading
from typing import Any, TextIO, assert_never

from zmigrate.engine.hosts.login import HostSpec

from ..engine import plain_words
from ..engine.doctor import (
    DEFAULT_SECONDS,
    FAST_CIPHERS,
    STAGES,
    Doctor,
    DoctorReport,
    StageResult,
    StageStarted,
)
from ..engine.errors import ZmigrateError
from ..engine.events import (
    DatasetState,
    EndCpu,
    Event,
    Failed,
    Finished,
    LogLine,
    OutOfTouch,
    PlanReady,
    Progress,
    Resent,
    Sample,
    StageChanged,
    Stalled,
    Synced,
    TreePlanReady,
    Verdict,
    Wire,
)
from ..engine.hosts import Host, one_connection
from ..engine.plan import Options
from ..engine.transports import Compression, Transport
from ..engine.units import format_rate
from . import words
from .common import (
    EXIT_CANCELLED,
    EXIT_ERROR,
    EXIT_OK,
    TerminalPrompts,
    add_path_options,
    connect_host,
    error_json,
    run_interruptibly,
    ssh_option,
)
from .send import print_losses


def add_parser(sub: Any) -> None:
    """Add `zmigrate doctor` to the CLI's subparsers."""
    dp = sub.add_parser(
        "doctor", help="measure each stage between two hosts (disk read, network, ssh, write)",
        description="Time each stage of a transfer alone for a few seconds and name the slowest.")
    dp.add_argument("source", help="HOST or HOST:pool/ds@snap (with a snapshot, zfs send is "
                    "timed too)")
    dp.add_argument("destination", help="HOST or HOST:pool/ds (the write test's temporary "
                    "dataset goes under it; default: the pool with the most free space)")
    dp.add_argument("--seconds", type=float, default=DEFAULT_SECONDS, metavar="N",
                    help=f"how long each stage runs (default {DEFAULT_SECONDS:g})")
    dp.add_argument("--no-write-test", action="store_true",
                    help="skip timing writes into a temporary dataset on the destination (it "
                    "writes at most 10%% of the free space and is always destroyed)")
    dp.add_argument("--write-test", action="store_true", help=argparse.SUPPRESS)  # the default
    dp.add_argument("--transport", choices=[Transport.TCP.value, Transport.PRIVATE.value,
                                               Transport.SSH.value],
                    help="the transport whose stages count for the bottleneck (default: "
                    "a job's between these hosts, private where both can take it, else tcp)")
    dp.add_argument("--cipher", action="append", default=[], metavar="CIPHER",
                    help="ssh cipher to try (repeatable; default: "
                    + ", ".join(FAST_CIPHERS) + ")")
    dp.add_argument("--no-ssh", action="store_true", help="skip the ssh stages")
    dp.add_argument("--compress", choices=[c.value for c in Compression if c.value != "none"],
                    help="the transfer would compress in transit with this tool: its stage "
                    "counts for the bottleneck and the expected rate (without it, zstd is "
                    "measured on a sample of the snapshot and advised on or off)")
    dp.add_argument("--stage", action="append", default=[], choices=STAGES,
                    help="run only this stage (repeatable)")
    add_path_options(dp)
    dp.add_argument("--json", action="store_true",
                    help="newline-delimited JSON: doctor_stage events, then doctor_report")


def _location(text: str) -> tuple[str, str]:
    """`HOST` or `HOST:path` (a bare word is a host here, unlike `send`)."""
    if ":" in text:
        host, _, path = text.partition(":")
        if host and "/" not in host:
            return host, path
    return text, ""


def format_table(report: DoctorReport) -> str:
    """The report as a table with the bottleneck marked, then the advice."""
    labels = list(dict.fromkeys(h.host for s in report.stages for h in s.cpu))
    head = f"{'':2}{'STAGE':<36} {'RATE':>12} {'TIME':>6}  {'CPU ' + ' / '.join(labels):<22} NOTE"
    lines = [f"doctor: {report.source} -> {report.destination}, {report.seconds:g} s per stage, "
             f"transport {report.transport.value}", head]
    for s in report.stages:
        mark = "* " if s.name == report.bottleneck else "  "
        title = s.title if s.in_path else f"({s.title})"
        cpu = " / ".join("-" if h.busy is None else f"{h.busy:.0f}%" for h in s.cpu) or "-"
        bound = s.cpu_bound
        notes = [s.error and f"error: {s.error}", words.stage_note(s),
                 bound and f"{bound.name} {bound.cpu:.0f}% of a core on {bound.host}"]
        if not bound:
            busiest = s.busiest
            if busiest is not None:
                notes.append(f"busiest {busiest.name} {busiest.cpu:.0f}% ({busiest.host})")
        note = "; ".join(n for n in notes if n)
        time_text = f"{s.seconds:.1f}s" if not s.skipped else "-"
        rate = format_rate(s.rate)
        lines.append(f"{mark}{title:<36} {rate:>12} {time_text:>6}  {cpu:<22} {note}")
    if report.cancelled:
        lines.append("cancelled: the stages after the one running were not measured")
    if report.bottleneck is not None:
        slow = report.stage(report.bottleneck)
        assert slow is not None
        if report.expected_rate is not None:
            lines.append(f"bottleneck: {slow.title} at {format_rate(slow.rate)}; expect about "
                         f"{format_rate(report.expected_rate)} end to end (stages in "
                         "parentheses are alternatives, not on the path)")
        else:
            lines.append(f"slowest measured: {slow.title} at {format_rate(slow.rate)}: the "
                         "transfer runs at most that fast, maybe slower (not measured below)")
    cost = report.private_cost
    if cost is not None:
        lines.append("private (TLS) on this path: "
                     + cost.describe())
    if report.unmeasured:
        lines.append("not measured:")
        for name in report.unmeasured:
            st = report.stage(name)
            why = (st.error or words.stage_note(st)) if st is not None else ""
            lines.append(f"  - {st.title if st else name}" + (f": {why}" if why else ""))
    lines += wire_lines(report.wire)
    unread = dict.fromkeys(f"{h.host}: {what}" for s in report.stages for h in s.cpu
                           for what in h.unread)
    if unread:
        lines.append("not read: " + "; ".join(unread))
    if report.advice:
        lines.append("advice:")
        lines += [f"  - {words.advice(a)}" for a in report.advice]
    return "\n".join(lines)


def wire_lines(wire: Wire | None) -> list[str]:
    """Each side's link as its host read it, and the path's ceiling."""
    if wire is None:
        return []
    return [f"link: source {wire.source.host}: {plain_words.link_detail(wire.source)}",
            f"      destination {wire.destination.host}: "
            f"{plain_words.link_detail(wire.destination)}",
            f"ceiling: {plain_words.ceiling_words(wire.ceiling)}"]


def _say_losses(doctor: Doctor, as_json: bool, out: TextIO, err: TextIO) -> None:
    """What the doctor destroys (its write test's own dataset), named before it runs."""
    lost = doctor.named_losses()
    doctor.clear_leftovers = frozenset(loss.name for loss in lost)  # shown: destroyed too
    if as_json:
        out.write(json.dumps({"event": "doctor_plan",
                              "destroys": [x.to_json() for x in lost]}) + "\n")
    else:
        print_losses(lost, doctor.src.label, doctor.dst.label, err)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`zmigrate doctor`: connect, run the stages (Ctrl-C cancels cleanly), print the report."""
    src_text, snap = _location(args.source)
    dst_text, parent = _location(args.destination)
    options = Options(
        transport=Transport(args.transport) if args.transport else None,
        port=args.port,
        ssh_options=tuple(ssh_option(o) for o in args.ssh_option),
        connect_address=args.connect_address,
        allow_address=args.allow_address,
        compress=Compression(args.compress) if args.compress else None,
    )
    prompts = TerminalPrompts()
    hosts: list[Host] = []

    def on_event(event: Event) -> None:
        match event:
            case StageResult():
                if args.json:
                    out.write(json.dumps(words.stage_json(event)) + "\n")
                    out.flush()
            case StageStarted():
                if not args.json:
                    print(f"measuring {event.title} for {event.seconds:g} s...", file=err)
            case (PlanReady() | TreePlanReady() | StageChanged() | Sample() | LogLine() | Progress()
                  | Stalled() | DatasetState() | Verdict() | Finished() | Failed() | Wire()
                  | Synced() | EndCpu() | Resent() | OutOfTouch()):
                pass  # a job's kinds: the doctor emits none (its report carries the wire)
            case _:
                assert_never(event)

    try:
        src = connect_host(src_text, args.sudo or args.sudo_source, prompts)
        hosts.append(src)
        if one_connection(HostSpec.parse(src_text, sudo=args.sudo or args.sudo_source),
                          HostSpec.parse(dst_text, sudo=args.sudo or args.sudo_destination)):
            dst = src
        else:
            dst = connect_host(dst_text, args.sudo or args.sudo_destination, prompts)
            hosts.append(dst)
        doctor = Doctor(src, dst, snapshot=snap or None, parent=parent or None,
                        seconds=args.seconds, write_test=not args.no_write_test, options=options,
                        ciphers=args.cipher or FAST_CIPHERS, emit=on_event,
                        ssh_test=not args.no_ssh, stages=args.stage or None)
        _say_losses(doctor, args.json, out, err)
        box: dict[str, object] = {}

        def work() -> None:
            try:
                box["report"] = doctor.run()
            except ZmigrateError as exc:
                box["error"] = exc
            except Exception as exc:  # noqa: BLE001 - report, never hang the CLI
                box["error"] = ZmigrateError(f"internal error: {exc!r}")

        thread = threading.Thread(target=work, name="zmigrate-doctor", daemon=True)

        def finished(timeout: float) -> bool:
            thread.join(timeout)
            return not thread.is_alive()

        run_interruptibly(thread.start, finished, doctor.cancel)
        error = box.get("error")
        if isinstance(error, ZmigrateError):
            if args.json:
                print(json.dumps(error_json(error, cancelled=doctor.cancelled)), file=out)
            else:
                print(f"error: {words.error_text(error)}", file=err)
            return EXIT_CANCELLED if doctor.cancelled else EXIT_ERROR
        report = box["report"]
        assert isinstance(report, DoctorReport)
        if args.json:
            out.write(json.dumps(words.report_json(report)) + "\n")
        else:
            print(format_table(report), file=out)
        return EXIT_CANCELLED if report.cancelled else \
            EXIT_OK if report.bottleneck is not None else EXIT_ERROR
    finally:
        for h in hosts:
            h.close()
