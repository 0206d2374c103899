"""The relay transport on the lab: the stream comes up the source's control session and goes
down the destination's, so hosts that cannot reach each other still migrate. Full and incremental
sends with guids checked, samples of both ends, a cancel that leaves nothing, a send to a host
behind a jump host that the source cannot reach, and a relay short of CPU named as the limit."""

from __future__ import annotations

import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab.netns import JumpLab
from lab.shaped import CGROUP_CPU
from lab.sshd import Lab
from lab.util import (
    RECEIVE_CLEANUP,
    dataset_exists,
    events_in,
    snapshot_guid,
    tree_digest,
    wait_until,
    write_random_files,
    zfs,
    zfs_processes_naming,
)
from lab.zfsfuse import Pool

from zmigrate.engine.events import Progress, Sample, Side
from zmigrate.engine.hosts import Host
from zmigrate.engine.job import Job, Request
from zmigrate.engine.plan import Options
from zmigrate.engine.transports import Transport
from zmigrate.engine.units import MiB

pytestmark = [pytest.mark.lab, pytest.mark.timeout(300)]


def _dataset(pool: Pool, name: str, mb: int) -> str:
    ds = f"{pool.name}/{name}"
    zfs("create", ds)
    write_random_files(pool.mountpoint / name, mb, files=6)
    return ds


def test_relay_full_and_incremental(lab: Lab, pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    ds = _dataset(src, "ds", 24)
    zfs("snapshot", f"{ds}@a")
    dest = f"{dst.name}/relayed"
    # A rate limit keeps it ~3 s long, so both mbuffers print status lines (every 0.5 s).
    r = lab.zmigrate("send", f"lab-src:{ds}@a", f"lab-dst:{dest}", "--transport", "relay",
                     "--json", "--no-history", "--bwlimit", "8M", "--hash")
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    plan = next(e for e in events if e.get("event") == "plan")
    assert plan["transport"] == "relay"
    sides = {e["side"] for e in events if e.get("event") == "sample"}
    assert sides == {"send", "receive"}
    done = next(e for e in events if e["event"] == "done")
    assert done["hash_match"] is True and done["bytes"] > 24 * MiB
    write_random_files(src.mountpoint / "ds" / "more", 4, files=2)
    zfs("snapshot", f"{ds}@b")
    r = lab.zmigrate("send", f"lab-src:{ds}@b", f"lab-dst:{dest}", "--transport", "relay",
                     "--no-history")
    assert r.returncode == 0, r.stderr + r.stdout
    for short in ("a", "b"):
        assert snapshot_guid(f"{dest}@{short}") == snapshot_guid(f"{ds}@{short}")
    mnt = zfs("get", "-H", "-o", "value", "mountpoint", dest).strip()
    assert tree_digest(Path(mnt)) == tree_digest(src.mountpoint / "ds")


def test_relay_cancel_leaves_nothing(lab_hosts: tuple[Host, Host],
                                     pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    ds = _dataset(src_pool, "big", 60)
    zfs("snapshot", f"{ds}@s")
    src, dst = lab_hosts
    seen: list[object] = []
    job = Job(src, dst, Request(f"{ds}@s", f"{dst_pool.name}/partial",
                                Options(transport=Transport.RELAY, rate_limit=6 * MiB,
                                        buffer_size=16 * MiB)), seen.append)
    job.start()
    assert wait_until(lambda: any(isinstance(e, Progress) and e.done > 3 * MiB for e in seen), 60)
    assert any(isinstance(e, Sample) and e.side is Side.RECEIVE for e in seen)
    t0 = time.monotonic()
    job.cancel()
    assert job.wait(10)
    assert time.monotonic() - t0 < 5
    assert job.error is not None and "cancel" in job.error.message
    assert wait_until(lambda: zfs_processes_naming(src_pool.name, dst_pool.name, "mbuffer")
                      == [], 5)
    # (zfs-fuse removes a killed receive's dataset a moment after its zfs process ends)
    assert wait_until(lambda: not dataset_exists(f"{dst_pool.name}/partial"), RECEIVE_CLEANUP)


def test_relay_to_a_host_the_source_cannot_reach(jump_lab: JumpLab,
                                                 pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    ds = _dataset(src, "far", 8)
    zfs("snapshot", f"{ds}@s")
    dest = f"{dst.name}/far"
    r = jump_lab.zmigrate("send", f"lab-src:{ds}@s", f"lab-behind:{dest}", "--transport",
                          "relay", "--no-history")
    assert r.returncode == 0, r.stderr + r.stdout
    assert snapshot_guid(f"{dest}@s") == snapshot_guid(f"{ds}@s")


@pytest.mark.parametrize("network", ["no route", "dropped"])
def test_default_tcp_to_an_unreachable_listener_fails_fast_and_names_the_ways(
        network: str, jump_lab: JumpLab, pools: tuple[Pool, Pool]) -> None:
    """The default transport (tcp) from lab-src to lab-behind: refused at once ("no route"),
    or its SYN dropped without an answer - which TCP retries for minutes: zmigrate gives up on
    the connection after 10 s. Either way the error names both ways that work."""
    src, dst = pools
    ds = _dataset(src, "tcp", 2)
    zfs("snapshot", f"{ds}@s")
    t0 = time.monotonic()
    jump_lab.drop_silently(network == "dropped")
    try:
        r = jump_lab.zmigrate("send", f"lab-src:{ds}@s", f"lab-behind:{dst.name}/tcp",
                              "--no-history")
    finally:
        jump_lab.drop_silently(False)
    took = time.monotonic() - t0
    assert r.returncode != 0
    assert "--transport relay" in r.stdout + r.stderr and "--transport ssh" in r.stdout + r.stderr
    assert took < 25, took  # connecting, preflight and stopping included
    if network == "dropped":
        assert "within 10 s" in r.stderr, r.stderr
    assert not dataset_exists(f"{dst.name}/tcp")


@pytest.fixture
def starved_cpu() -> Iterator[Path]:
    """A cgroup v1 `cpu` group of RELAY_CPU % of one core, removed after the test."""
    group = CGROUP_CPU / f"zmr{secrets.token_hex(3)}"
    group.mkdir()
    try:
        (group / "cpu.cfs_period_us").write_text("100000")
        (group / "cpu.cfs_quota_us").write_text(str(RELAY_CPU * 1000))
        yield group
    finally:
        assert wait_until(lambda: not (group / "cgroup.procs").read_text().strip(), 10)
        group.rmdir()


RELAY_CPU = 25


def test_a_relay_short_of_cpu_is_named_with_its_way_around(
        lab: Lab, pools: tuple[Pool, Pool], starved_cpu: Path) -> None:
    """zmigrate itself, relaying in a cgroup of a quarter of a core (a busy laptop, a small
    VM): the live verdict names this process on this computer, waiting for a CPU, and advises
    letting the hosts reach each other or running zmigrate nearer them."""
    src, dst = pools
    ds = _dataset(src, "cpu", 160)
    zfs("snapshot", f"{ds}@a")
    run = subprocess.run(
        ["sh", "-c", f'echo $$ > {starved_cpu / "cgroup.procs"} && exec "$0" "$@"',
         sys.executable, "-m", "zmigrate", "send", f"lab-src:{ds}@a",
         f"lab-dst:{dst.name}/cpu", "--transport", "relay", "--json", "--no-history",
         # A buffer the stream fills, as a pool's stream fills the default (1G) one.
         "--buffer", "32M"],
        capture_output=True, text=True, timeout=240, env=lab.env(), stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr + run.stdout
    events = events_in(run.stdout)
    ends = [e for e in events if e["event"] == "end_cpu"]
    verdicts = [e for e in events if e["event"] == "verdict"]
    print("\n".join(f"{v['t']:.0f}s {v['kind']} {v['text']}" for v in verdicts))
    print(" ".join(f"{e['t']:.0f}s {e['on_cpu']:.2f}/{e['waiting']:.2f}" for e in ends))
    assert ends and all(e["program"] == "zmigrate" and e["host"].endswith("(the relay)")
                        for e in ends), ends
    final = verdicts[-1]
    assert final["final"] and final["finding"]["kind"] == "end_cpu", final
    assert final["finding"]["figures"]["waiting"] > final["finding"]["figures"]["on_cpu"]
    assert [a["kind"] for a in final["advice_items"]][:3] == [
        "free_cpu", "relay_bypass", "relay_nearby"], final["advice_items"]
    assert snapshot_guid(f"{dst.name}/cpu@a") == snapshot_guid(f"{ds}@a")
