"""A tree kept in sync on a runner host (issue 31: the runner on another machine, and
keep-in-sync until the cut-over): the starter (a computer in a namespace of its own, reaching
only the runner hosts) starts `send -r --snapshot --detach --keep-syncing --runner
lab-runner`; lab-runner repeats the catch-up unattended while files change on the source, and
the starter's `jobs --json` says when it last synced and how long a final sync would keep the
source read-only; then `final-sync ID` from the starter asks lab-runner for the cut-over and
follows only the final sync's events (not the whole record again) to its end, exit 0; the
copy equals the source (each dataset's snapshot guid, every file)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab.keep_starter import KeepStarterLab, keep_starter
from lab.sshd import Lab
from lab.util import snapshot_guid, tree_digest, wait_until, write_random_files, zfs
from lab.zfsfuse import Pool

from zmigrate.engine.events import Synced
from zmigrate.engine.runner import read_events

pytestmark = [pytest.mark.lab, pytest.mark.timeout(300)]

TREE = ("t", "t/a", "t/b")
CHILDREN = ("a", "b")
INTERVAL = "3s"


@pytest.fixture
def starter(lab: Lab, tmp_path: Path) -> Iterator[KeepStarterLab]:
    with keep_starter(tmp_path / "starter", lab) as s:
        yield s


def _job(starter: KeepStarterLab, job_id: str) -> dict[str, Any]:
    r = starter.zmigrate("jobs", "--json", "--no-scan", timeout=120)
    assert r.returncode == 0, r.stderr
    return next(j for j in r.of("job") if j["id"] == job_id)


def _syncs(starter: KeepStarterLab, job_id: str) -> int:
    return int(_job(starter, job_id).get("keep", {}).get("syncs", 0))


def _newest_snapshot(dataset: str) -> str:
    return zfs("list", "-H", "-t", "snapshot", "-o", "name", "-s", "createtxg", "-d", "1",
               dataset).split()[-1]


def test_a_tree_kept_in_sync_on_a_runner_host_is_cut_over_from_the_starter(
        starter: KeepStarterLab, pools: tuple[Pool, Pool], tmp_path: Path) -> None:
    src, dst = pools
    root = f"{src.name}/t"
    for rel in TREE:
        zfs("create", f"{src.name}/{rel}")
        write_random_files(src.mountpoint / rel / "files", 1, files=2)
    copy = f"{dst.name}/copy"
    where = tmp_path / "copy"  # the copy mounted there all along (lab-dst is this machine)
    r = starter.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot",
                         "--detach", "--keep-syncing", INTERVAL, "--runner", "lab-runner",
                         "--buffer", "8M", "--mount-root", str(where), "--json", timeout=120)
    assert r.returncode == 0, r.stderr + r.stdout
    (job,) = r.of("job")
    job_id = str(job["id"])
    assert job["runner"] == "lab-runner" and f"kept in sync every {INTERVAL}" in job["what"]
    record = starter.runner_jobs / job_id
    assert "--keep-syncing" in _job(starter, job_id)["request"]["argv"]
    assert not (starter.starter_jobs / job_id).exists()  # here only the pointer
    assert wait_until(lambda: _syncs(starter, job_id) >= 1, timeout=120, interval=1), \
        _job(starter, job_id)

    # Files change on the source; lab-runner catches up with nobody attached.
    before = _syncs(starter, job_id)
    for rel in TREE[1:]:
        write_random_files(src.mountpoint / rel / "more", 1, files=1)
    assert wait_until(lambda: _syncs(starter, job_id) >= before + 2, timeout=120,
                      interval=1), _job(starter, job_id)  # +2: one started after the change
    listed = _job(starter, job_id)
    assert listed["state"] == "running" and listed["runner"] == "lab-runner", listed
    keep = listed["keep"]
    assert keep["fault"] == "" and time.time() - keep["last_synced"] < 60, keep
    assert keep["window"] is not None and 0 <= keep["window"] < 120, keep
    assert "last synced" in keep["text"] and "read-only for about" in keep["text"], keep
    text = starter.zmigrate("jobs", "--no-scan", timeout=60).stdout
    line = next(x for x in text.splitlines() if x.startswith(job_id))
    assert f"{job_id}  in sync" in line and "a final sync now would keep the source " \
        "read-only for about" in line and line.endswith("[runner lab-runner]"), text
    synced = [x.event for x in read_events(record) if isinstance(x.event, Synced)]
    assert len(synced) >= 3 and all(e.ok for e in synced), synced
    assert sum(e.bytes for e in synced[1:]) >= 2 * 2**20 * 0.9  # what changed went across
    first_copy = read_events(record)

    # The last change, then the cut-over asked from the starter.
    for rel in TREE:
        write_random_files(src.mountpoint / rel / "last", 1, files=1)
    r = starter.zmigrate("final-sync", job_id, "--json", timeout=240)
    assert r.returncode == 0, r.stderr + r.stdout
    kinds = [e["event"] for e in r.events]
    # Only the final sync's run: one plan (a snapshot newer than every catch-up's), one end.
    assert kinds.count("tree_plan") == 1 and kinds.count("done") == 1, kinds
    assert kinds[-1] == "job" and r.events[-1]["state"] == "finished", r.events[-1]
    (plan,) = r.of("tree_plan")
    assert plan["snapshot"] not in {e.snapshot for e in synced}, plan
    assert len(r.events) < len(read_events(record)) - len(first_copy) + 10
    ended = _job(starter, job_id)
    assert ended["state"] == "finished" and ended["outcome"]["ok"] is True, ended
    assert ended["keep"]["final"] is True, ended["keep"]

    for rel in TREE:
        with pytest.raises(OSError, match="Read-only file system"):
            (src.mountpoint / rel / "after-cutover").write_bytes(b"x")
        snap = _newest_snapshot(f"{src.name}/{rel}")
        assert snap.split("@")[1] == plan["snapshot"], snap
        assert snapshot_guid(f"{copy}{rel[1:]}@{plan['snapshot']}") == snapshot_guid(snap)
        theirs = tree_digest(src.mountpoint / rel)
        ours = tree_digest(where / rel[2:])
        if rel == "t":  # the root's own files (its children are datasets of their own)
            theirs = {k: v for k, v in theirs.items() if k.split("/")[0] not in CHILDREN}
            ours = {k: v for k, v in ours.items() if k.split("/")[0] not in CHILDREN}
        assert ours == theirs and len(ours) >= 3, rel


def test_final_sync_of_a_remote_job_not_kept_in_sync_says_the_runners_refusal(
        starter: KeepStarterLab, pools: tuple[Pool, Pool]) -> None:
    """The runner host's refusal (its words and fix) is said by the starter, exit 2."""
    src, dst = pools
    zfs("create", f"{src.name}/d")
    write_random_files(src.mountpoint / "d", 1, files=1)
    zfs("snapshot", f"{src.name}/d@s1")
    r = starter.zmigrate("send", f"lab-src:{src.name}/d@s1", f"lab-dst:{dst.name}/copy",
                         "--detach", "--runner", "lab-runner", "--json", timeout=120)
    assert r.returncode == 0, r.stderr + r.stdout
    job_id = str(r.of("job")[0]["id"])
    said = starter.zmigrate("final-sync", job_id, timeout=120)
    assert said.returncode != 0
    assert f"error: lab-runner: job {job_id} is not kept in sync" in said.stderr, said.stderr
    assert "fix: `zmigrate send -r SRC@SNAP DST --final`" in said.stderr, said.stderr
    assert wait_until(lambda: _job(starter, job_id)["state"] == "finished", 120, 1)
