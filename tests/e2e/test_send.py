"""End to end on the lab: zmigrate moves datasets between two real sshd hosts with real zfs-fuse
pools and real mbuffer, and refuses what it must refuse before anything runs."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest
from lab.flipping_proxy import FlippingProxy
from lab.losses import LossWatch
from lab.sshd import Lab
from lab.util import (
    RECEIVE_CLEANUP,
    dataset_exists,
    established_to,
    free_port,
    port_listening,
    proc_cmdlines,
    snapshot_guid,
    tree_digest,
    wait_until,
    write_random_files,
    zfs,
    zfs_processes_naming,
    zmigrate,
)
from lab.zfsfuse import Pool

from zmigrate.engine.errors import CancelledError, PreflightError, TransferError
from zmigrate.engine.events import Progress, Sample, Side, StageChanged
from zmigrate.engine.hosts import Host, LocalHost, Process
from zmigrate.engine.job import Job, Request
from zmigrate.engine.plan import Options
from zmigrate.engine.transports import Transport
from zmigrate.engine.transports import tcp as tcp_transport
from zmigrate.engine.units import MiB

pytestmark = pytest.mark.lab


def _leftovers(*pools: Pool) -> list[str]:
    """zfs/mbuffer processes of our jobs: they name our pools, or are mbuffers (the tests of a
    session run one at a time, so any mbuffer left is one of ours)."""
    return zfs_processes_naming(*[p.name for p in pools], "mbuffer")


def _dataset(pool: Pool, name: str = "ds", mb: int = 20) -> tuple[str, Path]:
    ds = f"{pool.name}/{name}"
    zfs("create", ds)
    mnt = pool.mountpoint / name
    write_random_files(mnt, mb, files=10)
    return ds, mnt


def _mounted(pool_name_ds: str) -> Path:
    return Path(zfs("get", "-H", "-o", "value", "mountpoint", pool_name_ds).strip())


def test_full_send_tcp_200mb_over_ssh_control_sessions(lab: Lab, pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    ds, mnt = _dataset(src, mb=200)
    zfs("snapshot", f"{ds}@one")
    before = tree_digest(mnt)
    # A rate limit keeps it ~2 s long: mbuffer prints status every 0.5 s, and a sender that is
    # done in less would show no sample of its side on a fast, quiet machine.
    r = lab.zmigrate("send", f"lab-src:{ds}@one", f"lab-dst:{dst.name}/copy", "--buffer", "64M",
                     "--bwlimit", "100M", "--hash", "--json", "--transport", "tcp")
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    kinds = {e["event"] for e in events}
    assert {"plan", "sample", "done"} <= kinds
    plan = next(e for e in events if e["event"] == "plan")
    assert plan["transport"] == "tcp" and plan["kind"] == "full"
    commands = plan["commands"]
    assert isinstance(commands, list)
    assert "mbuffer -s 128k -m 64M -I 127.0.0.1:" in commands[0]["command"]
    assert "-r 100M -O 127.0.0.1:" in commands[1]["command"]
    done = next(e for e in events if e["event"] == "done")
    assert done["verified"] is True and done["hash_match"] is True
    assert isinstance(done["bytes"], int) and done["bytes"] > 200 * MiB
    print(f"\nREMOTE COMMANDS of one full send: {done['remote_commands']}")
    # Each round trip costs 80-200 ms on a real host: 6 a side today (probe, read, listener,
    # sender, verify...), a budget that fails if a change adds several.
    assert done["remote_commands"]["source"] <= 8 and done["remote_commands"]["destination"] <= 8
    sides = {e["side"] for e in events if e["event"] == "sample"}
    assert sides == {"send", "receive"}
    assert snapshot_guid(f"{ds}@one") == snapshot_guid(f"{dst.name}/copy@one")
    assert tree_digest(_mounted(f"{dst.name}/copy")) == before
    # zfs-fuse reports readonly as "off (temporary)" from its mount options; the write is what
    # tells whether the copy really is readonly.
    with pytest.raises(OSError, match="Read-only file system"):
        (_mounted(f"{dst.name}/copy") / "new-file").write_text("x")
    assert _leftovers(src, dst) == []


@pytest.mark.parametrize("transport", ["tcp", "ssh", "local"])
def test_incremental_with_automatic_base_and_three_intermediates(
    lab: Lab, pools: tuple[Pool, Pool], transport: str
) -> None:
    src, dst = pools
    ds, mnt = _dataset(src, mb=8)
    zfs("snapshot", f"{ds}@base")
    dst_host = "lab-src" if transport == "local" else "lab-dst"
    extra = [f"--ssh-option={o}" for o in lab.ssh_options()[1::2]] if transport == "ssh" else []
    r = lab.zmigrate("send", f"lab-src:{ds}@base", f"{dst_host}:{dst.name}/copy",
                     "--transport", transport, "--buffer", "32M", *extra)
    assert r.returncode == 0, r.stderr
    # The default check, named in the summary line: no md5 was asked for or computed.
    assert "stream checksums checked by zfs receive" in r.stdout, r.stdout
    assert "--hash" not in r.stdout + r.stderr
    for i in (1, 2, 3):
        write_random_files(mnt / f"gen{i}", 2, files=2)
        zfs("snapshot", f"{ds}@i{i}")
    r = lab.zmigrate("send", f"lab-src:{ds}@i3", f"{dst_host}:{dst.name}/copy",
                     "--transport", transport, "--buffer", "32M", "--json", *extra)
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    plan = next(e for e in events if e["event"] == "plan")
    assert plan["kind"] == "incremental" and plan["base"] == "base"
    assert plan["snapshots"] == ["i1", "i2", "i3"]
    assert " -I " in str(plan["commands"])
    for snap in ("base", "i1", "i2", "i3"):
        assert snapshot_guid(f"{ds}@{snap}") == snapshot_guid(f"{dst.name}/copy@{snap}")
    assert tree_digest(_mounted(f"{dst.name}/copy")) == tree_digest(mnt)
    assert next(e for e in events if e["event"] == "done")["verified"] is True
    assert _leftovers(src, dst) == []


def test_no_intermediates_sends_only_the_endpoint(lab: Lab, pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    ds, mnt = _dataset(src, mb=4)
    zfs("snapshot", f"{ds}@a")
    assert lab.zmigrate("send", f"lab-src:{ds}@a", f"lab-dst:{dst.name}/c").returncode == 0
    zfs("snapshot", f"{ds}@b")
    zfs("snapshot", f"{ds}@c")
    r = lab.zmigrate("send", f"lab-src:{ds}@c", f"lab-dst:{dst.name}/c", "--no-intermediates")
    assert r.returncode == 0, r.stderr
    names = zfs("list", "-H", "-o", "name", "-t", "snapshot", "-r", f"{dst.name}/c").split()
    assert names == [f"{dst.name}/c@a", f"{dst.name}/c@c"]


def test_full_send_with_history_carries_every_snapshot(lab: Lab, pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    ds, mnt = _dataset(src, mb=4)
    for s in ("h1", "h2", "h3"):
        write_random_files(mnt / s, 1, files=1)
        zfs("snapshot", f"{ds}@{s}")
    r = lab.zmigrate("send", f"lab-src:{ds}@h3", f"lab-dst:{dst.name}/h", "--history", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    names = zfs("list", "-H", "-o", "name", "-t", "snapshot", "-r", f"{dst.name}/h").split()
    assert names == [f"{dst.name}/h@{s}" for s in ("h1", "h2", "h3")]


def test_cancel_mid_transfer_leaves_nothing(lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool]
                                            ) -> None:
    src_pool, dst_pool = pools
    ds, _ = _dataset(src_pool, mb=120)
    zfs("snapshot", f"{ds}@big")
    src, dst = lab_hosts
    seen: list[object] = []
    job = Job(src, dst, Request(f"{ds}@big", f"{dst_pool.name}/partial",
                                Options(rate_limit=8 * MiB, buffer_size=16 * MiB)), seen.append)
    job.start()
    assert wait_until(lambda: any(isinstance(e, Progress) and e.done > 4 * MiB for e in seen), 60)
    port = job.plan.port if job.plan else None
    assert port is not None and established_to(port) >= 1
    t0 = time.monotonic()
    job.cancel()
    assert job.wait(10)
    assert time.monotonic() - t0 < 5
    assert job.error is not None and "cancel" in job.error.message
    assert wait_until(lambda: _leftovers(*pools) == [], 5), _leftovers(*pools)
    assert not port_listening(port) and established_to(port) == 0
    # (zfs-fuse removes a killed receive's dataset a moment after its zfs process ends)
    assert wait_until(lambda: not dataset_exists(f"{dst_pool.name}/partial"), RECEIVE_CLEANUP)
    assert any(isinstance(e, Sample) and e.side is Side.RECEIVE for e in seen)


def test_cancel_while_both_ends_start_runs_no_sender(lab_hosts: tuple[Host, Host],
                                                    pools: tuple[Pool, Pool]) -> None:
    """Cancelled as the step starts: the sender's session may be up, waiting at its gate; it
    must end without ever running `zfs send`, and nothing of the job may stay behind."""
    src_pool, dst_pool = pools
    ds, _ = _dataset(src_pool, mb=4)
    zfs("snapshot", f"{ds}@s")
    seen: list[object] = []
    job: Job | None = None

    def observe(event: object) -> None:
        seen.append(event)
        if isinstance(event, StageChanged) and event.stage == "starting":
            assert job is not None
            job.cancel()

    src, dst = lab_hosts
    spawned: list[Process] = []
    spawn = src.spawn

    def spawn_and_keep(line: str, **kw: Any) -> Process:
        proc = spawn(line, **kw)
        if kw.get("gated"):
            spawned.append(proc)
        return proc

    src.spawn = spawn_and_keep  # type: ignore[method-assign]
    job = Job(src, dst, Request(f"{ds}@s", f"{dst_pool.name}/never",
                                Options(buffer_size=16 * MiB)), observe)
    with pytest.raises(CancelledError):
        job.run()
    assert len(spawned) == 1 and spawned[0].poll() is not None  # the gated sender, ended
    port = job.plan.port if job.plan else None
    assert port is not None
    assert not any(isinstance(e, (Sample, Progress)) and getattr(e, "total", 0) for e in seen)
    assert not any(isinstance(e, StageChanged) and e.stage == "sending" for e in seen)
    ours = lambda: [" ".join(a) for a in proc_cmdlines().values()  # noqa: E731
                    if any(src_pool.name in w or dst_pool.name in w for w in a)]
    assert wait_until(lambda: not ours(), 5), ours()
    assert wait_until(lambda: not port_listening(port), 5)
    assert not dataset_exists(f"{dst_pool.name}/never")


def test_cancel_of_incremental_keeps_every_snapshot(lab_hosts: tuple[Host, Host],
                                                   pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    ds, mnt = _dataset(src_pool, mb=2)
    zfs("snapshot", f"{ds}@s1")
    src, dst = lab_hosts
    Job(src, dst, Request(f"{ds}@s1", f"{dst_pool.name}/inc", Options(buffer_size=16 * MiB))
        ).run()
    write_random_files(mnt / "more", 80, files=4)
    zfs("snapshot", f"{ds}@s2")
    seen: list[object] = []
    job = Job(src, dst, Request(f"{ds}@s2", f"{dst_pool.name}/inc",
                                Options(rate_limit=8 * MiB, buffer_size=16 * MiB)), seen.append)
    job.start()
    assert wait_until(lambda: any(isinstance(e, Progress) and e.done > 2 * MiB for e in seen), 60)
    job.cancel()
    assert job.wait(10)
    assert wait_until(lambda: _leftovers(*pools) == [], 5)
    names = zfs("list", "-H", "-o", "name", "-t", "snapshot", "-r", f"{dst_pool.name}/inc").split()
    assert names == [f"{dst_pool.name}/inc@s1"]


# -- refusals: nothing runs ----------------------------------------------------------------------
def _refused(lab: Lab, *args: str) -> str:
    r = lab.zmigrate("send", *args)
    assert r.returncode != 0
    assert _leftovers() == []
    return r.stderr


def test_refuses_existing_destination_without_force(lab: Lab, pools: tuple[Pool, Pool],
                                                    loss_watch: type[LossWatch]) -> None:
    """An existing destination that holds a file is refused (what it holds, the ways out); an
    empty one takes the copy as itself (a new pool's root is the common case)."""
    src, dst = pools
    ds, _ = _dataset(src, mb=1)
    zfs("snapshot", f"{ds}@x")
    zfs("create", f"{dst.name}/taken")
    (dst.mountpoint / "taken" / "keep.txt").write_text("mine\n")
    err = _refused(lab, f"lab-src:{ds}@x", f"lab-dst:{dst.name}/taken")
    assert "already exists: it holds 1 file(s) or folder(s)" in err and "fix:" in err
    assert (dst.mountpoint / "taken" / "keep.txt").read_text() == "mine\n"
    zfs("create", f"{dst.name}/empty")
    watch = loss_watch(dst.name)
    watch.start()
    r = lab.zmigrate("send", f"lab-src:{ds}@x", f"lab-dst:{dst.name}/empty", "--no-history",
                     "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    watch.check_json(r.stdout)  # its content is on the plan's list: replaced
    assert snapshot_guid(f"{dst.name}/empty@x") == snapshot_guid(f"{ds}@x")


def test_empty_mounted_datasets_take_the_copy_every_time(lab: Lab,
                                                         pools: tuple[Pool, Pool]) -> None:
    """Just-created (so mounted) empty datasets, one after another, each take the copy as
    itself: unmounted first, as the plan shows (zfs-fuse's own unmount and mount around
    `receive -F` failed with "I/O error" in 6 of 25 tries)."""
    src, dst = pools
    ds, _ = _dataset(src, mb=1)
    zfs("snapshot", f"{ds}@x")
    for i in range(8):
        target = f"{dst.name}/empty{i}"
        zfs("create", target)
        r = lab.zmigrate("send", f"lab-src:{ds}@x", f"lab-dst:{target}", "--no-history")
        assert r.returncode == 0, f"try {i}: " + r.stderr + r.stdout
        assert f"unmounting {target}, which takes the copy as itself" in r.stderr + r.stdout
        assert snapshot_guid(f"{target}@x") == snapshot_guid(f"{ds}@x")


def test_refuses_base_missing_on_destination(lab: Lab, pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    ds, _ = _dataset(src, mb=1)
    zfs("snapshot", f"{ds}@a")
    zfs("snapshot", f"{ds}@b")
    assert lab.zmigrate("send", f"lab-src:{ds}@a", f"lab-dst:{dst.name}/m").returncode == 0
    err = _refused(lab, f"lab-src:{ds}@b", f"lab-dst:{dst.name}/m", "--base", "zz")
    assert "base @zz is missing on the destination" in err


def test_refuses_diverged_destination_and_names_what_force_destroys(
    lab: Lab, pools: tuple[Pool, Pool], loss_watch: type[LossWatch]
) -> None:
    src, dst = pools
    ds, _ = _dataset(src, mb=1)
    zfs("snapshot", f"{ds}@a")
    assert lab.zmigrate("send", f"lab-src:{ds}@a", f"lab-dst:{dst.name}/d").returncode == 0
    zfs("snapshot", f"{dst.name}/d@local-change")
    zfs("snapshot", f"{ds}@b")
    err = _refused(lab, f"lab-src:{ds}@b", f"lab-dst:{dst.name}/d")
    assert "diverged" in err and "@local-change" in err and "--force" in err
    watch = loss_watch(dst.name)
    watch.start()
    r = lab.zmigrate("send", f"lab-src:{ds}@b", f"lab-dst:{dst.name}/d", "--force", "--json")
    assert r.returncode == 0, r.stderr
    watch.check_json(r.stdout)
    names = zfs("list", "-H", "-o", "name", "-t", "snapshot", "-r", f"{dst.name}/d").split()
    assert names == [f"{dst.name}/d@a", f"{dst.name}/d@b"]


@pytest.mark.parametrize("bad", [
    "lab-src:{pool}/ds@x;touch {marker}",
    "lab-src:{pool}/ds$(touch {marker})@x",
    "lab-src:{pool}/ds@x`touch {marker}`",
    "lab-src:{pool}/ds@x | touch {marker}",
    "lab-src:-oProxyCommand=touch {marker}@x",
])
def test_refuses_shell_metacharacters_and_runs_nothing(lab: Lab, pools: tuple[Pool, Pool],
                                                       tmp_path: Path, bad: str) -> None:
    src, dst = pools
    marker = tmp_path / "pwned"
    r = lab.zmigrate("send", bad.format(pool=src.name, marker=marker), f"lab-dst:{dst.name}/x")
    assert r.returncode == 2, r.stderr
    assert "not valid" in r.stderr or "starts with '-'" in r.stderr
    assert not marker.exists()
    r = lab.zmigrate("send", f"lab-src:{src.name}/ds@x", f"lab-dst:{dst.name}/x;touch {marker}")
    assert r.returncode == 2 and not marker.exists()


def test_refuses_unknown_host_key(lab: Lab, pools: tuple[Pool, Pool], tmp_path: Path) -> None:
    src, dst = pools
    ds, _ = _dataset(src, mb=1)
    zfs("snapshot", f"{ds}@x")
    env = lab.env()
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    env["ZMIGRATE_KNOWN_HOSTS"] = str(empty)
    r = zmigrate(env, "send", f"lab-src:{ds}@x", f"lab-dst:{dst.name}/x", timeout=60)
    assert r.returncode == 1
    assert lab.src.host_key_fingerprint in r.stderr
    assert "not accepted" in r.stderr
    assert empty.read_text() == ""
    assert not dataset_exists(f"{dst.name}/x")


def test_refuses_port_in_use(lab: Lab, pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    ds, _ = _dataset(src, mb=1)
    zfs("snapshot", f"{ds}@x")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        err = _refused(lab, f"lab-src:{ds}@x", f"lab-dst:{dst.name}/x", "--port", str(port))
    assert f"port {port} is already in use" in err


def test_refuses_host_without_mbuffer(pools: tuple[Pool, Pool], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A real host whose PATH has everything but mbuffer."""
    src, dst = pools
    ds, _ = _dataset(src, mb=1)
    zfs("snapshot", f"{ds}@x")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for d in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin"):
        for p in Path(d).iterdir():
            link = bin_dir / p.name
            if p.name != "mbuffer" and not link.exists():
                link.symlink_to(p)
    monkeypatch.setenv("PATH", str(bin_dir))
    host = LocalHost()
    with pytest.raises(PreflightError) as info:
        Job(host, host, Request(f"{ds}@x", f"{dst.name}/x")).run()
    assert "mbuffer is not installed" in str(info.value)
    assert "apt install mbuffer" in str(info.value)
    # zfs runs by its absolute path; PATH is still bin_dir, which lacks only mbuffer.
    assert not dataset_exists(f"{dst.name}/x")


def test_dry_run_prints_the_commands_and_runs_nothing(lab: Lab, pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    ds, _ = _dataset(src, mb=1)
    zfs("snapshot", f"{ds}@x")
    r = lab.zmigrate("send", f"lab-src:{ds}@x", f"lab-dst:{dst.name}/x", "--dry-run",
                     "--bwlimit", "20M", "--transport", "tcp")
    assert r.returncode == 0, r.stderr
    assert "# on lab-dst:" in r.stdout and "# on lab-src:" in r.stdout
    assert f"zfs send {ds}@x | mbuffer -s 128k -m 1G -r 20M -O 127.0.0.1:" in r.stdout
    assert not dataset_exists(f"{dst.name}/x")


def test_list_shows_datasets_and_snapshots(lab: Lab, pools: tuple[Pool, Pool]) -> None:
    src, _ = pools
    ds, _ = _dataset(src, mb=1)
    zfs("snapshot", f"{ds}@seen")
    r = lab.zmigrate("list", f"lab-src:{src.name}", "--snapshots")
    assert r.returncode == 0, r.stderr
    assert ds in r.stdout and "@seen" in r.stdout and "zfs-fuse" in r.stdout
    r = lab.zmigrate("list", f"lab-src:{src.name}", "--json")
    rows = r.events
    assert any(row["name"] == ds for row in rows)
    row = next(row for row in rows if row["name"] == ds)
    assert [s["guid"] for s in row["snapshots"]  # type: ignore[union-attr]
            if s["name"] == f"{ds}@seen"] == [snapshot_guid(f"{ds}@seen")]
    # `host:` as scp users type it: the whole host, like `host`.
    whole = lab.zmigrate("list", "lab-src:", "--json")
    assert whole.returncode == 0, whole.stderr
    assert {row["name"] for row in whole.events} >= {src.name, ds}


def test_transport_local_on_this_machine(pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    ds, mnt = _dataset(src, mb=10)
    zfs("snapshot", f"{ds}@l")
    host = LocalHost()
    seen: list[object] = []
    summary = Job(host, host, Request(f"{ds}@l", f"{dst.name}/l",
                                      Options(transport=Transport.LOCAL, buffer_size=16 * MiB,
                                              verify_hash=True)),
                  seen.append).run()
    assert summary.verified and summary.hash_match
    assert tree_digest(_mounted(f"{dst.name}/l")) == tree_digest(mnt)


def test_a_stream_damaged_in_flight_is_refused_by_zfs_receive(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What the default check rests on: one flipped bit between the two mbuffers (no md5 asked)
    fails the transfer with zfs receive's checksum error, and leaves no dataset behind."""
    src, dst = pools
    ds, _ = _dataset(src, mb=24)
    zfs("snapshot", f"{ds}@one")
    port = free_port()
    relay_port = free_port()
    proxies: list[FlippingProxy] = []
    # The sender (to ::1) goes to the relay's own port; the listener keeps its own.
    real = tcp_transport.address_port
    monkeypatch.setattr(tcp_transport, "address_port",
                        lambda a, p: real(a, relay_port if a == "::1" else p))

    def observe(event: object) -> None:
        # After the preflight (which would call the port taken) and before the receiver starts.
        if isinstance(event, StageChanged) and event.stage == "starting" and not proxies:
            proxies.append(FlippingProxy(relay_port, offset=12 * MiB, upstream=port))

    options = Options(transport=Transport.TCP, buffer_size=16 * MiB, readonly=False, port=port,
                      connect_address="::1", allow_address="127.0.0.1")
    job = Job(*lab_hosts, Request(f"{ds}@one", f"{dst.name}/damaged", options), observe)
    try:
        with pytest.raises(TransferError, match="checksum mismatch") as info:
            job.run()
    finally:
        for proxy in proxies:
            proxy.close()
    assert proxies and proxies[0].flipped and proxies[0].relayed > 12 * MiB
    assert info.value.host == "lab-dst" and "damaged" in str(info.value.fix)
    assert "--hash" not in " ".join(line for _, line in job.plan.commands())  # type: ignore[union-attr]
    assert wait_until(lambda: not dataset_exists(f"{dst.name}/damaged"), RECEIVE_CLEANUP)
    assert wait_until(lambda: not _leftovers(src, dst), 10), _leftovers(src, dst)
    assert wait_until(lambda: not port_listening(port), 10)


def test_a_listener_rejecting_the_source_names_the_address_it_saw(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool]) -> None:
    """NAT: the destination sees the source under another address than the one zmigrate told
    its listener to accept. The error names the address seen and offers --allow-address with
    it; nothing is received and nothing stays behind."""
    src_pool, dst_pool = pools
    ds, _ = _dataset(src_pool, mb=4)
    zfs("snapshot", f"{ds}@s")
    src, dst = lab_hosts
    job = Job(src, dst, Request(f"{ds}@s", f"{dst_pool.name}/nat",
                                Options(transport=Transport.TCP, allow_address="198.51.100.77",
                                        buffer_size=16 * MiB)))
    t0 = time.monotonic()
    with pytest.raises(TransferError) as info:
        job.run()
    assert time.monotonic() - t0 < 30
    err = info.value
    assert "rejected the connection from 127.0.0.1" in err.message, err.message
    assert err.fix is not None and "--allow-address 127.0.0.1" in err.fix
    assert wait_until(lambda: _leftovers(*pools) == [], 5), _leftovers(*pools)
    assert not dataset_exists(f"{dst_pool.name}/nat")


def test_names_with_spaces_full_and_incremental(lab: Lab, pools: tuple[Pool, Pool]) -> None:
    """ZFS allows spaces in dataset and snapshot names: listed, sent and received quoted."""
    src_pool, dst_pool = pools
    ds, mnt = _dataset(src_pool, name="my data", mb=3)
    zfs("snapshot", f"{ds}@first snap")
    dest = f"{dst_pool.name}/copy of data"
    r = lab.zmigrate("send", f"lab-src:{ds}@first snap", f"lab-dst:{dest}", "--no-history")
    assert r.returncode == 0, r.stderr + r.stdout
    write_random_files(mnt / "more", 2, files=2)
    zfs("snapshot", f"{ds}@second snap")
    r = lab.zmigrate("send", f"lab-src:{ds}@second snap", f"lab-dst:{dest}", "--no-history")
    assert r.returncode == 0, r.stderr + r.stdout
    for short in ("first snap", "second snap"):
        assert snapshot_guid(f"{dest}@{short}") == snapshot_guid(f"{ds}@{short}")
    assert tree_digest(_mounted(dest)) == tree_digest(mnt)
    r = lab.zmigrate("list", "--json", f"lab-dst:{dest}")
    assert r.returncode == 0, r.stderr
    listed = r.events
    assert [d["name"] for d in listed] == [dest]
    snaps = listed[0]["snapshots"]
    assert isinstance(snaps, list)
    assert [s["name"] for s in snaps] == [f"{dest}@first snap", f"{dest}@second snap"]
