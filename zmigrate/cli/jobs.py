"""Jobs apart from the terminal: `send --detach`, the hidden `_runner`, `jobs`, `attach`,
`stop` (engine/runner keeps the record; this module words it)."""

from __future__ import annotations

import argparse
import time
from typing import Any, TextIO

from ..engine import runner
from ..engine.errors import InvalidNameError
from ..engine.events import Event
from ..engine.runner import died, keep, record, remote
from ..engine.runner.control import final_sync_after
from ..engine.runner.state import JobState, Status
from ..engine.units import format_rate, format_size
from . import remote_jobs
from .common import (
    EXIT_CANCELLED,
    EXIT_ERROR,
    EXIT_OK,
    LiveLine,
    event_to_json,
    fmt_time,
    plain,
    print_json,
)

WORDS = {JobState.STARTING: "starting", JobState.RUNNING: "running",
         JobState.FINISHED: "finished", JobState.FAILED: "failed",
         JobState.STOPPED: "stopped", JobState.RUNNER_DIED: "runner died"}


def add_parsers(sub: Any) -> None:
    """`jobs`, `attach`, `stop`, and the runner's own hidden `_runner`."""
    jp = sub.add_parser("jobs", help="list running and recent jobs (send --detach)")
    jp.add_argument("--json", action="store_true", help="one JSON object a job")
    jp.add_argument("--no-scan", action="store_true",
                    help="do not look on the hosts for what a dead runner left")
    jp.add_argument("--runner", metavar="HOST",
                    help="list the jobs on that runner host (send --detach --runner HOST)")
    ap = sub.add_parser("attach", help="follow a job: the live line, or its events")
    ap.add_argument("id", help="the job's id (`zmigrate jobs`)")
    ap.add_argument("--json", action="store_true",
                    help="its events from the first, newline-delimited JSON")
    ap.add_argument("--record", action="store_true", help=argparse.SUPPRESS)  # its record's
    # own lines, for a computer following a job whose runner is this one (remote_jobs.py) ...
    ap.add_argument("--after", type=int, default=0, help=argparse.SUPPRESS)  # ... from the
    # event after this sequence number (it logs in again after a loss: only what it missed)
    sp = sub.add_parser("stop", help="stop a running job (both ends; the partial receive kept)")
    sp.add_argument("id", help="the job's id (`zmigrate jobs`)")
    fp = sub.add_parser("final-sync", help="cut a kept-in-sync job over (send --keep-syncing): "
                        "stop repeating, set the source read-only, send the last delta, check")
    fp.add_argument("id", help="the job's id (`zmigrate jobs`)")
    fp.add_argument("--json", action="store_true", help="the final sync's events as JSON")
    fp.add_argument("--no-wait", action="store_true",
                    help="ask for it and return (`zmigrate attach ID` follows it)")
    rp = sub.add_parser("_runner")  # no help: not for users (argparse still lists the name)
    rp.add_argument("id")
    reach = sub.add_parser("_reach")  # the runner host's check of its logins (remote_jobs.py)
    reach.add_argument("hosts", nargs="+")


def detach(args: argparse.Namespace, src_host: str, dst_host: str, destination: str,
           out: TextIO) -> int:
    """Start `send` (these arguments without --detach) as a job; say its id and how to
    follow it."""
    if args.dry_run:
        raise InvalidNameError("--detach runs a transfer; --dry-run runs nothing",
                               fix="give one or the other")
    if getattr(args, "runner", None):
        return remote_jobs.detach(args, src_host, dst_host, out)
    argv = [a for a in getattr(args, "argv", []) if a != "--detach"]
    request = {"argv": argv, "source": args.source, "source_host": src_host,
               "destination_host": dst_host, "destination": destination,
               "sudo_source": args.sudo or args.sudo_source,
               "sudo_destination": args.sudo or args.sudo_destination}
    what = f"{args.source} -> {args.destination}" + (" (tree)" if args.recursive else "") \
        + (f", kept in sync every {args.keep_syncing}" if args.keep_syncing else "")
    status = runner.start(what, request)
    if args.json:
        print_json({"event": "job", **status.to_json()}, out)
    else:
        print(f"started job {status.id}: {what}\n"
              + (f"  note:       {status.note}\n" if status.note else "")
              + f"  follow it:  zmigrate attach {status.id}\n"
              f"  stop it:    zmigrate stop {status.id}\n"
              f"  all jobs:   zmigrate jobs", file=out)
    return EXIT_OK


def run_jobs(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if getattr(args, "runner", None):
        return remote_jobs.run_jobs_on(args, out, job_line)
    listed = runner.jobs()
    for s in listed:
        left = died.left_on_hosts(s) if s.state is JobState.RUNNER_DIED and not args.no_scan \
            else []
        if args.json:
            print_json({"event": "job", **s.to_json(), "left": [_left_json(x) for x in left],
                        **_keep_json(s)}, out)
            continue
        print(job_line(s), file=out)
        if s.live_note:
            print(f"    {s.live_note}", file=out)
        for line in _left_lines(s, left):
            print(f"    {line}", file=out)
    known = remote_jobs.print_known(args, out, job_line)
    if not listed and not known and not args.json:
        print("no jobs (send --detach starts one)", file=out)
    return EXIT_OK


def _keep_json(s: Status) -> dict[str, Any]:
    """A kept-in-sync job's figures, and how they read."""
    k = keep.Keep.of(s)
    if k is None:
        return {}
    return {"keep": {**k.to_json(), "text": keep.describe(k, time.time())}}


def job_line(s: Status) -> str:
    """`ID  running  lab-src:tank/t -> lab-dst:b/c  42% 1.2 GiB / 3 GiB  ETA 1:05`; a
    kept-in-sync job's running line says its last sync (its fault first) instead."""
    k = keep.Keep.of(s)
    if k is not None and s.state is JobState.RUNNING and (k.last_synced or k.fault):
        word = "in sync" if k.last_synced and not k.fault else WORDS[s.state]
        return f"{s.id}  {word:<11} {s.what}  {keep.describe(k, time.time())}"
    pct = f"{s.done / s.total:4.0%} " if s.total else ""
    total = f" / {format_size(s.total)}" if s.total else ""
    if s.state is JobState.RUNNING:
        tail = f"  {format_rate(s.rate)}  ETA {fmt_time(s.eta)}"
    elif s.outcome is not None and not s.outcome.ok and s.outcome.message:
        tail = f"  {s.outcome.message}"
    else:
        tail = f"  in {fmt_time(s.elapsed)}" if s.state is JobState.FINISHED else ""
    return (f"{s.id}  {WORDS[s.state]:<11} {s.what}  {pct}{format_size(s.done)}{total}"
            f"{tail}")


def _left_json(x: died.Left) -> dict[str, Any]:
    return {"host": x.host, "error": x.error or None,
            "processes": [{"tag": f.tag, "state": f.state, "describe": f.describe()}
                          for f in x.found]}


def _left_lines(s: Status, left: list[died.Left]) -> list[str]:
    if s.state is not JobState.RUNNER_DIED:
        return []
    lines = [f"the runner (pid {s.pid}) is gone without an outcome; its log: "
             f"{runner.job_dir(s.id)}/runner.log"]
    for x in left:
        if x.error:
            lines.append(f"on {x.host}: could not look ({x.error})")
        elif x.found:
            lines += [f"on {x.host}: left {f.describe()}" for f in x.found]
        else:
            lines.append(f"on {x.host}: nothing of it left running")
    lines.append("the next `send` to the same destination stops what is left and resumes")
    return lines


def run_final_sync(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Ask a kept-in-sync job's runner for its final sync (here, or on its runner host),
    then follow it to the end. `--no-wait --json` says the record's sequence number after
    which the final sync's events come (a computer that asked over SSH follows from there)."""
    if not runner.known(args.id) and (p := remote.pointer(args.id)) is not None:
        return remote_jobs.final_sync(p, args, out, err, Shown(args, out, err))
    s = runner.status(args.id)
    k = keep.Keep.of(s)
    if k is None:
        raise InvalidNameError(f"job {args.id} is not kept in sync",
                               fix="`zmigrate send -r SRC@SNAP DST --final` runs a final sync "
                               "of a tree")
    if s.state.final:
        raise InvalidNameError(f"job {args.id} is not running: {job_line(s)}",
                               fix="`zmigrate send -r SRC DST --snapshot --final` runs a final "
                               "sync of the same tree")
    seen = final_sync_after(args.id, k.final)
    if not k.final:
        keep.request_final(args.id, s.pid)
    if args.json and args.no_wait:
        print_json({"event": "final-sync", "id": args.id, "after": seen,
                    "asked_before": k.final}, out)
    elif not args.json:
        print(remote_jobs.final_sync_words(args.id), file=err)
    if args.no_wait:
        return EXIT_OK
    return run_attach(args, out, err, after=seen)


def run_attach(args: argparse.Namespace, out: TextIO, err: TextIO, after: int = 0) -> int:
    """Follow the job from its first event (or after sequence number `after`, or --after's),
    here or on its runner host; exit with its outcome."""
    after = max(after, getattr(args, "after", 0) or 0)
    try:
        directory = runner.job_dir(args.id)
    except runner.JobNotFoundError:
        p = remote.pointer(args.id)
        if p is None:
            raise
        return remote_jobs.attach(p, Shown(args, out, err), after)
    shown = Shown(args, out, err)
    kept = keep.Keep.of(runner.status(args.id))
    if kept is not None and kept.fault and not shown.as_json and not after:
        # An unattended catch-up's fault is the first thing said (its events come last).
        print(f"job {args.id}: {keep.describe(kept, time.time())}", file=err)

    def alive() -> bool:
        return runner.status(args.id).state is not JobState.RUNNER_DIED

    for rec in runner.follow(directory, alive):
        if rec.seq > after:
            shown(rec)
    s = runner.status(args.id)
    if s.state.final and s.state is not JobState.RUNNER_DIED:
        runner.mark_watched(args.id)
    return shown.end(s)


class Shown:
    """A followed job's events as `attach` shows them: the live line, plain lines, --json,
    or (--record) the record's own lines."""

    def __init__(self, args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
        self.as_record = bool(getattr(args, "record", False))
        self.as_json = bool(args.json) or self.as_record
        self.out, self.err = out, err
        self.live = LiveLine(err) if err.isatty() and not self.as_json else None

    def __call__(self, rec: runner.Recorded) -> None:
        if self.as_record:
            print(record.encode(rec.seq, rec.event, rec.at), file=self.out, flush=True)
        else:
            self.show(rec.event)

    def show(self, event: Event) -> None:
        """An event as a local job's are shown: one of the record's, or one of this side's
        (touch with a runner host lost or back)."""
        if self.as_json:
            print_json(event_to_json(event), self.out)
        elif self.live is not None:
            self.live(event)
        else:
            plain(event, self.err)

    def end(self, s: Status) -> int:
        """The job's last line; the exit status its outcome gives."""
        if self.as_json:
            print_json({"event": "job", **s.to_json()}, self.out)
        else:
            if self.live is not None:
                self.err.write("\r\x1b[K")
            print(job_line(s), file=self.out)
        return {JobState.FINISHED: EXIT_OK, JobState.STOPPED: EXIT_CANCELLED}.get(
            s.state, EXIT_ERROR)


def run_stop(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    p = None if runner.known(args.id) else remote.pointer(args.id)
    if p is not None:
        return remote_jobs.stop(p, out, err)
    before = runner.status(args.id)
    if before.state.final:
        print(f"job {args.id} is not running: {job_line(before)}", file=err)
        return EXIT_OK if before.state is not JobState.RUNNER_DIED else EXIT_ERROR
    print(f"stopping job {args.id}: both ends...", file=err)
    s = runner.stop(args.id)
    print(job_line(s), file=out)
    return EXIT_OK if s.state in (JobState.STOPPED, JobState.FINISHED) else EXIT_ERROR


