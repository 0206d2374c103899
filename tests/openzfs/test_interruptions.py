"""Interruptions against a real OpenZFS 2.3 host: each ends in an error within 10 s naming the
host and what happened, leaves no process of the job in the guest, keeps the destination's
receive_resume_token, and `--resume` then sends only the rest.

Covered here: a killed sender mbuffer, a dropped source control session, a crash (SIGKILL) of
zmigrate itself, and the ssh transport with its inner ssh killed. (The receiver side, a full
pool, a dropped destination session and cancel are in test_openzfs.py.) Also: `zmigrate list
--json` shows bookmarks.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from lab.util import events_in

from zmigrate.engine.errors import TransferError
from zmigrate.engine.events import Progress
from zmigrate.engine.hosts import Host
from zmigrate.engine.hosts.login import HostSpec, connect
from zmigrate.engine.job import Job, Request
from zmigrate.engine.transports import Transport
from zmigrate.engine.units import MiB

from .cli import cli, send, start_send, two_hosts_config
from .test_openzfs import _data, _guid, _leftovers, _opts, _prop, _wait
from .vm import Pair, Vm

pytestmark = pytest.mark.openzfs
MB = 24  # source data; the stream runs at 3 MiB/s and is cut after ~5 MiB
RATE = 3 * MiB


def _full_size(vm: Vm, snap: str) -> int:
    return int(vm.ssh(f"zfs send -nP -c -L -e {snap} | awk '$1==\"size\"{{print $2}}'").stdout)


def _keys(tag: str, job: Job | None) -> list[str]:
    """What names the job's processes in `ps`: the dataset, the port, the ssh transport's
    receive mark."""
    keys = [tag]
    if job is not None and job.plan is not None:
        if job.plan.port:
            keys.append(f":{job.plan.port}")
        keys += [s.receive_mark for s in job.plan.steps if s.receive_mark]
    return keys


def _procs(vm: Vm, keys: list[str]) -> list[str]:
    """_leftovers plus any other process (ssh, tail -F, wrapper shells) naming one of `keys`."""
    out = vm.ssh("ps -eo pid,args", check=False).stdout.splitlines()
    extra = [line for line in out if any(k in line for k in keys) and "ps -eo" not in line
             and ("ssh " in line or "tail " in line)]
    return sorted(set(_leftovers(vm, *keys) + extra))


def _interrupt(pair: Pair, tag: str, action: Callable[[Job], None], *,
               src: Host | None = None, dst: Host | None = None,
               **kw: object) -> tuple[Job, float]:
    """Start a 3 MiB/s full send of srcpool/TAG@s1, run `action` after ~5 MiB, wait <= 10 s."""
    seen: list[object] = []
    job = Job(src or pair.src, dst or pair.dst,
              Request(f"srcpool/{tag}@s1", f"dstpool/{tag}", _opts(rate_limit=RATE, **kw)),
              seen.append, src_caps=pair.src_caps, dst_caps=pair.dst_caps)
    job.start()
    try:
        assert _wait(lambda: any(isinstance(e, Progress) and e.done > 5 * MiB for e in seen),
                     90), "the transfer did not get going"
        t0 = time.monotonic()
        action(job)
        ended = job.wait(10)
        took = time.monotonic() - t0
        assert ended, f"no error within 10 s of the interruption ({took:.1f} s)"
        return job, took
    finally:
        if not job.done:
            job.cancel()
            job.wait(30)


def _resume(pair: Pair, vm: Vm, tag: str, label: str, **kw: object) -> None:
    """The token is there; --resume sends only the rest and the copy matches."""
    src, dst = f"srcpool/{tag}", f"dstpool/{tag}"
    token = _prop(vm, dst, "receive_resume_token")
    assert token not in ("", "-"), "the resumable state was lost"
    job = Job(pair.src, pair.dst, Request(f"{src}@s1", dst, _opts(resume=True, **kw)),
              src_caps=pair.src_caps, dst_caps=pair.dst_caps)
    summary = job.run()
    plan = job.plan
    assert plan is not None and plan.resume_token == token and plan.estimate
    remaining = plan.estimate
    print(f"{label}: resumed after {plan.resumed_from} B, remaining {remaining} B, moved "
          f"{summary.bytes} B ({summary.bytes / remaining:.4f}x)")
    assert plan.resumed_from > 4 * MiB
    assert plan.resumed_from + remaining == _full_size(vm, f"{src}@s1")
    # A resumed stream has fixed overhead (headers, the object records around the resume
    # point), which dominates when only a few hundred KiB were left: allow it on top.
    assert summary.bytes <= remaining * 1.05 + 256 * 1024
    assert summary.verified and _guid(vm, f"{src}@s1") == _guid(vm, f"{dst}@s1")
    assert _prop(vm, dst, "receive_resume_token") == "-"


def _gone(vm: Vm, keys: list[str], within: float) -> None:
    assert _wait(lambda: _procs(vm, keys) == [], within), _procs(vm, keys)


# -- a killed sender mbuffer -----------------------------------------------------------------------
def test_killed_sender_mbuffer_is_a_clear_error(pair: Pair, vm: Vm, tag: str) -> None:
    _data(vm, f"srcpool/{tag}", MB)

    def kill(job: Job) -> None:
        assert job.plan is not None and job.plan.port
        vm.ssh(f"pkill -9 -f '^mbuffer .*-O 127.0.0.1:{job.plan.port}'")
    job, took = _interrupt(pair, tag, kill)
    print(f"\nKILLED SENDER MBUFFER -> {took:.1f} s: {job.error}")
    assert isinstance(job.error, TransferError), job.error
    assert job.error.host == pair.src.label
    assert "sender" in job.error.message and "killed" in job.error.message.lower()
    assert "--resume" in str(job.error) and job.partial_kept
    _gone(vm, _keys(tag, job), 10)
    _resume(pair, vm, tag, "KILLED SENDER MBUFFER")


# -- a dropped source control session --------------------------------------------------------------
def _kill_session_of(via: Host, pgid: int) -> None:
    """kill -9 the sshd process that serves the session in which group `pgid` runs, through
    `via`, a session already open to the guest (a fresh login took up to 26 s under load, and
    the transfer had ended by then)."""
    r = via.run(f"p={pgid}; while [ \"${{p:-0}}\" -gt 1 ]; do "
                f"c=$(ps -o comm= -p $p); [ \"$c\" = sshd ] && {{ kill -9 $p; exit 0; }}; "
                f"p=$(ps -o ppid= -p $p | tr -d ' '); done; "
                f"echo 'group {pgid} is gone' >&2; exit 1", timeout=60)
    assert r.status == 0, r.stderr


def test_dropped_source_session_is_a_clear_error(pair: Pair, vm: Vm, tag: str) -> None:
    _data(vm, f"srcpool/{tag}", MB)
    src = connect(HostSpec("openzfs-vm"))

    def drop(job: Job) -> None:
        runner = job._runner
        assert runner is not None
        sender = next(p for p in runner._procs if p.host is src)
        assert sender.pgid is not None
        _kill_session_of(pair.dst, sender.pgid)
    try:
        job, took = _interrupt(pair, tag, drop, src=src)
    finally:
        src.close()
    print(f"\nDROPPED SOURCE SESSION -> {took:.1f} s: {job.error}")
    assert isinstance(job.error, TransferError), job.error
    assert f"SSH control session to {src.label} was lost" in str(job.error)
    assert job.error.host == src.label
    assert job.partial_kept
    _gone(vm, _keys(tag, job), 15)
    _resume(pair, vm, tag, "DROPPED SOURCE SESSION")


# -- a crash of zmigrate itself --------------------------------------------------------------------
def test_crash_of_zmigrate_ends_the_remote_pipelines(vm: Vm, tag: str, tmp_path: Path) -> None:
    src, dst = f"srcpool/{tag}", f"dstpool/{tag}"
    _data(vm, src, MB)
    # The destination is the same guest under another alias: a tcp transfer between two
    # control sessions, as between two hosts.
    config = two_hosts_config(vm, tmp_path)
    events = tmp_path / "events.jsonl"
    with events.open("wb") as sink:
        cli = start_send(vm, config, f"openzfs-vm:{src}@s1", f"openzfs-dst:{dst}", "--bwlimit",
                         "3M", stdout=sink)
    try:
        def going() -> bool:
            return any(e.get("event") == "progress" and int(str(e.get("done"))) > 5 * MiB
                       for e in events_in(events.read_text(), cut_off_ok=True))
        assert _wait(going, 90), events.read_text()[-2000:] + (
            cli.stderr.read() if cli.poll() is not None and cli.stderr else "")
        plan = next(e for e in events_in(events.read_text(), cut_off_ok=True)
                    if e["event"] == "plan")
        assert plan["transport"] == "tcp" and plan["destination"] == "openzfs-dst"
        keys = [tag, f":{plan['port']}"]
        assert _leftovers(vm, *keys), "the transfer's processes should be running"
        os.kill(cli.pid, signal.SIGKILL)
        t0 = time.monotonic()
        cli.wait(10)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait(10)
        if cli.stderr:
            cli.stderr.close()
    # Nobody is left to stop them: the pipelines must end when their channels close.
    _gone(vm, keys, 15)
    gone = time.monotonic() - t0
    print(f"\nCRASH: the guest's processes ended {gone:.1f} s after SIGKILL of zmigrate")
    token = _prop(vm, dst, "receive_resume_token")
    assert token not in ("", "-"), "the resumable state was lost"
    full = _full_size(vm, f"{src}@s1")
    r = send(vm, config, f"openzfs-vm:{src}@s1", f"openzfs-dst:{dst}", "--resume", timeout=300)
    assert r.returncode == 0, r.stderr + r.stdout
    out = r.events
    plan = next(e for e in out if e["event"] == "plan")
    done = next(e for e in out if e["event"] == "done")
    resumed_from, remaining = int(str(plan["resumed_from"])), int(str(plan["estimate"]))
    moved = int(str(done["bytes"]))
    print(f"CRASH: resumed after {resumed_from} B, remaining {remaining} B, moved {moved} B "
          f"({moved / remaining:.4f}x)")
    assert plan["resume"] is True and resumed_from > 4 * MiB and resumed_from + remaining == full
    assert moved <= remaining * 1.05 and done["verified"] is True
    assert _guid(vm, f"{src}@s1") == _guid(vm, f"{dst}@s1")
    assert _prop(vm, dst, "receive_resume_token") == "-"


# -- the ssh transport, its inner ssh killed -------------------------------------------------------
INNER_KEY = "/root/.ssh/id_zmigrate_lane"


def _inner_ssh_options(vm: Vm) -> tuple[str, ...]:
    """A key with which the guest's own ssh reaches its sshd (set up once, kept)."""
    vm.ssh(f"test -f {INNER_KEY} || ssh-keygen -q -t ed25519 -N '' -C zmigrate-lane "
           f"-f {INNER_KEY}; k=$(cat {INNER_KEY}.pub); "
           f"grep -qxF \"$k\" /root/.ssh/authorized_keys || echo \"$k\" >> "
           f"/root/.ssh/authorized_keys")
    return (f"-oIdentityFile={INNER_KEY}", "-oStrictHostKeyChecking=accept-new",
            "-oUserKnownHostsFile=/root/.ssh/zmigrate_lane_known_hosts")


def test_killed_ssh_of_the_ssh_transport_is_a_clear_error(pair: Pair, vm: Vm, tag: str) -> None:
    # More data: the receiver's progress shows only once the inner ssh is up and tail -F has
    # read the receiver's log (a few seconds under TCG).
    _data(vm, f"srcpool/{tag}", 40)
    ssh = {"transport": Transport.SSH, "ssh_target": "root@127.0.0.1",
           "ssh_options": _inner_ssh_options(vm)}

    def kill(job: Job) -> None:
        vm.ssh(f"pkill -9 -f '^ssh -o BatchMode=yes .*dstpool/{tag}'")
    job, took = _interrupt(pair, tag, kill, **ssh)
    print(f"\nKILLED INNER SSH -> {took:.1f} s: {job.error}")
    assert isinstance(job.error, TransferError), job.error
    assert job.error.host == pair.src.label
    assert "sender" in job.error.message and "ssh" in job.error.message
    assert job.partial_kept
    _gone(vm, _keys(tag, job), 10)
    _resume(pair, vm, tag, "KILLED INNER SSH", **ssh)


# -- zmigrate list --json shows bookmarks ----------------------------------------------------------
def test_list_json_shows_bookmarks(vm: Vm, tag: str) -> None:
    src = f"srcpool/{tag}"
    _data(vm, src, 1)
    vm.ssh(f"zfs bookmark {src}@s1 {src}#b1")
    r = cli(vm, "list", f"openzfs-vm:{src}", "--json", timeout=120)
    assert r.returncode == 0, r.stderr
    row = next(x for x in r.events if x["name"] == src)
    marks = row["bookmarks"]
    assert isinstance(marks, list) and [m["name"] for m in marks] == [f"{src}#b1"]
    assert marks[0]["guid"] == _guid(vm, f"{src}@s1") == _guid(vm, f"{src}#b1")
    assert marks[0]["createtxg"] > 0 and marks[0]["creation"] > 0
