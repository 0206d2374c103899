"""The live verdict through the CLI: a --bwlimit transfer on the lab says it is rate-limited.

Needs the lead's wiring of diagnosis.Diagnoser into Job (subscribe, finish(), and the final
verdict in Summary.extra["verdict"]); until then it fails on the missing `verdict` events.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from lab.sshd import Lab
from lab.util import write_random_files, zfs
from lab.zfsfuse import Pool

pytestmark = [pytest.mark.lab, pytest.mark.timeout(180)]


def test_bwlimit_transfer_emits_rate_limited_verdict_and_final_in_done(
        lab: Lab, pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    ds = f"{src.name}/ds"
    zfs("create", ds)
    write_random_files(src.mountpoint / "ds", 40, files=8)
    zfs("snapshot", f"{ds}@snap")
    r = subprocess.run(
        [sys.executable, "-m", "zmigrate", "send", f"lab-src:{ds}@snap",
         f"lab-dst:{dst.name}/copy", "--bwlimit", "10M", "--buffer", "64M", "--json"],
        capture_output=True, text=True, timeout=150, env=lab.env(), stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 0, r.stderr + r.stdout
    events = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    verdicts = [e for e in events if e["event"] == "verdict"]
    assert verdicts, "no verdict event: is diagnosis.Diagnoser subscribed to the Job?"
    for v in verdicts:
        assert {"kind", "text", "advice", "evidence", "confidence", "final", "t"} <= set(v)
        assert 0 <= v["confidence"] <= 1
    assert any(v["kind"] in ("rate_limited", "network") for v in verdicts), verdicts
    final = verdicts[-1]
    assert final["final"] is True
    assert final["kind"] in ("rate_limited", "network"), final
    assert final["evidence"]["rate_limit"] == 10 * 1024 * 1024
    done = next(e for e in events if e["event"] == "done")
    assert done["verdict"]["final"] is True
    assert done["verdict"]["kind"] == final["kind"]
    # The verdict event comes before the end of the job.
    assert events.index(final) < events.index(done)
