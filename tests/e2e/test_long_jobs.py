"""Long jobs on the lab: `send -r --detach` runs a tree transfer in a runner no terminal holds;
`attach` follows it (and may die without harm), `jobs` lists it, `stop` stops it and both ends,
and a runner killed outright is named as dead with what it left on the hosts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lab.sshd import Lab
from lab.util import (
    Run,
    snapshot_guid,
    start,
    wait_until,
    write_random_files,
    zfs,
    zfs_processes_naming,
    zmigrate,
)
from lab.zfsfuse import Pool

from zmigrate.cli.common import event_to_json
from zmigrate.engine.events import Sample
from zmigrate.engine.runner import read_events
from zmigrate.engine.runner.state import JobState

pytestmark = pytest.mark.lab

TREE = ("t", "t/a", "t/b", "t/c")
# mbuffer's status interval, as the pipeline asks for it, and what a loaded machine adds.
SAMPLE_GAP = 1.0 + 1.5


@pytest.fixture
def env(lab: Lab, tmp_path: Path) -> dict[str, str]:
    e = lab.env()
    e["ZMIGRATE_JOBS_DIR"] = str(tmp_path / "jobs")
    e["ZMIGRATE_DATA_DIR"] = str(tmp_path / "data")
    e["ZMIGRATE_RUNNER_LAUNCHER"] = "setsid"  # whatever this machine has, test the fallback
    return e


@pytest.fixture
def tree(pools: tuple[Pool, Pool]) -> tuple[Pool, Pool, str]:
    """A tree of four datasets, 20 MiB in all, snapshotted @s1."""
    src, dst = pools
    for rel in TREE:
        zfs("create", f"{src.name}/{rel}")
    for rel in TREE:
        write_random_files(src.mountpoint / rel / "files", 5, files=2)
    zfs("snapshot", "-r", f"{src.name}/t@s1")
    return src, dst, f"{src.name}/t"


def _detach(env: dict[str, str], root: str, copy: str, rate: str) -> tuple[str, float]:
    t0 = time.monotonic()
    r = zmigrate(env, "send", "-r", f"lab-src:{root}@s1", f"lab-dst:{copy}", "--detach",
                 "--json", "--bwlimit", rate, "--buffer", "8M", "--parallel", "1",
                 timeout=60)
    took = time.monotonic() - t0
    assert r.returncode == 0, r.stderr + r.stdout
    (job,) = r.of("job")
    return str(job["id"]), took


def _job(env: dict[str, str], job_id: str, scan: bool = False) -> tuple[dict[str, Any], Run]:
    r = zmigrate(env, "jobs", "--json", *(() if scan else ("--no-scan",)), timeout=120)
    assert r.returncode == 0, r.stderr
    return next(j for j in r.of("job") if j["id"] == job_id), r


def _sending(env: dict[str, str], job_id: str) -> bool:
    j, _ = _job(env, job_id)
    return j["state"] == "running" and j["done"] > 1024 * 1024


def test_detached_tree_outlives_a_killed_follower_and_replays_from_the_first_event(
        env: dict[str, str], tree: tuple[Pool, Pool, str]) -> None:
    src, dst, root = tree
    copy = f"{dst.name}/copy"
    job_id, took = _detach(env, root, copy, "1500k")
    assert took < 20  # it returned while the transfer (about 14 s) had barely begun
    assert _job(env, job_id)[0]["state"] in ("starting", "running")

    follower = start(env, "attach", job_id, "--json", stderr=subprocess.DEVNULL)
    assert follower.stdout is not None
    seen = 0
    for line in follower.stdout:
        seen += json.loads(line).get("event") == "sample"
        if seen >= 6:
            break
    follower.send_signal(signal.SIGKILL)
    follower.wait(timeout=30)
    killed_at = time.time()
    assert _job(env, job_id)[0]["state"] == "running"

    end = zmigrate(env, "attach", job_id, timeout=300)  # the plain follower, to the end
    assert end.returncode == 0, end.stderr + end.stdout
    assert "finished" in end.stdout
    job, listing = _job(env, job_id)
    assert job["state"] == "finished" and job["outcome"]["ok"] is True
    assert job["done"] >= 20 * 1024 * 1024
    for rel in TREE:
        assert snapshot_guid(f"{copy}{rel[1:]}@s1") == snapshot_guid(f"{src.name}/{rel}@s1")
    text = zmigrate(env, "jobs", timeout=60)
    assert f"{job_id}  finished" in text.stdout, text.stdout

    replay = zmigrate(env, "attach", job_id, "--json", timeout=60)
    assert replay.returncode == 0, replay.stderr
    events = replay.events
    recorded = read_events(Path(env["ZMIGRATE_JOBS_DIR"]) / job_id)
    assert recorded[0].seq == 1  # from the very first event, in order
    assert [r.seq for r in recorded] == sorted(r.seq for r in recorded)
    assert events[:-1] == [j for r in recorded if (j := event_to_json(r.event)) is not None]
    assert "tree_plan" in [e["event"] for e in events]
    assert events[-2]["event"] == "done" and events[-1]["event"] == "job"
    assert sum(e["event"] == "sample" for e in events) > 20
    samples = [r for r in recorded if isinstance(r.event, Sample)]
    assert any(r.at < killed_at for r in samples) and any(r.at > killed_at for r in samples)
    gaps = []
    for ds in {r.event.dataset for r in samples if isinstance(r.event, Sample)}:
        for side in ("send", "receive"):
            ats = [r.at for r in samples if isinstance(r.event, Sample)
                   and r.event.dataset == ds and r.event.side.value == side]
            gaps += [b - a for a, b in zip(ats, ats[1:], strict=False)]
    assert gaps and max(gaps) < SAMPLE_GAP, sorted(gaps)[-5:]


def test_stop_stops_the_job_and_both_ends(env: dict[str, str], tree: tuple[Pool, Pool, str],
                                          keys_left: Callable[[], list[str]]) -> None:
    src, dst, root = tree
    copy = f"{dst.name}/copy"
    job_id, _ = _detach(env, root, copy, "500k")
    assert wait_until(lambda: _sending(env, job_id), timeout=120, interval=1)
    r = zmigrate(env, "stop", job_id, timeout=180)
    assert r.returncode == 0, r.stderr + r.stdout
    assert "stopped" in r.stdout
    job, _ = _job(env, job_id)
    assert job["state"] == "stopped" and job["outcome"]["cancelled"] is True
    assert wait_until(lambda: not zfs_processes_naming(src.name, dst.name), timeout=30), \
        zfs_processes_naming(src.name, dst.name)
    assert wait_until(lambda: not keys_left(), 10), keys_left()  # nor its keys (private)
    replay = zmigrate(env, "attach", job_id, "--json", timeout=60)
    assert replay.returncode == 130
    assert replay.of("error")[-1]["cancelled"] is True
    states = {e["dataset"]: e["state"] for e in replay.of("dataset")}
    assert "sending" not in states.values(), states
    # (zfs-fuse receives without -s: the resume token itself is the OpenZFS lane's to show.)


def test_a_killed_runner_is_named_dead_with_what_it_left(
        env: dict[str, str], tree: tuple[Pool, Pool, str],
        keys_left: Callable[[], list[str]]) -> None:
    src, dst, root = tree
    copy = f"{dst.name}/copy"
    job_id, _ = _detach(env, root, copy, "500k")
    assert wait_until(lambda: _sending(env, job_id), timeout=120, interval=1)
    pid = int(_job(env, job_id)[0]["pid"])
    os.kill(pid, signal.SIGKILL)
    assert wait_until(lambda: _job(env, job_id)[0]["state"] == JobState.RUNNER_DIED.value,
                      timeout=30)
    r = zmigrate(env, "jobs", timeout=180)
    assert r.returncode == 0, r.stderr
    assert f"{job_id}  runner died" in r.stdout, r.stdout
    assert f"the runner (pid {pid}) is gone without an outcome" in r.stdout
    assert "on lab-dst:" in r.stdout, r.stdout
    attach = zmigrate(env, "attach", job_id, timeout=60)
    assert attach.returncode == 1 and "runner died" in attach.stdout
    # What it left is stopped by the next send to the same destination (the leftover rule).
    again = zmigrate(env, "send", "-r", f"lab-src:{root}@s1", f"lab-dst:{copy}", "--json",
                     "--no-history", timeout=300)
    assert again.returncode == 0, again.stderr + again.stdout
    assert wait_until(lambda: not zfs_processes_naming(src.name, dst.name), timeout=30)
    # Its ends were KILLed before their shells could remove their keys: the stop removed them.
    assert wait_until(lambda: not keys_left(), 10), keys_left()
