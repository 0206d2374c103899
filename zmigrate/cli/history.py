"""`zmigrate history`: list past transfers, show one, export its samples as CSV or JSON."""

from __future__ import annotations

import argparse
import json
import time
from typing import TextIO

from ..engine.history import OUTCOMES, History, JobRecord, default_path, golive_log
from ..engine.units import format_rate, format_size
from . import words
from .common import EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `history` (and `history show`) to the CLI's subcommands."""
    hp = sub.add_parser("history", help="list past transfers, show one, export its samples",
                        description="Past transfers, newest first. The store is "
                        f"{default_path()} (set ZMIGRATE_DATA_DIR to use another folder).")
    hp.add_argument("-n", "--limit", type=int, default=50, help="show at most N jobs (default 50)")
    hp.add_argument("--outcome", choices=OUTCOMES, help="only jobs with this outcome")
    hp.add_argument("--filter", metavar="TEXT",
                    help="only jobs whose hosts, snapshot or destination contain TEXT")
    hp.add_argument("--json", action="store_true", help="one JSON object per job")
    hsub = hp.add_subparsers(dest="history_command")
    show = hsub.add_parser("show", help="details of one job; --csv/--json export its samples")
    show.add_argument("id", type=int, help="the job id, as `zmigrate history` lists it")
    fmt = show.add_mutually_exclusive_group()
    fmt.add_argument("--csv", action="store_true", help="export the samples as CSV")
    fmt.add_argument("--json", action="store_true",
                     help="export the job and its samples as JSON")
    show.add_argument("-o", "--output", metavar="FILE",
                      help="write the export to FILE instead of standard output")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The `history` command's handler (registered in cli._extra_commands)."""
    with History() as store:
        if getattr(args, "history_command", None) == "show":
            return _show(store, args, out, err)
        return _list(store, args, out)


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _route(job: JobRecord) -> str:
    return f"{job.source} → {job.destination}:{job.destination_dataset}"


def _list(store: History, args: argparse.Namespace, out: TextIO) -> int:
    jobs = store.jobs(limit=args.limit, filter=args.filter, outcome=args.outcome)
    if args.json:
        for job in jobs:
            data = job.to_json()
            data["verdict_text"] = words.stored_verdict(job)  # worded from the verdict's data
            print(json.dumps(data, default=str), file=out)
        return EXIT_OK
    if not jobs:
        print(f"no transfers recorded yet (history: {store.path})", file=out)
        return EXIT_OK
    rows = [(str(j.id), _when(j.started), _route(j), j.snapshot, j.outcome, format_size(j.bytes),
             format_rate(j.avg_rate), j.verdict or "-") for j in reversed(jobs)]
    head = ("ID", "START", "SOURCE → DESTINATION", "SNAPSHOT", "OUTCOME", "BYTES", "AVG RATE",
            "VERDICT")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    right = {0, 5, 6}
    for r in [head, *rows]:
        cells = [c.rjust(w) if i in right else c.ljust(w)
                 for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        print("  ".join(cells).rstrip(), file=out)
    _go_lives(store, args.filter, out)
    return EXIT_OK


def _go_lives(store: History, text: str | None, out: TextIO) -> None:
    """Going live and back (`zmigrate go-live`, Done's Go live), newest last."""
    found = [g for g in golive_log.rows(store, limit=20)
             if not text or text.lower() in f"{g.source_host}:{g.source} "
             f"{g.destination_host}:{g.destination}".lower()]
    if not found:
        return
    print("\ngone live:", file=out)
    for g in reversed(found):
        state = f"back {_when(g.back)}" if g.back is not None else g.state
        if g.state in (golive_log.GOING_LIVE, golive_log.GOING_BACK):
            state = f"cut off {g.state} ({g.completed} of {len(g.steps)} steps done)"
        print(f"  {_when(g.started)}  {g.source_host}:{g.source} → {g.destination_host}:"
              f"{g.destination}  {len(g.steps)} commands  {state}", file=out)


def _show(store: History, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    job = store.job(args.id)
    if args.csv or args.json:
        target: TextIO | str = args.output or out
        n = (store.export_csv if args.csv else store.export_json)(job.id, target)
        if args.output:
            print(f"wrote {n} samples of job {job.id} to {args.output}", file=err)
        return EXIT_OK
    lines = [
        f"job {job.id}  ({job.job_key})  {job.outcome}",
        f"  started      {_when(job.started)}",
        f"  ended        {_when(job.ended)}  (took {_duration(job.duration)})",
        f"  source       {job.source}  {job.snapshot}",
        f"  destination  {job.destination}  {job.destination_dataset}",
        f"  kind         {job.kind}" + (f" from @{job.base}" if job.base else ""),
        f"  transport    {job.transport}" + (f" port {job.port}" if job.port else ""),
        f"  bytes        {format_size(job.bytes)}"
        + (f" of about {format_size(job.estimate)}" if job.estimate else ""),
        f"  avg rate     {format_rate(job.avg_rate)}",
    ]
    window = (job.summary or {}).get("extra", {}).get("readonly_seconds")
    if window is not None:
        lines.append(f"  read-only    the source, {float(window):.1f} s (final sync: from "
                     "readonly=on until the copy was checked)")
    text = words.stored_verdict(job)
    if job.verdict or text:
        lines.append(f"  verdict      {job.verdict or ''}" + (f": {text}" if text else ""))
    if job.error:
        lines.append("  error        " + job.error.replace("\n", "\n               "))
    if job.outcome == "interrupted":
        lines.append(f"  note         the process died; last heartbeat {_when(job.heartbeat)}"
                     + (f" on {job.hostname} (pid {job.pid})" if job.hostname else ""))
    lines.append(f"  samples      {job.sample_rows} rows"
                 + (" (cap reached: later samples dropped)" if job.samples_truncated else ""))
    lines.append(f"  options      {json.dumps(job.options, sort_keys=True)}")
    if job.description:
        lines.append(f"  plan         {job.description}")
    lines.append("  commands:")
    for host, command in job.commands:
        lines.append(f"    # on {host}:")
        lines.append(f"    {command}")
    print("\n".join(lines), file=out)
    return EXIT_OK
