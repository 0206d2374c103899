"""What the command-line faces share: prompts, connecting, exit codes, the live line, JSON."""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import Any, Protocol, TextIO, assert_never

from zmigrate.engine.hosts.login import HostKeyDecision, HostKeyInfo, HostSpec, Prompts, connect

from ..engine import plain_words
from ..engine.errors import CancelledError, InvalidNameError, PreflightError, ZmigrateError
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
    Side,
    StageChanged,
    StageResult,
    StageStarted,
    Stalled,
    Summary,
    Synced,
    TreePlanReady,
    Verdict,
    Wire,
    json_default,
)
from ..engine.findings import FindingKind
from ..engine.hosts import Host, one_connection
from ..engine.hosts.pair import connect_both
from ..engine.plan import Plan
from ..engine.units import format_rate, format_size
from ..engine.wire import Ceiling
from . import words

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


def connect_host(host_text: str, sudo: bool, prompts: Prompts) -> Host:
    return connect(HostSpec.parse(host_text, sudo=sudo), prompts)


@contextlib.contextmanager
def connected_pair(args: argparse.Namespace, src_text: str,
                   dst_text: str) -> Iterator[tuple[Host, Host]]:
    """Both hosts of a command, logged in (one connection when they are the same), closed
    after."""
    src_spec = HostSpec.parse(src_text, sudo=args.sudo or args.sudo_source)
    dst_spec = HostSpec.parse(dst_text, sudo=args.sudo or args.sudo_destination)
    prompts = TerminalPrompts()
    hosts: list[Host] = []
    try:
        if one_connection(src_spec, dst_spec):
            src = dst = connect_host(src_text, src_spec.sudo, prompts)
            hosts.append(src)
        else:
            src, dst = connect_both(src_spec, dst_spec, prompts)
            hosts += [src, dst]
        yield src, dst
    finally:
        for h in hosts:
            h.close()


def seconds(text: str) -> float:
    """A positive number of seconds (an argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of seconds above 0")
    return value


def stall_news(verdict: Verdict) -> bool:
    """Whether the verdict says the stream stalled or moves again (news even off a terminal)."""
    return verdict.finding.kind in (FindingKind.STALLED, FindingKind.STALL_CLEARED)


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    s = int(seconds)
    if s >= 3600:
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{s // 60}:{s % 60:02d}"


def time_left(p: Progress) -> str:
    """`ETA 1:05`, `stalled 1:20` (seconds without a byte) or `ETA unknown`."""
    if p.stalled is not None:
        return f"stalled {fmt_time(p.stalled)}"
    if p.eta is None:
        # Not yet (no rate), or too far out to mean anything.
        return "ETA unknown" if p.total and p.rate > 0 else "ETA --:--"
    return f"ETA {fmt_time(p.eta)}"


class LiveLine:
    """The one-line status shown on a terminal while a transfer runs."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.fill = {Side.SEND: 0.0, Side.RECEIVE: 0.0}
        self.last_draw = 0.0
        self.extra = ""
        self.ceiling: Ceiling | None = None

    def __call__(self, event: Event) -> None:
        match event:
            case Sample():
                self.fill[event.side] = event.fill
            case StageChanged():
                self.clear()
                print(stage_line(event), file=self.out)
            case LogLine():
                self.clear()
                print(f"[{event.host}] {event.text}", file=self.out)
            case DatasetState():
                self.clear()
                print(dataset_line(event), file=self.out)
            case Verdict():
                if stall_news(event):
                    self.clear()
                    print("\n".join(words.verdict_lines(event)), file=self.out)
            case Progress():
                self.draw(event)
            case Wire():
                self.ceiling = event.ceiling
            case Synced():
                self.clear()
                print(words.synced_line(event), file=self.out)
            case OutOfTouch():
                self.clear()
                print(plain_words.out_of_touch(event, time.time()), file=self.out)
            case (PlanReady() | TreePlanReady() | Stalled() | Finished() | Failed()
                  | StageStarted() | StageResult() | EndCpu() | Resent()):
                pass  # the plan, the stall (as its verdict) and the end are said elsewhere
            case _:
                assert_never(event)

    def draw(self, event: Progress) -> None:
        """The line itself, at most four times a second."""
        now = time.monotonic()
        if now - self.last_draw < 0.25:
            return
        self.last_draw = now
        pct = f" {event.done / event.total:4.0%}" if event.total else ""
        total = f" / {format_size(event.total)}" if event.total else ""
        step = f" step {event.step}/{event.steps}" if event.steps > 1 else ""
        share = (f", {plain_words.live_share(event.rate, self.ceiling, event.wire_rate)}"
                 if self.ceiling is not None and event.rate > 0 else "")
        text = (f"{format_rate(event.rate)}{share}  buffers send {self.fill[Side.SEND]:3.0f}% "
                f"recv {self.fill[Side.RECEIVE]:3.0f}%  {format_size(event.done)}{total}"
                f"{pct}  {time_left(event)}{step}{self.extra}")
        self.out.write("\r\x1b[K" + text)
        self.out.flush()

    def clear(self) -> None:
        self.out.write("\r\x1b[K")


def event_to_json(event: Event) -> dict[str, Any] | None:
    """The --json form of an event (numbers in bytes and seconds), or None to skip it."""
    match event:
        case PlanReady():
            return {"event": "plan", **event.plan.to_json()}
        case TreePlanReady() | StageResult():
            return event.to_json()
        case Sample():
            return {"event": "sample", **asdict(event)}
        case DatasetState():
            return {"event": "dataset", **asdict(event)}
        case Progress():
            return {"event": "progress", **asdict(event)}
        case StageChanged():
            return {"event": "stage", "stage": event.stage, "detail": event.detail,
                    "dataset": event.dataset or None}
        case LogLine():
            return {"event": "log", "host": event.host, "side": event.side.value,
                    "text": event.text}
        case Finished():
            return done_json(event.summary)
        case Verdict():
            return words.verdict_json(event.to_json())
        case Failed():
            return error_json(event.error, cancelled=event.cancelled)
        case Wire():
            return event.to_json()
        case Synced():
            return {"event": "synced", **asdict(event)}
        case EndCpu():
            return {"event": "end_cpu", **asdict(event)}
        case Resent():  # `lost` as JSON reads it back: a list
            return {"event": "resent", **asdict(event), "lost": [asdict(x) for x in event.lost]}
        case OutOfTouch():
            return {"event": "out_of_touch", **asdict(event)}
        case Stalled() | StageStarted():
            return None  # a stall is told as its verdict; a doctor's stage by its result
        case _:
            assert_never(event)


def done_json(s: Summary) -> dict[str, Any]:
    """The `done` event: the summary, its verdict worded."""
    extra = dict(s.extra)
    if isinstance(extra.get("verdict"), dict):
        extra["verdict"] = words.verdict_json(extra["verdict"])
    return {"event": "done", "bytes": s.bytes, "seconds": s.seconds, "rate": s.rate,
            "receive_empty_count": s.receive_empty_count, "source_guid": s.source_guid,
            "destination_guid": s.destination_guid, "hash_match": s.hash_match,
            "verified": s.verified, "snapshots": list(s.snapshots_sent), **extra}


def error_json(err: ZmigrateError, cancelled: bool = False) -> dict[str, Any]:
    """The error event; `reason` names a preflight refusal's kind (null for other errors)."""
    reason = err.reason.value if isinstance(err, PreflightError) else None
    fix = words.refusal_fix(err) if isinstance(err, PreflightError) else err.fix
    return {"event": "error", "message": err.message, "host": err.host, "fix": fix,
            "reason": reason, "cancelled": cancelled}


def print_json(data: dict[str, Any] | None, out: TextIO) -> None:
    """One line of --json output."""
    if data is not None:
        out.write(json.dumps(data, default=json_default) + "\n")
        out.flush()


def ssh_option(text: str) -> str:
    """An OpenSSH `-o Key=Value` option, checked so it can't smuggle another command."""
    key = text.split("=", 1)[0]
    if not key.isalnum() or "=" not in text:
        raise InvalidNameError(f"--ssh-option {text!r} is not of the form Key=Value")
    return "-o" + text


def dataset_line(event: DatasetState) -> str:
    """`[2/5] tank/a -> backup/a: verified (guid 123)`: a tree's dataset changed state."""
    detail = f" ({event.detail})" if event.detail else ""
    return (f"[{event.index + 1}/{event.count}] {event.dataset} -> {event.destination}: "
            f"{event.state}{detail}")


def stage_line(event: StageChanged) -> str:
    """`[dataset] stage: detail` (the dataset only for a tree's datasets: several may be in
    flight)."""
    text = f"{event.stage}: {event.detail}" if event.detail else event.stage
    return f"[{event.dataset}] {text}" if event.dataset else text


def plain(event: Event, err: TextIO) -> None:
    """What a run without a terminal says as it goes: stages, datasets, logs, stall news."""
    match event:
        case Verdict():
            if stall_news(event):
                print("\n".join(words.verdict_lines(event)), file=err)
        case DatasetState():
            print(dataset_line(event), file=err)
        case StageChanged():
            print(stage_line(event), file=err)
        case LogLine():
            print(f"[{event.host}] {event.text}", file=err)
        case PlanReady():
            lost = event.plan.replaces
            if lost is not None and not lost.empty:  # said before anything runs
                print(f"warning: {words.replaced(lost)}", file=err)
        case Synced():
            print(words.synced_line(event), file=err)
        case OutOfTouch():
            print(plain_words.out_of_touch(event, time.time()), file=err)
        case (TreePlanReady() | Sample() | Progress() | Stalled() | Finished()
              | Failed() | StageStarted() | StageResult() | Wire() | EndCpu() | Resent()):
            pass
        case _:
            assert_never(event)


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


def _mbuffer_text(figures: object) -> str:
    """`; mbuffer send 10 MiB at 3 MiB/s, receive ...` from the summary's mbuffer figures."""
    if not isinstance(figures, dict) or not figures:
        return ""
    parts = [f"{side} {format_size(int(f['bytes']))} at {format_rate(f['rate'])}"
             for side, f in figures.items()]
    return "; mbuffer " + ", ".join(parts)


class Runnable(Protocol):
    """What `run_job` drives: a Job or a TreeJob."""

    summary: Summary | None
    error: ZmigrateError | None

    def start(self) -> None: ...
    def wait(self, timeout: float | None = None) -> bool: ...
    def cancel(self) -> None: ...


def dataset_closing(plan: Plan | None, s: Summary) -> str:
    """A dataset's closing lines: what arrived where, verified how, at what rate; its
    verdict."""
    where = f" {plan.destination}:{plan.destination_snapshot}" if plan else ""
    hash_text = {True: "stream md5 equal on both ends",
                 None: "stream checksums checked by zfs receive",
                 False: "HASH MISMATCH"}
    done = (f"done: {format_size(s.bytes)} in {fmt_time(s.seconds)} "
            f"({format_rate(s.rate)} average), verified{where} guid {s.destination_guid}, "
            f"{hash_text[s.hash_match]}"
            + (f", resumed after {format_size(plan.resumed_from)}"
               if plan and plan.resume_token else "")
            + (f", receive buffer ran empty {s.receive_empty_count}x"
               if s.receive_empty_count else "")
            + _mbuffer_text(s.extra.get("mbuffers")))
    verdict = Verdict.from_json(s.extra.get("verdict"))
    return "\n".join([done, *(words.verdict_lines(verdict) if verdict is not None else [])])


def run_job(job: Runnable, out: TextIO, err: TextIO, as_json: bool,
            closing: Callable[[Summary], str]) -> int:
    """Run until the end (Ctrl-C cancels), print the `closing` lines of its summary; the exit
    status."""
    def cancel() -> None:
        print("\ncancelling: stopping both ends...", file=err)
        job.cancel()

    run_interruptibly(job.start, job.wait, cancel)
    if job.summary is not None:
        if not as_json:
            if err.isatty():
                err.write("\r\x1b[K")
            print(closing(job.summary), file=out)
        return EXIT_OK
    error = job.error or ZmigrateError("the job ended without a result")
    if not as_json:
        if err.isatty():
            err.write("\r\x1b[K")
        print(f"error: {words.error_text(error)}", file=err)
    return EXIT_CANCELLED if isinstance(error, CancelledError) else EXIT_ERROR


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


