"""Compression in transit on the lab: `--compress` over tcp, ssh and relay, verified by guid;
the sender's mbuffer counts the compressed bytes, the receiver's (and so progress) the stream's;
a host without the tool is refused, named, with its install command."""

from __future__ import annotations

from pathlib import Path

import pytest
from lab.sshd import Lab, LabHost
from lab.util import snapshot_guid, tree_digest, write_text_files, zfs
from lab.zfsfuse import Pool

from zmigrate.engine.units import MiB

pytestmark = [pytest.mark.lab, pytest.mark.timeout(300)]


def _text_snapshot(pool: Pool, name: str, mb: int) -> str:
    ds = f"{pool.name}/{name}"
    zfs("create", "-o", "compression=off", ds)
    write_text_files(pool.mountpoint / name, mb, files=4)
    zfs("snapshot", f"{ds}@a")
    return ds


@pytest.mark.parametrize(("transport", "tool"), [("tcp", "zstd"), ("ssh", "zstd"),
                                                 ("relay", "zstd"), ("tcp", "lz4")])
def test_compressed_in_transit_arrives_whole(lab: Lab, pools: tuple[Pool, Pool], transport: str,
                                             tool: str) -> None:
    src, dst = pools
    ds = _text_snapshot(src, "text", 24)
    dest = f"{dst.name}/copy"
    extra = [f"--ssh-option={o}" for o in lab.ssh_options()[1::2]] if transport == "ssh" else []
    # The rate limit caps the wire (compressed) bytes and keeps it long enough for status lines.
    r = lab.zmigrate("send", f"lab-src:{ds}@a", f"lab-dst:{dest}", "--transport", transport,
                     "--compress", tool, "--json", "--no-history", "--bwlimit", "6M", *extra)
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    plan = next(e for e in events if e["event"] == "plan")
    assert plan["compress"] == tool
    assert "compressed in transit with " + tool in plan["description"]
    source_line = next(c["command"] for c in plan["commands"] if "zfs send" in c["command"])
    receive_line = next(c["command"] for c in plan["commands"] if "zfs receive" in c["command"])
    compress = "zstd -T0 -3" if tool == "zstd" else "lz4 -q -c"
    # The compressor between zfs send and the sender's mbuffer; the decompressor after the
    # wire, before the receiver's mbuffer and zfs receive.
    assert source_line.index("zfs send") < source_line.index(compress) \
        < source_line.index("mbuffer")
    assert receive_line.index(f"{tool} -d") < receive_line.rindex("mbuffer") \
        < receive_line.index("zfs receive")
    if transport == "tcp":
        assert receive_line.index("-I") < receive_line.index(f"{tool} -d")
    done = next(e for e in events if e["event"] == "done")
    assert done["bytes"] >= 24 * MiB  # stream bytes, as zfs receive took them
    assert snapshot_guid(f"{dest}@a") == snapshot_guid(f"{ds}@a")
    mnt = zfs("get", "-H", "-o", "value", "mountpoint", dest).strip()
    assert tree_digest(Path(mnt)) == tree_digest(src.mountpoint / "text")
    if tool == "zstd":
        # The sender counts what crossed the wire: the log lines' zstd stream is about a
        # quarter of the stream's bytes.
        sent = max(e["total"] for e in events if e["event"] == "sample" and e["side"] == "send")
        assert 0 < sent < 0.5 * done["bytes"], (sent, done["bytes"])
        progress = [e for e in events if e["event"] == "progress"]
        assert progress[-1]["done"] == done["bytes"]
        # What the link carried (the share against a ceiling uses it): the sender's rate,
        # capped, well below the stream's that zstd shrank.
        assert all(p["wire_rate"] is not None for p in progress), progress
        last = progress[-1]
        assert 0 < last["wire_rate"] <= 1.15 * 6 * MiB, last
        assert last["rate"] > 1.5 * last["wire_rate"], last


def test_a_host_without_the_compressor_is_named_with_its_install_command(
        lab: Lab, nozstd_host: LabHost, pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    ds = _text_snapshot(src, "text", 2)
    r = lab.zmigrate("send", f"lab-src:{ds}@a", f"{nozstd_host.alias}:{dst.name}/copy",
                     "--compress", "zstd", "--no-history")
    assert r.returncode != 0
    assert "zstd is not installed" in r.stderr and nozstd_host.alias in r.stderr, r.stderr
    assert "apt install zstd" in r.stderr, r.stderr
    assert not zfs("list", "-H", "-o", "name", "-r", dst.name).count("/copy")
    # Without --compress the same host takes it.
    r = lab.zmigrate("send", f"lab-src:{ds}@a", f"{nozstd_host.alias}:{dst.name}/copy",
                     "--no-history")
    assert r.returncode == 0, r.stderr
    assert snapshot_guid(f"{dst.name}/copy@a") == snapshot_guid(f"{ds}@a")


def test_a_tree_is_compressed_dataset_by_dataset(lab: Lab, pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    root = _text_snapshot(src, "logs", 6)
    zfs("create", "-o", "compression=off", f"{root}/child")
    write_text_files(src.mountpoint / "logs" / "child", 4, files=2)
    zfs("snapshot", "-r", f"{root}@b")
    copy = f"{dst.name}/tree"
    r = lab.zmigrate("send", "-r", f"lab-src:{root}@b", f"lab-dst:{copy}", "--compress", "zstd",
                     "--json", "--no-history", "--buffer", "16M")
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    plans = [e for e in events if e["event"] == "plan"]
    assert plans and all(p["compress"] == "zstd" for p in plans), plans
    for rel in ("", "/child"):
        assert snapshot_guid(f"{copy}{rel}@b") == snapshot_guid(f"{root}{rel}@b"), rel
