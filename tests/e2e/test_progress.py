"""The figures people read while a capped transfer runs: a steady rate and an ETA, not bursts."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from lab.sshd import Lab
from lab.util import write_random_files, zfs
from lab.zfsfuse import Pool

from zmigrate.engine.rate import SmoothedRate
from zmigrate.engine.units import MiB

pytestmark = pytest.mark.lab


def test_smoothing_follows_bursts_as_their_mean() -> None:
    """Bursts of 4x the mean every other second read as the mean once a few seconds passed."""
    s = SmoothedRate()
    readings = [(t * 0.5, 240.0 if t % 4 == 0 else 0.0) for t in range(80)]
    values = [s.add(t, r) for t, r in readings]
    late = values[20:]
    assert all(40 <= v <= 90 for v in late), (min(late), max(late))


def test_capped_transfer_reports_a_steady_rate_and_an_eta(lab: Lab,
                                                          pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    ds = f"{src.name}/ds"
    zfs("create", ds)
    write_random_files(src.mountpoint / "ds", 160, files=8)
    zfs("snapshot", f"{ds}@one")
    cap = 16 * MiB
    r = subprocess.run(
        [sys.executable, "-m", "zmigrate", "send", f"lab-src:{ds}@one", f"lab-dst:{dst.name}/copy",
         "--bwlimit", "16M", "--buffer", "64M", "--json", "--no-history"],
        capture_output=True, text=True, timeout=300, env=lab.env(), stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr + r.stdout
    events = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    progress = [e for e in events if e["event"] == "progress" and e["elapsed"] >= 3.0]
    assert len(progress) >= 10, "the transfer should last about 10 s"
    steady = [e for e in progress
              if abs(e["rate"] - cap) <= 0.2 * cap and e["eta"] is not None]
    assert len(steady) >= 0.9 * len(progress), [(round(e["rate"] / MiB, 1), e["eta"])
                                                 for e in progress]
