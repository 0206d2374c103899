"""The frozen app (packaging/build.sh's dist/zmigrate/zmigrate) moves datasets over the lab: the
bundle holds everything a real transfer needs (paramiko and its cryptography, the engine, the
history's SQLite), not only what the GUI's --self-test touches. Collected with
ZMIGRATE_FROZEN_APP=1 (conftest.py): .ci/run runs it after packaging/build.sh; ZMIGRATE_FROZEN
names another build. A missing build fails it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from lab.sshd import Lab
from lab.util import snapshot_guid, tree_digest, write_random_files, zfs
from lab.zfsfuse import Pool

ROOT = Path(__file__).resolve().parents[2]
FROZEN = Path(os.environ.get("ZMIGRATE_FROZEN", ROOT / "dist" / "zmigrate" / "zmigrate"))

pytestmark = pytest.mark.lab


@pytest.fixture(autouse=True, scope="module")
def _built() -> None:
    if not FROZEN.is_file():
        pytest.fail(f"no frozen app at {FROZEN}: run packaging/build.sh first", pytrace=False)


def _frozen(lab: Lab, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**lab.env(), "XDG_DATA_HOME": str(home / "data"),
           "XDG_CONFIG_HOME": str(home / "config")}
    # Not from the checkout: the bundle must not find zmigrate's source on the path.
    env.pop("PYTHONPATH", None)
    return subprocess.run([str(FROZEN), *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=home, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("transport", ["tcp", "ssh"])
def test_the_frozen_app_sends_full_then_incremental(
    lab: Lab, pools: tuple[Pool, Pool], tmp_path: Path, transport: str
) -> None:
    src, dst = pools
    ds = f"{src.name}/ds"
    zfs("create", ds)
    mnt = src.mountpoint / "ds"
    write_random_files(mnt, 16, files=8)
    zfs("snapshot", f"{ds}@one")
    extra = [f"--ssh-option={o}" for o in lab.ssh_options()[1::2]] if transport == "ssh" else []

    r = _frozen(lab, tmp_path, "send", f"lab-src:{ds}@one", f"lab-dst:{dst.name}/copy",
                "--transport", transport, "--buffer", "32M", "--hash", "--json", *extra)
    assert r.returncode == 0, r.stderr + r.stdout
    events = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    plan = next(e for e in events if e["event"] == "plan")
    assert plan["kind"] == "full" and plan["transport"] == transport
    done = next(e for e in events if e["event"] == "done")
    assert done["verified"] is True and done["hash_match"] is True
    assert snapshot_guid(f"{ds}@one") == snapshot_guid(f"{dst.name}/copy@one")
    copy = Path(zfs("get", "-H", "-o", "value", "mountpoint", f"{dst.name}/copy").strip())
    assert tree_digest(copy) == tree_digest(mnt)

    write_random_files(mnt / "more", 2, files=2)
    zfs("snapshot", f"{ds}@two")
    r = _frozen(lab, tmp_path, "send", f"lab-src:{ds}@two", f"lab-dst:{dst.name}/copy",
                "--transport", transport, "--buffer", "32M", *extra)
    assert r.returncode == 0, r.stderr + r.stdout
    assert snapshot_guid(f"{ds}@two") == snapshot_guid(f"{dst.name}/copy@two")

    r = _frozen(lab, tmp_path, "history")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(f"{dst.name}/copy") >= 2, r.stdout
