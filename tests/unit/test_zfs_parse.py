"""zfs output parsers on real captured output (tests/data/zfs/<dialect>/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zmigrate.engine import zfs

DATA = Path(__file__).parent.parent / "data" / "zfs"


def _read(*parts: str) -> str:
    return (DATA.joinpath(*parts)).read_text()


def test_zfs_fuse_probe() -> None:
    caps = zfs.parse_probe(_read("zfs-fuse", "probe.txt"))
    assert caps.dialect == "zfs-fuse"
    assert caps.zfs_version is None
    assert caps.has_zfs and not caps.send_estimate and not caps.resumable and not caps.raw_send
    assert caps.mbuffer_version == "R20230301" and caps.mbuffer_hash
    assert caps.pv and caps.setsid and caps.ss
    assert caps.mem_available == 24208380 * 1024
    assert caps.uid == 0
    assert "receive_resume_token" not in caps.properties
    assert caps.describe().startswith("zfs-fuse; mbuffer R20230301; pv")


def test_zfs_fuse_inventory_from_get_hp() -> None:
    datasets = zfs.build_inventory(zfs.parse_get(_read("zfs-fuse", "get-r.txt")))
    names = [d.name for d in datasets]
    assert names == ["zfix", "zfix/home", "zfix/home/alice"]
    alice = datasets[2]
    assert [s.short for s in alice.snapshots] == ["2026-11-01", "2026-11-08", "2026-11-15"]
    # `zfs list` on zfs-fuse rounds guids ("6.00E"); `zfs get -Hp` gives them exactly.
    assert "6.00E" in _read("zfs-fuse", "list-guid.txt")
    assert all(s.guid > 2**32 for s in alice.snapshots)
    assert alice.newest is not None and alice.newest.short == "2026-11-15"
    assert alice.snapshot("2026-11-08") is not None
    assert alice.pool == "zfix" and alice.depth == 2
    assert all(d.type == "filesystem" for d in datasets)


def test_parse_get_ignores_junk_lines() -> None:
    text = "a\tguid\t1\nnot a line\nb\ttype\tfilesystem\n"
    assert zfs.parse_get(text) == {"a": {"guid": "1"}, "b": {"type": "filesystem"}}


@pytest.mark.parametrize(("text", "fix"), [
    ("cannot open 'x': permission denied", "zfs allow"),
    ("cannot open 'tank/nope': dataset does not exist", "zmigrate list"),
    ("cannot receive incremental stream: destination tank/x has been modified\n"
     "since most recent snapshot", None),
])
def test_error_classification_names_a_fix(text: str, fix: str | None) -> None:
    err = zfs.classify_zfs_error("h", "listing", text)
    assert err.host == "h"
    if fix:
        assert err.fix is not None and fix in err.fix
    assert err.message.startswith("listing failed: ")


def test_send_and_receive_argv_are_validated() -> None:
    from zmigrate.engine.errors import InvalidNameError
    from zmigrate.engine.hosts import LocalHost

    h = LocalHost(sudo=True)
    assert zfs.send_argv(h, "p/a@s2", base="p/a@s1") == ["sudo", "-n", "zfs", "send", "-I",
                                                          "p/a@s1", "p/a@s2"]
    assert zfs.receive_argv(h, "q/b", force=True)[-2:] == ["-F", "q/b"]
    with pytest.raises(InvalidNameError):
        zfs.send_argv(h, "p/a@s;rm -rf /")
    with pytest.raises(InvalidNameError):
        zfs.receive_argv(h, "q/$(id)")


def test_holds_are_read_from_userrefs() -> None:
    # Captured on zfs-fuse after `zfs hold keep zfix/home@s1; zfs hold backup zfix/home@s1`.
    datasets = zfs.build_inventory(zfs.parse_get(_read("zfs-fuse", "get-userrefs.txt")))
    home = next(d for d in datasets if d.name == "zfix/home")
    assert [(s.short, s.holds) for s in home.snapshots] == [("s1", 2), ("s2", 0)]
    assert all(s.holds == 0 for s in datasets[0].snapshots)


def test_a_zfs_error_in_the_wizards_words_names_no_command_of_ours() -> None:
    """`zmigrate list` is the command line's way to look; the wizard's is its Reload."""
    from zmigrate.gui import words as gui_words

    err = zfs.classify_zfs_error("h", "listing", "cannot open 'tank/nope': dataset does not exist")
    assert err.fix == "check the name with `zmigrate list`"
    shown = gui_words.error_fix(err)
    assert shown is not None and "zmigrate list" not in shown and "Reload" in shown, shown
