"""Parsers and planner on output captured from a real OpenZFS 2.3.2 host.

The fixtures in tests/data/zfs/openzfs-2.3 come from the QEMU guest of ../shared/openzfs-vm.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from zmigrate.engine import zfs
from zmigrate.engine.errors import PreflightError
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.plan import Options, PartialReceiveError, Site, make_plan
from zmigrate.engine.tree import TreeRequest, plan_tree

DATA = Path(__file__).parent.parent / "data" / "zfs" / "openzfs-2.3"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def _caps() -> zfs.Capabilities:
    return zfs.parse_probe(_read("probe.txt"))


def test_probe_of_openzfs_2_3() -> None:
    caps = _caps()
    assert caps.dialect == "openzfs" and caps.zfs_version == "2.3.2-2~bpo12+2"
    assert caps.send_estimate and caps.resumable and caps.raw_send
    assert caps.compressed_send and caps.large_blocks and caps.embedded_send
    assert caps.receive_properties and caps.discard_partial and caps.bookmarks
    assert caps.uid == 0 and caps.root and caps.user == "root"
    assert caps.ssh_server_ip == "10.0.2.15"
    assert "receive_resume_token" in caps.properties
    assert "zfs-2.3.2" in _read("version.txt")


def test_zfs_fuse_probe_has_none_of_the_new_features() -> None:
    caps = zfs.parse_probe((DATA.parent / "zfs-fuse" / "probe.txt").read_text())
    assert not (caps.resumable or caps.compressed_send or caps.bookmarks
                or caps.discard_partial or caps.receive_properties)


def _inventory() -> list[zfs.Dataset]:
    return zfs.build_inventory(zfs.parse_get(_read("get-t.txt")))


def test_inventory_with_bookmarks_partial_receive_and_encryption() -> None:
    by_name = {d.name: d for d in _inventory()}
    a = by_name["srcpool/a"]
    assert [s.short for s in a.snapshots] == ["s1", "s2", "s3"]
    assert [b.name for b in a.bookmarks] == ["srcpool/a#s1"]
    assert a.bookmarks[0].guid == a.snapshots[0].guid
    assert a.bookmarks[0].createtxg == a.snapshots[0].createtxg
    assert by_name["dstpool/p"].resume_token == _read("resume-token-full.txt").strip()
    assert by_name["dstpool/p"].snapshots == []
    assert by_name["srcpool/a"].resume_token is None and not a.encrypted
    assert "srcpool/a/c1/c2" in by_name
    assert "srcpool/a#s1" in _read("list-p.txt")


def test_send_nvp_sizes() -> None:
    for name, size in (("send-nvP-full.txt", 31557360), ("send-nvP-incremental.txt", 5321120),
                       ("send-nvP-bookmark.txt", 5287728), ("send-nvP-replicate.txt", 36965744)):
        lines = [x for x in _read(name).splitlines() if x.startswith("size")]
        assert int(lines[-1].split()[1]) == size


def test_resume_token_decoded() -> None:
    token = _read("resume-token-full.txt").strip()
    info = zfs.parse_resume_info(token, _read("send-nvP-t-full.txt"))
    assert info.toname == "srcpool/a@s1" and info.toguid == 0xB3E58B6C7EE7EA95
    assert info.fromguid is None and info.received == 0x9A67D8
    assert info.remaining == 21438232
    assert info.total == 31557360  # received + remaining == the full -nvP size
    assert not info.raw and not info.compressed


def test_resume_token_errors() -> None:
    with pytest.raises(zfs.ZmigrateError, match="could not be decoded"):
        zfs.parse_resume_info("1-x", _read("resume-token-corrupt.txt"))
    assert "corrupt" in _read("resume-token-corrupt.txt")
    assert "does not have any resumable receive state" in _read("receive-A-nothing.txt")


def test_allow_parsing_and_effective_permissions() -> None:
    grants = zfs.parse_allow(_read("allow-nested.txt"))
    assert zfs.effective_permissions(grants, "dstpool/zmrecv", "zm", ["zm"]) == {
        "create", "mount", "receive", "readonly"}
    # Descendent grant of the set @rx on dstpool reaches its children, not dstpool itself.
    assert {"create", "receive"} <= zfs.effective_permissions(grants, "dstpool/zmrecv/a", "zm")
    assert zfs.effective_permissions(grants, "dstpool", "zm") == {"mount"}  # everyone, local
    assert zfs.effective_permissions(grants, "dstpool/zmrecv", "other") == set()
    assert zfs.parse_allow(_read("allow-empty.txt")) == []
    assert zfs.allow_line("zm", ["send", "hold"], "srcpool/a") == \
        "zfs allow -u zm send,hold srcpool/a"


def test_permission_error_names_the_allow_line() -> None:
    err = zfs.classify_zfs_error("h", "receiving", "cannot receive: permission denied",
                                 permission=(("create", "mount", "receive"), "dstpool/x", "zm"))
    assert err.fix is not None and "zfs allow -u zm create,mount,receive dstpool/x" in err.fix


def _sites() -> tuple[Site, Site]:
    caps = _caps()
    inv = _inventory()
    src = [d for d in inv if d.pool == "srcpool"]
    dst = [d for d in inv if d.pool == "dstpool"]
    return Site(LocalHost("src"), caps, src), Site(LocalHost("dst"), caps, dst)


def test_plan_uses_openzfs_flags_and_resumable_receive() -> None:
    src, dst = _sites()
    plan = make_plan(src, dst, "srcpool/a@s1", "dstpool/new", Options(connect_address="h"),
                     port=9999)
    assert plan.send_flags == ("-c", "-L", "-e") and plan.resumable
    assert "zfs send -c -L -e srcpool/a@s1" in plan.steps[0].source_command
    assert "zfs receive -s dstpool/new" in str(plan.steps[0].destination_command)


def test_a_pool_kept_for_grub_gets_no_compressed_records_and_no_encrypted_dataset() -> None:
    """srcpool has zstd active (a dataset once compressed with it); a compatibility=grub2 pool
    has lz4, embedded data and large blocks, but neither zstd nor encryption."""
    src, dst = _sites()
    src = replace(src, features=zfs.parse_pool_features(_read("zpool-get-all.txt")))
    grub = zfs.parse_pool_features(_read("zpool-get-all-grub2.txt"))
    assert (grub["zstd_compress"], grub["lz4_compress"], grub["encryption"]) == (
        "disabled", "active", "disabled")
    plan = make_plan(src, replace(dst, features=grub), "srcpool/a@s1", "dstpool/new",
                     Options(connect_address="h"), port=9999)
    assert plan.send_flags == ("-L", "-e"), plan.send_flags
    assert any("lacks feature@zstd_compress, so zfs send -c is left out" in w
               for w in map(str, plan.warnings)), plan.warnings
    # Into a pool with every feature, and where the pool's features were not read: as stored.
    for features in (zfs.parse_pool_features(_read("zpool-get-all.txt")), None):
        plan = make_plan(src, replace(dst, features=features), "srcpool/a@s1", "dstpool/new",
                         Options(connect_address="h"), port=9999)
        assert plan.send_flags == ("-c", "-L", "-e")
    with pytest.raises(PreflightError, match="lacks feature@zstd_compress"):
        make_plan(src, replace(dst, features=grub), "srcpool/a@s1", "dstpool/new",
                  Options(connect_address="h", compressed=True), port=9999)
    encrypted = replace(src, datasets=[replace(d, encryption="aes-256-gcm", keystatus="unavailable",
                                               encryption_root=d.name) if d.name == "srcpool/a"
                                       else d for d in src.datasets])
    with pytest.raises(PreflightError, match="cannot hold encrypted datasets") as info:
        make_plan(encrypted, replace(dst, features=grub), "srcpool/a@s1", "dstpool/new",
                  Options(connect_address="h"), port=9999)
    assert "zpool set feature@encryption=enabled dstpool" in str(info.value.fix)


def test_an_encrypted_dataset_goes_raw_only_into_a_pool_that_has_its_blocks_features() -> None:
    """A raw stream carries the blocks as stored: from srcpool (zstd active) into the guest's
    pool with encryption but no zstd, zfs receive refused it ("pool must be upgraded to
    receive this stream"); zmigrate refuses it first, naming the feature, with --decrypt."""
    src, dst = _sites()
    src = replace(src, features=zfs.parse_pool_features(_read("zpool-get-all.txt")))
    encz = zfs.parse_pool_features(_read("zpool-get-all-encryption-no-zstd.txt"))
    assert (encz["encryption"], encz["zstd_compress"]) == ("enabled", "disabled")
    encrypted = replace(src, datasets=[replace(d, encryption="aes-256-gcm", keystatus="unavailable",
                                               encryption_root=d.name) if d.name == "srcpool/a"
                                       else d for d in src.datasets])
    with pytest.raises(PreflightError, match="lacks feature@zstd_compress, and an encrypted "
                       "dataset is sent raw") as info:
        make_plan(encrypted, replace(dst, features=encz), "srcpool/a@s1", "dstpool/new",
                  Options(connect_address="h"), port=9999)
    assert "so they cannot go decompressed" in str(info.value)
    assert "zpool set feature@zstd_compress=enabled dstpool" in str(info.value.fix)
    assert "--decrypt" in str(info.value.fix)
    # Where the source's pool does not use zstd, or its features were not read: raw goes.
    for features in ({**src.features, "zstd_compress": "enabled"}, None):
        plan = make_plan(replace(encrypted, features=features), replace(dst, features=encz),
                         "srcpool/a@s1", "dstpool/new", Options(connect_address="h"), port=9999)
        assert "-w" in plan.steps[0].source_command
    # Unencrypted, the same dataset goes without -c into it, as into any pool without zstd.
    plan = make_plan(src, replace(dst, features=encz), "srcpool/a@s1", "dstpool/new",
                     Options(connect_address="h"), port=9999)
    assert plan.send_flags == ("-L", "-e")


def test_plan_refuses_partial_without_a_choice_then_resumes_or_discards() -> None:
    src, dst = _sites()
    token = _read("resume-token-full.txt").strip()
    with pytest.raises(PartialReceiveError) as info:
        make_plan(src, dst, "srcpool/a@s1", "dstpool/p", Options(connect_address="h"), port=1)
    assert "--resume" in str(info.value) and "--discard-partial" in str(info.value)
    assert info.value.token == token
    resume = zfs.parse_resume_info(token, _read("send-nvP-t-full.txt"))
    plan = make_plan(src, dst, "srcpool/a@s1", "dstpool/p",
                     Options(connect_address="h", resume=True), port=1, resume_info=resume)
    assert plan.resume_token == token and plan.resumed_from == resume.received
    assert plan.estimate == 21438232 and plan.estimate_exact
    assert f"zfs send -t {token}" in plan.steps[0].source_command
    plan = make_plan(src, dst, "srcpool/a@s1", "dstpool/p",
                     Options(connect_address="h", discard_partial=True), port=1)
    assert plan.discard == "zfs receive -A dstpool/p" and plan.kind == "full"
    with pytest.raises(PreflightError, match="is of srcpool/a@s1, not of srcpool/a@s2"):
        make_plan(src, dst, "srcpool/a@s2", "dstpool/p",
                  Options(connect_address="h", resume=True), port=1, resume_info=resume)


def test_plan_replicate_with_properties_and_bookmark_base() -> None:
    src, dst = _sites()
    plan = make_plan(src, dst, "srcpool/a@s3", "dstpool/r",
                     Options(connect_address="h", replicate=True, mount=False,
                             properties=(("mountpoint", "none"),),
                             exclude_properties=("compression",), bookmark=True), port=1)
    assert "-R" in plan.send_flags and not plan.resumable
    assert plan.children == ("srcpool/a/c1", "srcpool/a/c1/c2")
    assert plan.arrives == ("s1", "s2", "s3")
    assert "-u -o mountpoint=none -x compression dstpool/r" in str(
        plan.steps[0].destination_command)
    assert plan.bookmark == "zfs bookmark srcpool/a@s3 'srcpool/a#s3'"
    with pytest.raises(zfs.ZmigrateError, match="not valid"):
        make_plan(src, dst, "srcpool/a@s3", "dstpool/r",
                  Options(connect_address="h", exclude_properties=("x;rm",)), port=1)


def test_catch_up_size_from_written_is_near_the_real_stream() -> None:
    """A tree's catch-up estimate (each snapshot's `written` since the common one), against the
    size OpenZFS itself gave for that very stream (`zfs send -nvP -I @s1 srcpool/a@s3`)."""
    src = [d for d in _inventory() if d.name == "srcpool/a"]
    a = src[0]
    assert [s.written for s in a.snapshots] == [31580160, 5316608, 65536]
    assert a.written == 0
    copy = replace(a, name="bk/a", snapshots=[replace(a.snapshots[0], name="bk/a@s1")])
    host = LocalHost()
    plan = plan_tree(host, host, TreeRequest("srcpool/a", "bk/a", "s3"), src, [copy],
                     snapshot="s3", unmounted=True)
    (entry,) = plan.entries
    assert entry.action == "incremental" and entry.reason == "from @s1"
    real = int(_read("send-nvP-incremental.txt").split("size")[-1].split()[0])
    assert real == 5321120
    assert abs(entry.size - real) / real < 0.02, (entry.size, real)
    # A snapshot taken now adds what was written since the newest one (here: nothing).
    now = plan_tree(host, host, TreeRequest("srcpool/a", "bk/a"), src, [copy],
                    snapshot="zmigrate-1", unmounted=True)
    assert now.entries[0].size == entry.size
