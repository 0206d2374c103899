"""Figures users read on the lab: a steady rate and ETA under a cap, a transfer too short for a
status line still ends with its figures, and an asked-for hash that goes missing fails the job."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lab.sshd import Lab
from lab.util import write_random_files, zfs
from lab.zfsfuse import Pool

from zmigrate.engine.errors import TransferError
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.job import Job, Request
from zmigrate.engine.job.step import stream_watch as step_watch
from zmigrate.engine.plan import Options
from zmigrate.engine.transports import Transport
from zmigrate.engine.units import MiB

pytestmark = pytest.mark.lab


def _dataset(pool: Pool, name: str, mb: int) -> str:
    ds = f"{pool.name}/{name}"
    zfs("create", ds)
    write_random_files(pool.mountpoint / name, mb, files=8)
    zfs("snapshot", f"{ds}@s")
    return ds


def test_capped_transfer_reads_a_steady_rate_and_an_eta(lab: Lab, pools: tuple[Pool, Pool]
                                                         ) -> None:
    src, dst = pools
    ds = _dataset(src, "capped", 160)
    cap = 20 * MiB
    r = lab.zmigrate("send", f"lab-src:{ds}@s", f"lab-dst:{dst.name}/capped", "--buffer", "64M",
                     "--bwlimit", "20M", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    start = min(e["t"] for e in events if e["event"] == "sample")
    progress = [e for e in events if e["event"] == "progress" and e["elapsed"] >= start + 3]
    assert len(progress) >= 8, progress
    steady = [e for e in progress
              if abs(e["rate"] - cap) <= 0.2 * cap and e["eta"] is not None]
    assert len(steady) >= 0.9 * len(progress), [(e["elapsed"], e["rate"], e["eta"])
                                                for e in progress]


def test_one_second_transfer_ends_with_its_figures(lab: Lab, pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    ds = _dataset(src, "brief", 4)
    r = lab.zmigrate("send", f"lab-src:{ds}@s", f"lab-dst:{dst.name}/brief", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    done = next(e for e in events if e["event"] == "done")
    assert done["rate"] > 0 and done["bytes"] > 4 * MiB
    mbuffers = done["mbuffers"]
    for side in ("send", "receive"):
        assert mbuffers[side]["bytes"] > 4 * MiB and mbuffers[side]["rate"] > 0, mbuffers
    assert {e["side"] for e in events if e["event"] == "sample"} == {"send", "receive"}
    assert events[[e["event"] for e in events].index("done") - 1]["event"] != "error"
    last = [e for e in events if e["event"] == "progress"][-1]
    assert last["rate"] > 0 and last["done"] == done["bytes"]
    verdict = done["verdict"]
    assert verdict["final"] and "not enough data" not in verdict["text"]
    if verdict["kind"] == "none" and verdict["confidence"] == 0:
        assert verdict["text"] == "The transfer was too short to judge"
        assert verdict["finding"]["kind"] == "too_short"
    # The human summary carries both mbuffers' figures too.
    text = lab.zmigrate("send", f"lab-src:{ds}@s", f"lab-dst:{dst.name}/brief2")
    assert text.returncode == 0, text.stderr
    assert "average" in text.stdout and "mbuffer send " in text.stdout \
        and ", receive " in text.stdout, text.stdout


def test_hash_withheld_by_one_side_fails_the_job_with_the_reason(
        pools: tuple[Pool, Pool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real mbuffer behind a wrapper that drops its `MD5 hash:` line: the job must fail."""
    src, dst = pools
    ds = _dataset(src, "nohash", 8)
    wrapper = tmp_path / "bin" / "mbuffer"
    wrapper.parent.mkdir()
    # The preflight's probe (no -s) sees the hash, so the plan asks for it; the transfer not.
    wrapper.write_text("#!/bin/bash\n"
                       "case \" $* \" in *' -s '*) ;; *) exec /usr/bin/mbuffer \"$@\" ;; esac\n"
                       "/usr/bin/mbuffer \"$@\" 2> >(sed -u '/ hash: /d' >&2)\n"
                       "status=$?\nwait\nexit $status\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(step_watch, "FINAL_LINES_WAIT", 5.0)  # the line never comes: wait less
    host = LocalHost()
    options = Options(transport=Transport.LOCAL, buffer_size=16 * MiB, verify_hash=True)
    job = Job(host, host, Request(f"{ds}@s", f"{dst.name}/nohash", options), lambda _e: None)
    with pytest.raises(TransferError, match="hash was asked for.*no hash") as info:
        job.run()
    assert "could not be checked" in str(info.value.fix)
    assert job.plan is not None and job.plan.stream_hash
    assert job.summary is None
