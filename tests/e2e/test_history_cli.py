"""`zmigrate send` records the transfer; `zmigrate history` lists it and exports its samples."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from lab.plugin import Lab, Pool
from lab.util import snapshot_guid, write_random_files, zfs, zmigrate

pytestmark = [pytest.mark.lab, pytest.mark.timeout(300)]


def test_send_is_recorded_and_exported(lab: Lab, pools: tuple[Pool, Pool],
                                       tmp_path: Path) -> None:
    src, dst = pools
    zfs("create", f"{src.name}/data")
    write_random_files(src.mountpoint / "data", total_mb=48, files=8)
    zfs("snapshot", f"{src.name}/data@s1")
    env = lab.env()
    env["ZMIGRATE_DATA_DIR"] = str(tmp_path / "data")

    sent = zmigrate(env, "send", f"lab-src:{src.name}/data@s1", f"lab-dst:{dst.name}/copy",
                    "--bwlimit", "16M")
    assert sent.returncode == 0, sent.stdout + sent.stderr
    assert snapshot_guid(f"{dst.name}/copy@s1") == snapshot_guid(f"{src.name}/data@s1")
    assert (tmp_path / "data" / "history.sqlite3").is_file()

    listed = zmigrate(env, "history")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split()[0] == "ID"
    [row] = lines[1:]
    assert row.split()[0] == "1"
    assert f"lab-src → lab-dst:{dst.name}/copy" in row
    assert f"{src.name}/data@s1" in row
    assert "verified" in row

    shown = zmigrate(env, "history", "show", "1")
    assert shown.returncode == 0, shown.stderr
    assert "verified" in shown.stdout
    assert "zfs send" in shown.stdout
    assert "# on lab-dst:" in shown.stdout

    exported = zmigrate(env, "history", "show", "1", "--csv")
    assert exported.returncode == 0, exported.stderr
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert rows, "no samples were recorded"
    assert {r["side"] for r in rows} == {"send", "receive"}
    assert max(int(r["total"]) for r in rows) > 0
    assert [float(r["t"]) for r in rows] == sorted(float(r["t"]) for r in rows)

    out = tmp_path / "job.json"
    as_json = zmigrate(env, "history", "show", "1", "--json", "-o", str(out))
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(out.read_text())
    assert data["job"]["outcome"] == "verified"
    assert data["job"]["bytes"] > 40 * 2**20
    assert data["job"]["transport"] == "private"  # the default between the lab hosts
    assert len(data["samples"]) == len(rows)


def test_no_history_flag_records_nothing(lab: Lab, pools: tuple[Pool, Pool],
                                         tmp_path: Path) -> None:
    src, dst = pools
    zfs("create", f"{src.name}/data")
    write_random_files(src.mountpoint / "data", total_mb=2, files=2)
    zfs("snapshot", f"{src.name}/data@s1")
    env = lab.env()
    env["ZMIGRATE_DATA_DIR"] = str(tmp_path / "data")
    sent = zmigrate(env, "send", f"lab-src:{src.name}/data@s1", f"lab-dst:{dst.name}/copy",
                    "--no-history")
    assert sent.returncode == 0, sent.stdout + sent.stderr
    listed = zmigrate(env, "history")
    assert "no transfers recorded yet" in listed.stdout
