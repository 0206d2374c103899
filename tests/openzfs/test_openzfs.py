"""zmigrate against a real OpenZFS 2.3 host: transfers, resume/discard, raw sends, -R,
delegated (non-root) users, bookmarks, and interruptions that must end in clear errors."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable

import pytest

from zmigrate.engine import zfs
from zmigrate.engine.errors import PreflightError, TransferError, ZmigrateError
from zmigrate.engine.events import Progress
from zmigrate.engine.hosts import Host
from zmigrate.engine.hosts.login import HostSpec, connect
from zmigrate.engine.job import Job, Request, discard_partial, partial_receive
from zmigrate.engine.plan import Options, PartialReceiveError
from zmigrate.engine.transports import Transport
from zmigrate.engine.units import MiB

from .cli import cli
from .vm import Pair, Vm, connect_dst

pytestmark = pytest.mark.openzfs
LOOP = {"connect_address": "127.0.0.1", "allow_address": "127.0.0.1",
        "buffer_size": 16 * MiB}


def _opts(**kw: object) -> Options:
    return Options(**{**LOOP, **kw})  # type: ignore[arg-type]


def _data(vm: Vm, ds: str, mb: int, *, snap: str | None = "s1", extra: str = "") -> None:
    vm.ssh(f"zfs create {extra} {ds} && head -c {mb}M /dev/urandom > /{ds}/f0"
           + (f" && zfs snapshot {ds}@{snap}" if snap else ""))


def _guid(vm: Vm, name: str) -> int:
    return int(vm.ssh(f"zfs get -Hp -o value guid {name}").stdout)


def _prop(vm: Vm, name: str, prop: str) -> str:
    return vm.ssh(f"zfs get -Hp -o value {prop} {name}").stdout.strip()


def _leftovers(vm: Vm, *keys: str) -> list[str]:
    """zfs send/receive and mbuffer processes in the guest that mention one of `keys`."""
    out = vm.ssh("ps -eo pid,args", check=False).stdout.splitlines()
    return [line for line in out
            if ("zfs " in line or "mbuffer" in line) and any(k in line for k in keys)
            and "ps -eo" not in line]


def _wait(cond: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def _job(pair: Pair, snapshot: str, dest: str, seen: list[object] | None = None,
         src: Host | None = None, dst: Host | None = None, **kw: object) -> Job:
    return Job(src or pair.src, dst or pair.dst, Request(snapshot, dest, _opts(**kw)),
               seen.append if seen is not None else None,
               src_caps=pair.src_caps if src is None else None,
               dst_caps=pair.dst_caps if dst is None else None)


def _interrupted(pair: Pair, vm: Vm, tag: str, action: Callable[[Job], None],
                 dst: Host | None = None, **kw: object) -> tuple[Job, float]:
    """Start a rate-limited full send of srcpool/TAG@s1 (with options `kw`), run `action`
    after ~5 MiB, wait."""
    seen: list[object] = []
    job = _job(pair, f"srcpool/{tag}@s1", f"dstpool/{tag}", seen, dst=dst,
               rate_limit=3 * MiB, **kw)
    job.start()
    try:
        assert _wait(lambda: any(isinstance(e, Progress) and e.done > 5 * MiB for e in seen),
                     90), "the transfer did not get going"
        t0 = time.monotonic()
        action(job)
        assert job.wait(30), "the job did not end after the interruption"
        return job, time.monotonic() - t0
    finally:
        if not job.done:
            job.cancel()
            job.wait(30)


# -- probe and parsers on the live host ------------------------------------------------------------
def test_probe_finds_openzfs_features(pair: Pair) -> None:
    caps = pair.src_caps
    assert caps.dialect == "openzfs" and caps.zfs_version and caps.zfs_version.startswith("2.3")
    assert caps.send_estimate and caps.resumable and caps.raw_send and caps.compressed_send
    assert caps.large_blocks and caps.embedded_send and caps.discard_partial and caps.bookmarks
    assert caps.receive_properties and caps.root and caps.user == "root"


# -- (a) full and incremental ----------------------------------------------------------------------
def test_full_then_incremental_with_exact_estimates(pair: Pair, vm: Vm, tag: str) -> None:
    src, dst = f"srcpool/{tag}", f"dstpool/{tag}"
    _data(vm, src, 12)
    job = _job(pair, f"{src}@s1", dst, verify_hash=True)
    summary = job.run()
    plan = job.plan
    assert plan is not None and plan.kind == "full" and plan.estimate_exact
    assert plan.resumable and "-c" in plan.send_flags and "-L" in plan.send_flags
    # -nvP is exact up to record headers: the stream mbuffer measured is within 3 %.
    assert abs(summary.bytes - plan.estimate) <= plan.estimate * 0.03, (summary.bytes,
                                                                        plan.estimate)
    print(f"\nESTIMATE: -nvP {plan.estimate} B, measured {summary.bytes} B")
    assert summary.verified and summary.hash_match
    assert _guid(vm, f"{src}@s1") == _guid(vm, f"{dst}@s1")
    assert _prop(vm, dst, "readonly") == "on"
    for i in (2, 3):
        vm.ssh(f"head -c 2M /dev/urandom > /{src}/f{i} && zfs snapshot {src}@s{i}")
    job = _job(pair, f"{src}@s3", dst)
    summary = job.run()
    assert job.plan is not None and job.plan.kind == "incremental" and job.plan.base == "s1"
    assert job.plan.arrives == ("s2", "s3") and job.plan.estimate
    assert abs(summary.bytes - job.plan.estimate) <= job.plan.estimate * 0.03
    for s in ("s1", "s2", "s3"):
        assert _guid(vm, f"{src}@{s}") == _guid(vm, f"{dst}@{s}")
    assert _leftovers(vm, tag) == []


def test_receive_refuses_a_stream_with_one_flipped_bit(vm: Vm, tag: str) -> None:
    """What zmigrate's default check rests on (without --hash): OpenZFS's zfs receive verifies
    the stream's own checksums and refuses a stream damaged anywhere in flight."""
    src = f"srcpool/{tag}"
    _data(vm, src, 8)
    stream = f"/tmp/{tag}.zstream"
    flip = (f"zfs send {src}@s1 > {stream} && off=$(( $(stat -c %s {stream}) / 2 )) && "
            f"b=$(dd if={stream} bs=1 skip=$off count=1 2>/dev/null | od -An -tu1 | tr -d ' ') && "
            f"printf \"$(printf '\\\\%03o' $((b ^ 1)))\" | "
            f"dd of={stream} bs=1 seek=$off conv=notrunc 2>/dev/null && "
            f"cmp -l <(zfs send {src}@s1) {stream} | wc -l")
    assert vm.ssh(f"bash -c {shlex.quote(flip)}").stdout.strip() == "1"  # one byte differs
    r = vm.ssh(f"zfs receive dstpool/{tag} < {stream}; rc=$?; rm -f {stream}; exit $rc",
               check=False)
    assert r.returncode != 0 and "checksum mismatch" in r.stderr, r.stderr
    assert vm.ssh(f"zfs list dstpool/{tag}", check=False).returncode != 0


# -- (b) resume and discard ------------------------------------------------------------------------
def test_cancelled_transfer_resumes_with_only_the_rest(pair: Pair, vm: Vm, tag: str) -> None:
    src, dst = f"srcpool/{tag}", f"dstpool/{tag}"
    _data(vm, src, 24)
    full = int(vm.ssh(f"zfs send -nP -c -L -e {src}@s1 | awk '$1==\"size\"{{print $2}}'").stdout)
    job, took = _interrupted(pair, vm, tag, lambda j: j.cancel())
    assert took < 10
    assert job.error is not None and "--resume" in str(job.error)
    assert job.partial_kept
    token = _prop(vm, dst, "receive_resume_token")
    assert token not in ("", "-")
    assert _wait(lambda: _leftovers(vm, tag) == [], 10), _leftovers(vm, tag)
    # Without a choice the next run refuses, naming both.
    with pytest.raises(PartialReceiveError) as info:
        _job(pair, f"{src}@s1", dst).prepare()
    assert "--resume" in str(info.value) and "--discard-partial" in str(info.value)
    # The GUI's view of it.
    found = partial_receive(pair.src, pair.dst, dst, dst_caps=pair.dst_caps)
    assert found is not None and found.toname == f"{src}@s1" and found.received > 4 * MiB
    seen: list[object] = []
    job = _job(pair, f"{src}@s1", dst, seen, resume=True)
    summary = job.run()
    plan = job.plan
    assert plan is not None and plan.resume_token == token and plan.estimate_exact
    remaining = plan.estimate
    assert remaining is not None and plan.resumed_from == found.received
    assert plan.resumed_from + remaining == full  # -nvP -t: the exact rest
    print(f"\nRESUME: full stream {full} B, already received {plan.resumed_from} B, "
          f"remaining {remaining} B, resumed run moved {summary.bytes} B "
          f"({summary.bytes / remaining:.4f}x the remaining)")
    assert summary.bytes <= remaining * 1.05
    progress = [e for e in seen if isinstance(e, Progress)]
    assert progress[0].done >= plan.resumed_from and progress[0].total == full
    assert summary.verified and summary.extra["resumed_from"] == plan.resumed_from
    assert _guid(vm, f"{src}@s1") == _guid(vm, f"{dst}@s1")
    assert _prop(vm, dst, "receive_resume_token") == "-"


def test_relay_cancelled_transfer_resumes_with_only_the_rest(pair: Pair, vm: Vm,
                                                              tag: str) -> None:
    """The relay transport (the stream goes through this machine) keeps a resumable partial
    receive on cancel, and the next run sends only the rest, through the relay again."""
    src, dst = f"srcpool/{tag}", f"dstpool/{tag}"
    _data(vm, src, 24)
    job, _ = _interrupted(pair, vm, tag, lambda j: j.cancel(), transport=Transport.RELAY)
    assert job.plan is not None and job.plan.transport is Transport.RELAY
    assert job.error is not None and "--resume" in str(job.error)
    token = _prop(vm, dst, "receive_resume_token")
    assert token not in ("", "-")
    assert _wait(lambda: _leftovers(vm, tag) == [], 10), _leftovers(vm, tag)
    job = _job(pair, f"{src}@s1", dst, resume=True, transport=Transport.RELAY)
    summary = job.run()
    plan = job.plan
    assert plan is not None and plan.resume_token == token and plan.transport is Transport.RELAY
    remaining, resumed_from = plan.estimate, plan.resumed_from
    assert remaining is not None and resumed_from is not None and resumed_from > 4 * MiB
    print(f"\nRELAY RESUME: already received {resumed_from} B, remaining {remaining} B, "
          f"resumed run moved {summary.bytes} B")
    assert summary.bytes <= remaining * 1.05
    assert summary.verified
    assert _guid(vm, f"{src}@s1") == _guid(vm, f"{dst}@s1")
    assert _prop(vm, dst, "receive_resume_token") == "-"


def test_discard_partial_then_send_afresh(pair: Pair, vm: Vm, tag: str) -> None:
    src, dst = f"srcpool/{tag}", f"dstpool/{tag}"
    _data(vm, src, 16)
    _interrupted(pair, vm, tag, lambda j: j.cancel())
    assert _prop(vm, dst, "receive_resume_token") != "-"
    discard_partial(pair.dst, dst, dst_caps=pair.dst_caps)
    assert vm.ssh(f"zfs list {dst}", check=False).returncode != 0  # a partial first receive
    _interrupted(pair, vm, tag, lambda j: j.cancel())
    job = _job(pair, f"{src}@s1", dst, discard_partial=True)
    summary = job.run()
    assert job.plan is not None and job.plan.discard and "receive -A" in job.plan.discard
    assert summary.verified


# -- (c) raw/encrypted and interruptions -----------------------------------------------------------
def test_encrypted_dataset_is_sent_raw_and_stays_encrypted(pair: Pair, vm: Vm, tag: str) -> None:
    src, dst = f"srcpool/{tag}", f"dstpool/{tag}"
    vm.ssh(f"head -c 32 /dev/urandom > /root/{tag}.key")
    _data(vm, src, 4, extra=f"-o encryption=on -o keyformat=raw "
                            f"-o keylocation=file:///root/{tag}.key")
    job = _job(pair, f"{src}@s1", dst)
    summary = job.run()
    assert job.plan is not None and job.plan.raw and "-w" in job.plan.send_flags
    assert " -w " in job.plan.steps[0].source_command
    assert summary.verified
    assert _prop(vm, dst, "encryption") == "aes-256-gcm"
    assert _prop(vm, dst, "keystatus") == "unavailable"
    assert _guid(vm, f"{src}@s1") == _guid(vm, f"{dst}@s1")
    # Decrypted only when asked, with a warning.
    plan = _job(pair, f"{src}@s1", f"dstpool/{tag}-plain", decrypt=True).prepare()
    assert not plan.raw and any("DECRYPTED" in w for w in plan.warnings)
    vm.ssh(f"rm -f /root/{tag}.key")


def _kill_receiver_mbuffer(vm: Vm) -> Callable[[Job], None]:
    def action(job: Job) -> None:
        assert job.plan is not None and job.plan.port
        vm.ssh(f"kill -9 $(pgrep -f '^mbuffer .*-I 127.0.0.1:{job.plan.port}')")
    return action


def test_killed_receiver_mbuffer_is_a_clear_error(pair: Pair, vm: Vm, tag: str) -> None:
    _data(vm, f"srcpool/{tag}", 24)
    job, took = _interrupted(pair, vm, tag, _kill_receiver_mbuffer(vm))
    assert took < 10, took
    assert isinstance(job.error, TransferError), job.error
    assert job.error.host == pair.dst.label
    print(f"\nKILLED MBUFFER -> {took:.1f} s: {job.error}")
    assert _wait(lambda: _leftovers(vm, tag, str(job.plan.port if job.plan else "-")) == [], 10)
    assert _prop(vm, f"dstpool/{tag}", "receive_resume_token") != "-"


def test_full_destination_pool_is_a_clear_error(pair: Pair, vm: Vm, tag: str) -> None:
    _data(vm, f"srcpool/{tag}", 32)

    def fill(job: Job) -> None:
        # Leave ~8 MiB: the receive runs out of space a few seconds later.
        # (dirty data of the running receive is not in `available` yet: try a few margins)
        vm.ssh(f"for m in 8 16 24 32; do a=$(zfs get -Hp -o value available dstpool); "
               f"zfs create -o reservation=$((a - m * {MiB})) dstpool/hog-{tag} && exit 0; "
               f"done; exit 1")
    job, took = _interrupted(pair, vm, tag, fill)
    assert isinstance(job.error, TransferError), job.error
    print(f"\nFULL POOL -> {took:.1f} s: {job.error}")
    assert "space" in str(job.error).lower() and job.error.host == pair.dst.label
    assert took < 30
    assert _wait(lambda: _leftovers(vm, tag) == [], 10), _leftovers(vm, tag)


def test_dropped_control_session_is_a_clear_error(pair: Pair, vm: Vm, tag: str) -> None:
    _data(vm, f"srcpool/{tag}", 24)
    dst = connect_dst(vm)

    def drop(job: Job) -> None:
        runner = job._runner
        assert runner is not None
        pgid = runner._procs[0].pgid  # the receiver's process group in the guest
        vm.ssh(f"p={pgid}; while [ \"$p\" -gt 1 ]; do "
               f"c=$(ps -o comm= -p $p); [ \"$c\" = sshd ] && {{ kill -9 $p; break; }}; "
               f"p=$(ps -o ppid= -p $p | tr -d ' '); done")
    try:
        job, took = _interrupted(pair, vm, tag, drop, dst=dst)
    finally:
        dst.close()
    print(f"\nDROPPED SESSION -> {took:.1f} s: {job.error}")
    assert took < 10 and isinstance(job.error, TransferError)
    assert f"SSH control session to {dst.label} was lost" in str(job.error)
    assert job.error.host == dst.label
    assert _wait(lambda: _leftovers(vm, tag) == [], 15), _leftovers(vm, tag)
    assert _prop(vm, f"dstpool/{tag}", "receive_resume_token") != "-"


# -- (d) a delegated, non-root user ----------------------------------------------------------------
def test_unprivileged_user_with_zfs_allow(pair: Pair, vm: Vm, tag: str) -> None:
    src, parent = f"srcpool/{tag}", f"dstpool/{tag}-rx"
    vm.ssh("id zm >/dev/null 2>&1 || useradd -m -s /bin/sh zm; install -d -o zm -m 700 ~zm/.ssh"
           " && install -o zm -m 600 /root/.ssh/authorized_keys ~zm/.ssh/authorized_keys")
    _data(vm, src, 4)
    vm.ssh(f"zfs allow -u zm send {src} && zfs create {parent} && "
           f"zfs allow -u zm create,mount,receive {parent}")
    src_host = connect(HostSpec("openzfs-vm", user="zm"))
    dst_host = connect_dst(vm, "zm")
    try:
        with pytest.raises(PreflightError) as info:
            Job(src_host, dst_host, Request(f"{src}@s1", f"{parent}/copy", _opts())).prepare()
        text = str(info.value)
        print(f"\nMISSING PERMISSION: {text}")
        assert "readonly" in text and f"zfs allow -u zm readonly {parent}" in text
        vm.ssh(f"zfs allow -u zm readonly {parent}")
        job = Job(src_host, dst_host, Request(f"{src}@s1", f"{parent}/copy", _opts()))
        summary = job.run()
        assert job.plan is not None and " -u " in job.plan.steps[0].destination_command + " "
        assert summary.verified and _guid(vm, f"{src}@s1") == _guid(vm, f"{parent}/copy@s1")
        assert _prop(vm, f"{parent}/copy", "readonly") == "on"
    finally:
        src_host.close()
        dst_host.close()
        vm.ssh(f"zfs unallow -u zm {src}", check=False)


# -- (e) -R with children and property control -----------------------------------------------------
def test_replicate_children_with_property_override(pair: Pair, vm: Vm, tag: str) -> None:
    src, dst = f"srcpool/{tag}", f"dstpool/{tag}"
    _data(vm, src, 2, snap=None)
    vm.ssh(f"zfs create {src}/c1 && zfs create -o compression=zstd {src}/c1/c2 && "
           f"head -c 1M /dev/urandom > /{src}/c1/c2/f && zfs snapshot -r {src}@r1 && "
           f"zfs set org.zmigrate:note=source {src}")
    job = _job(pair, f"{src}@r1", dst, replicate=True,
               properties=(("org.zmigrate:note", "copy"),), exclude_properties=("compression",),
               mount=False)
    summary = job.run()
    assert job.plan is not None and "-R" in job.plan.send_flags and not job.plan.resumable
    assert set(job.plan.children) == {f"{src}/c1", f"{src}/c1/c2"}
    assert summary.verified
    for child in ("", "/c1", "/c1/c2"):
        assert _guid(vm, f"{src}{child}@r1") == _guid(vm, f"{dst}{child}@r1")
    assert _prop(vm, dst, "org.zmigrate:note") == "copy"
    assert _prop(vm, f"{dst}/c1/c2", "compression") != "zstd"  # -x compression
    assert _prop(vm, f"{dst}/c1/c2", "mounted") == "no"  # -u


# -- (f) bookmarks ---------------------------------------------------------------------------------
def test_bookmark_keeps_incrementals_working_after_pruning(pair: Pair, vm: Vm, tag: str) -> None:
    src, dst = f"srcpool/{tag}", f"dstpool/{tag}"
    _data(vm, src, 3)
    summary = _job(pair, f"{src}@s1", dst, bookmark=True).run()
    assert summary.extra.get("bookmark") == f"{src}#s1"
    vm.ssh(f"zfs destroy {src}@s1 && head -c 1M /dev/urandom > /{src}/f1 && "
           f"zfs snapshot {src}@s2")
    job = _job(pair, f"{src}@s2", dst)
    summary = job.run()
    assert job.plan is not None and job.plan.base == "s1"
    assert f"-i '{src}#s1'" in job.plan.steps[0].source_command
    assert summary.verified and _guid(vm, f"{src}@s2") == _guid(vm, f"{dst}@s2")


# -- the CLI ---------------------------------------------------------------------------------------
def test_cli_refuses_a_partial_then_resumes(pair: Pair, vm: Vm, tag: str) -> None:
    src, dst = f"srcpool/{tag}", f"dstpool/{tag}"
    _data(vm, src, 16)
    _interrupted(pair, vm, tag, lambda j: j.cancel())
    flags = ("--no-history", "--buffer", "16M")
    r = cli(vm, "send", f"openzfs-vm:{src}@s1", f"openzfs-vm:{dst}", *flags)
    assert r.returncode == 1 and "--resume" in r.stderr and "--discard-partial" in r.stderr
    r = cli(vm, "send", f"openzfs-vm:{src}@s1", f"openzfs-vm:{dst}", *flags, "--resume", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    plan = next(e for e in events if e["event"] == "plan")
    assert plan["resume"] is True and plan["resumed_from"] > 0 and plan["estimate_exact"]
    assert next(e for e in events if e["event"] == "done")["verified"] is True


def test_missing_source_permission_is_named_at_runtime(vm: Vm) -> None:
    err = zfs.classify_zfs_error("h", "sending", "warning: cannot send 'a@b': permission denied",
                                 permission=(("send",), "srcpool/a", "zm"))
    assert "zfs allow -u zm send srcpool/a" in str(err)
    assert isinstance(err, ZmigrateError)
