"""Jobs whose runner is another machine (`send --detach --runner HOST`): the logins HOST will
use, checked there before anything moves; `jobs`, `attach` and `stop` of such a job run
zmigrate on HOST over SSH (engine/runner/remote.py) and word its answers here."""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import Any, Protocol, TextIO

from ..engine.errors import ZmigrateError
from ..engine.events import OutOfTouch
from ..engine.hosts.login import HostSpec
from ..engine.hosts.remembered import SessionLogins
from ..engine.runner import elsewhere, place, remote
from ..engine.runner.record import Recorded
from ..engine.runner.remote import Pointer, Reach, RemoteRunner, RemoteRunnerError
from ..engine.runner.state import Status
from ..engine.runner.through_losses import FollowingThroughLosses
from .common import EXIT_ERROR, EXIT_OK, TerminalPrompts, print_json

# How `jobs` words one job (jobs.job_line: passed in, as jobs.py imports this module).
Line = Callable[[Status], str]


class Shows(Protocol):
    """How `attach` shows a followed job (jobs.Shown)."""

    def __call__(self, rec: Recorded) -> None: ...

    def show(self, event: OutOfTouch) -> None: ...

    def end(self, s: Status) -> int: ...


# `send` options this side takes (the runner host is told to detach by itself).
_LOCAL_ONLY = (("--runner", True), ("--detach", False))


def remote_argv(argv: list[str]) -> list[str]:
    """`send`'s arguments without --runner HOST and --detach (or argparse's unique
    abbreviations of them, which reach here only where they were unique)."""
    out: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        name = a.split("=", 1)[0]
        hit = next((value for opt, value in _LOCAL_ONLY
                    if a.startswith("--") and len(name) >= 4 and opt.startswith(name)), None)
        if hit is None:
            out.append(a)
        else:
            skip = hit and "=" not in a
    return out


@contextlib.contextmanager
def _runner(name: str, zmigrate: str = "") -> Iterator[RemoteRunner]:
    rr = RemoteRunner.open(name, TerminalPrompts(), zmigrate)
    try:
        yield rr
    finally:
        rr.close()


def detach(args: argparse.Namespace, src_host: str, dst_host: str, out: TextIO) -> int:
    """Start the job on the runner host: zmigrate there, its logins to both hosts checked
    (said, then refused with the fix if one fails), then `send --detach` there; keep the
    pointer."""
    for text in (src_host, dst_host):
        HostSpec.parse(text)  # validated here: HOST is handed them as they are
    hosts = [(src_host, bool(args.sudo or args.sudo_source)),
             (dst_host, bool(args.sudo or args.sudo_destination))]
    if hosts[0] == hosts[1]:
        hosts.pop()
    with _runner(args.runner) as rr:
        reach = rr.reach(hosts)
        _say_reach(rr, reach, args.json, out)
        for r in reach:
            if not r.ok:
                raise elsewhere.refusal(rr.name, r)
        job = rr.start(remote_argv(list(getattr(args, "argv", []))))
    p = Pointer(place.valid_id(str(job["id"])), args.runner, rr.zmigrate,
                str(job.get("what", "")), float(job.get("started") or time.time()))
    remote.save_pointer(p)
    if args.json:
        print_json({**job, "runner": p.runner}, out)
    else:
        note = f"  note:       {job['note']}\n" if job.get("note") else ""
        print(f"started job {p.id} on {p.runner}: {p.what}\n{note}"
              f"  follow it:  zmigrate attach {p.id}\n"
              f"  stop it:    zmigrate stop {p.id}\n"
              f"  all jobs:   zmigrate jobs   (all on {p.runner}: zmigrate jobs --runner "
              f"{p.runner})", file=out)
    return EXIT_OK


def _say_reach(rr: RemoteRunner, reach: list[Reach], as_json: bool, out: TextIO) -> None:
    """The plan's word on the runner: where its zmigrate is and how it logs in to each host."""
    if as_json:
        print_json({"event": "runner", "runner": rr.name, "zmigrate": rr.zmigrate,
                    "reach": [asdict(r) for r in reach]}, out)
        return
    print(f"runner {rr.name}: {rr.zmigrate}", file=out)
    for r in reach:
        if not r.ok:
            print(f"  {r.host}: cannot log in ({r.message})", file=out)
        elif r.login == "this machine":
            print(f"  {r.host}: {rr.name} itself", file=out)
        else:
            keys = ", ".join(r.identities) or "its agent and default keys"
            print(f"  logs in to {r.host} as {r.login} with {keys} (its ssh config: "
                  f"{r.ssh_config})", file=out)


def run_reach(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`_reach HOST...` (on the runner host): one JSON line per host, whether it logs in."""
    for text in args.hosts:
        print_json(asdict(remote.check_reach(text)), out)
    return EXIT_OK


def _remote_jobs(rr: RemoteRunner, scan: bool) -> list[dict[str, Any]]:
    code, stdout, stderr = rr.run("jobs", "--json", *(() if scan else ("--no-scan",)))
    if code != 0:
        raise RemoteRunnerError(f"`zmigrate jobs` on {rr.name} failed: "
                                f"{(stderr.strip().splitlines() or ['no output'])[-1]}")
    rows = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return [d for d in rows if d.get("event") == "job"]


def run_jobs_on(args: argparse.Namespace, out: TextIO, line: Line) -> int:
    """`jobs --runner HOST`: every job on HOST, as HOST has it."""
    with _runner(args.runner) as rr:
        rows = _remote_jobs(rr, not args.no_scan)
    for d in rows:
        _print_remote(d, args.runner, args.json, out, line)
    if not rows and not args.json:
        print(f"no jobs on {args.runner}", file=out)
    return EXIT_OK


def print_known(args: argparse.Namespace, out: TextIO, line: Line) -> int:
    """After `jobs`' own list: the remote jobs this side started, as their runners have them
    (one login per runner host; a host that does not answer is said so). How many."""
    by_runner: dict[str, list[Pointer]] = {}
    for p in remote.pointers():
        by_runner.setdefault(p.runner, []).append(p)
    for name, known in by_runner.items():
        try:
            with _runner(name, known[0].zmigrate) as rr:
                rows = {d.get("id"): d for d in _remote_jobs(rr, False)}
        except ZmigrateError as exc:  # not logged in, or lost while it answered
            for p in known:
                _print_missing(p, "unreachable", exc.message, args.json, out)
            continue
        for p in known:
            if p.id in rows:
                _print_remote(rows[p.id], name, args.json, out, line)
            else:
                _print_missing(p, "unknown", f"{name} has no record of it", args.json, out)
    return sum(len(v) for v in by_runner.values())


def _print_remote(d: dict[str, Any], runner: str, as_json: bool, out: TextIO,
                  line: Line) -> None:
    if as_json:
        print_json({**d, "runner": runner}, out)
        return
    s = Status.from_json(d)
    print(f"{line(s)}  [runner {runner}]", file=out)
    if s.live_note:
        print(f"    {s.live_note}", file=out)
    for x in d.get("left") or ():
        if x.get("error"):
            print(f"    on {x['host']}: could not look ({x['error']})", file=out)
        for proc in x.get("processes") or ():
            print(f"    on {x['host']}: left {proc['describe']}", file=out)


def _print_missing(p: Pointer, state: str, why: str, as_json: bool, out: TextIO) -> None:
    if as_json:
        print_json({"event": "job", "id": p.id, "what": p.what, "runner": p.runner,
                    "state": state, "error": why}, out)
    else:
        print(f"{p.id}  {state:<11} {p.what}  [runner {p.runner}: {why}]", file=out)


def attach(p: Pointer, shown: Shows, after: int = 0) -> int:
    """Follow the remote job: its record's lines as they come from `attach --record` there
    (those after sequence number `after`), shown as a local job's are; through a lost session
    (logged in again, each event once), saying so meanwhile."""
    following = FollowingThroughLosses(p, shown.show, SessionLogins(TerminalPrompts()),
                                       after=after)
    for rec in following.records():
        if rec.seq > after:
            shown(rec)
    status = following.status
    if status is None:
        raise RemoteRunnerError(f"{p.runner} said nothing of job {p.id}",
                                fix=f"`zmigrate jobs --runner {p.runner}` lists its jobs")
    return shown.end(status)


def final_sync(p: Pointer, args: argparse.Namespace, out: TextIO, err: TextIO,
               shown: Shows) -> int:
    """`final-sync ID` of a job on a runner host: asked there (`final-sync --no-wait` on
    HOST, its refusal raised with its words), then followed from the events after the
    request to the job's end."""
    with _runner(p.runner, p.zmigrate) as rr:
        after = elsewhere.ask_final(rr, p.id)
    if args.json and args.no_wait:
        print_json({"event": "final-sync", "id": p.id, "after": after, "runner": p.runner},
                   out)
    elif not args.json:
        print(final_sync_words(p.id, p.runner), file=err)
    if args.no_wait:
        return EXIT_OK
    return attach(p, shown, after)


def final_sync_words(job_id: str, where: str = "") -> str:
    """What `final-sync` says once it asked (`where`: the runner host asked)."""
    return (f"final sync of job {job_id} asked{f' of {where}' if where else ''}: the runner "
            "stops repeating and cuts over (the source goes read-only; a catch-up running now "
            "ends first)")


def stop(p: Pointer, out: TextIO, err: TextIO) -> int:
    """`stop ID` on the runner host (both ends stopped there), its words relayed."""
    with _runner(p.runner, p.zmigrate) as rr:
        code, stdout, stderr = rr.run("stop", p.id, timeout=300)
    out.write(stdout)
    err.write(stderr)
    return code if code >= 0 else EXIT_ERROR
