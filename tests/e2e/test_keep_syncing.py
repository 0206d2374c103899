"""Keeping a tree in sync until the cut-over, on the lab: `send -r --snapshot --detach
--keep-syncing` copies the tree, then repeats the catch-up unattended while files change on
the source; `jobs --json` says when it last synced and how long a final sync would keep the
source read-only; `final-sync ID` stops the repetition and cuts over, and the copy's files
equal the source's."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lab.sshd import Lab
from lab.util import start, tree_digest, wait_until, write_random_files, zfs, zmigrate
from lab.zfsfuse import Pool

from zmigrate.engine.events import Synced
from zmigrate.engine.runner import read_events

pytestmark = [pytest.mark.lab, pytest.mark.timeout(600)]

TREE = ("t", "t/a", "t/b", "t/c")
CHILDREN = ("a", "b", "c")
INTERVAL = 4  # seconds between catch-ups (the floor lowered for the test: ZMIGRATE_KEEP_SYNC_MIN)


@pytest.fixture
def env(lab: Lab, tmp_path: Path) -> dict[str, str]:
    e = lab.env()
    e["ZMIGRATE_JOBS_DIR"] = str(tmp_path / "jobs")
    e["ZMIGRATE_DATA_DIR"] = str(tmp_path / "data")  # the history the window is timed from
    e["ZMIGRATE_RUNNER_LAUNCHER"] = "setsid"
    e["ZMIGRATE_KEEP_SYNC_MIN"] = "1"
    return e


def _job(env: dict[str, str], job_id: str) -> dict[str, Any]:
    r = zmigrate(env, "jobs", "--json", "--no-scan", timeout=120)
    assert r.returncode == 0, r.stderr
    return next(j for j in r.of("job") if j["id"] == job_id)


def _syncs(env: dict[str, str], job_id: str) -> int:
    return int(_job(env, job_id).get("keep", {}).get("syncs", 0))


def test_a_kept_tree_catches_up_unattended_then_a_final_sync_cuts_over(
        env: dict[str, str], pools: tuple[Pool, Pool], tmp_path: Path,
        keys_left: Callable[[], list[str]]) -> None:
    src, dst = pools
    root = f"{src.name}/t"
    for rel in TREE:
        zfs("create", f"{src.name}/{rel}")
        write_random_files(src.mountpoint / rel / "files", 2, files=2)
    copy = f"{dst.name}/copy"
    where = tmp_path / "copy"  # the copy mounted there all along: readable while it syncs
    r = zmigrate(env, "send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot",
                 "--detach", "--keep-syncing", f"{INTERVAL}s", "--buffer", "8M",
                 "--mount-root", str(where), "--json", timeout=60)
    assert r.returncode == 0, r.stderr + r.stdout
    (job,) = r.of("job")
    job_id = str(job["id"])
    assert wait_until(lambda: _syncs(env, job_id) >= 1, timeout=180, interval=1), \
        _job(env, job_id)

    # Three catch-ups, each after the source changed, with nobody attached.
    for n in range(3):
        before = _syncs(env, job_id)
        for rel in TREE[1:]:
            write_random_files(src.mountpoint / rel / f"more{n}", 1, files=1)
        assert wait_until(lambda b=before: _syncs(env, job_id) >= b + 2, timeout=180,
                          interval=1), _job(env, job_id)  # +2: one started after the change
    listed = _job(env, job_id)
    assert listed["state"] == "running", listed
    keep = listed["keep"]
    assert keep["syncs"] >= 7 and keep["fault"] == "", keep
    assert time.time() - keep["last_synced"] < INTERVAL + 60
    # Timed on this tree's runs in the history (None without any); right after a catch-up
    # with nothing written since, the engine predicts no stream at all (0 s).
    assert keep["window"] is not None and 0 <= keep["window"] < 120, keep
    assert "last synced" in keep["text"] and "read-only for about" in keep["text"], keep
    text = zmigrate(env, "jobs", "--no-scan", timeout=60).stdout
    assert f"{job_id}  in sync" in text and "a final sync now would keep the source " \
        "read-only for about" in text, text
    synced = [r.event for r in read_events(Path(env["ZMIGRATE_JOBS_DIR"]) / job_id)
              if isinstance(r.event, Synced)]
    assert len(synced) >= 7 and all(e.ok for e in synced)
    assert sum(e.bytes for e in synced[1:]) >= 3 * 3 * 2**20 * 0.9  # what changed went across
    assert len({e.snapshot for e in synced}) == len(synced)  # a new snapshot each time

    # The last change, then the cut-over through the CLI.
    for rel in TREE:
        write_random_files(src.mountpoint / rel / "last", 1, files=1)
    r = zmigrate(env, "final-sync", job_id, timeout=300)
    assert r.returncode == 0, r.stderr + r.stdout
    assert "finished" in r.stdout, r.stdout
    ended = _job(env, job_id)
    assert ended["state"] == "finished" and ended["outcome"]["ok"] is True, ended
    assert ended["keep"]["final"] is True
    for rel in TREE:
        # zfs-fuse's `zfs get` may say readonly "off temporary" while the file system refuses
        # writes: the refusal is what counts.
        with pytest.raises(OSError, match="Read-only file system"):
            (src.mountpoint / rel / "after-cutover").write_bytes(b"x")
        theirs = tree_digest(src.mountpoint / rel)
        ours = tree_digest(where / rel[2:])
        if rel == "t":  # the root's own files (its children are datasets of their own)
            theirs = {k: v for k, v in theirs.items() if k.split("/")[0] not in CHILDREN}
            ours = {k: v for k, v in ours.items() if k.split("/")[0] not in CHILDREN}
        assert ours == theirs and len(ours) >= 3, rel
    assert wait_until(lambda: not keys_left(), 10), keys_left()  # each step's keys went too


def test_an_unattended_catch_ups_fault_is_said_first_and_the_next_one_recovers(
        env: dict[str, str], pools: tuple[Pool, Pool],
        keys_left: Callable[[], list[str]]) -> None:
    """A catch-up refused (a snapshot made on the copy meanwhile: it would need --force) is
    recorded as the job's fault: `jobs` and `attach` say it first; the job goes on, and once
    the cause is gone the next catch-up verifies and the fault is cleared; `stop` stops it."""
    src, dst = pools
    root = f"{src.name}/t"
    for rel in ("t", "t/a"):
        zfs("create", f"{src.name}/{rel}")
        write_random_files(src.mountpoint / rel / "files", 1, files=2)
    copy = f"{dst.name}/copy"
    r = zmigrate(env, "send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot",
                 "--detach", "--keep-syncing", "3s", "--buffer", "8M", "--json", timeout=60)
    assert r.returncode == 0, r.stderr + r.stdout
    job_id = str(r.of("job")[0]["id"])
    assert wait_until(lambda: _syncs(env, job_id) >= 1, timeout=180, interval=1)

    zfs("snapshot", f"{copy}/a@intruder")
    assert wait_until(lambda: _job(env, job_id)["keep"]["fault"] != "", timeout=120,
                      interval=1), _job(env, job_id)
    listed = _job(env, job_id)
    assert listed["state"] == "running"
    assert listed["keep"]["text"].startswith("the last catch-up failed")
    line = next(x for x in zmigrate(env, "jobs", "--no-scan", timeout=60).stdout.splitlines()
                if x.startswith(job_id))
    assert line.index("the last catch-up failed") < line.index("last synced"), line
    attach = start(env, "attach", job_id, stdout=subprocess.DEVNULL)
    assert attach.stderr is not None
    first = attach.stderr.readline()
    attach.kill()
    attach.wait(timeout=30)
    assert first.startswith(f"job {job_id}: the last catch-up failed"), first

    zfs("destroy", f"{copy}/a@intruder")
    synced = _syncs(env, job_id)
    assert wait_until(lambda: _syncs(env, job_id) > synced, timeout=120, interval=1)
    assert _job(env, job_id)["keep"]["fault"] == ""
    stop = zmigrate(env, "stop", job_id, timeout=180)
    assert stop.returncode == 0, stop.stderr + stop.stdout
    assert _job(env, job_id)["state"] == "stopped"
    assert wait_until(lambda: not keys_left(), 10), keys_left()
