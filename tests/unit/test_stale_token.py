"""A stale resume token (issue 30, item 10): an interrupted receive whose snapshot was then
destroyed on the source can only be discarded; the error names the token as stale and offers
only --discard-partial.

Output: `send-nvP-t-stale.txt` is the token dump captured from OpenZFS 2.3.2 on the guest
(`send-nvP-t-full.txt`: libzfs prints it under -v before it looks the snapshots up) followed
by the refusal libzfs then prints (lib/libzfs/libzfs_sendrecv.c, zfs_send_resume_impl; the
same words issue 30 quotes from the guest). It was composed, not captured in one run: the
guest could not be booted within this change's time. The incremental-base refusal is libzfs's
format string with this dump's numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from zmigrate.engine import zfs
from zmigrate.engine.errors import PreflightError, PreflightReason
from zmigrate.engine.hosts import CommandResult

DATA = Path(__file__).parent.parent / "data" / "zfs" / "openzfs-2.3"
DUMP = (DATA / "send-nvP-t-full.txt").read_text().split("full\t")[0]


def _source(*guids: int) -> list[zfs.Dataset]:
    return [zfs.Dataset("srcpool/a", "filesystem", 0, 0, 0, 0, 0,
                        snapshots=[zfs.Snapshot(f"srcpool/a@n{i}", g, i, i, 0, 0)
                                   for i, g in enumerate(guids)])]


def test_zfs_saying_the_snapshot_is_gone_makes_the_token_stale() -> None:
    text = (DATA / "send-nvP-t-stale.txt").read_text()
    assert zfs.stale_token(text) == zfs.StaleToken("srcpool/a@s1")
    base = DUMP + "\tfromguid = 0x6e1a0c2f54b3d981\n" + \
        "cannot resume send: incremental source 0x6e1a0c2f54b3d981 no longer exists\n"
    assert zfs.stale_token(base) == zfs.StaleToken("srcpool/a@s1", "0x6e1a0c2f54b3d981")
    same_name = "cannot resume send: 'srcpool/a@s1' is no longer the same snapshot used " \
        "in the initial send\n"
    assert zfs.stale_token(DUMP + same_name) == zfs.StaleToken("srcpool/a@s1")


def test_the_sources_snapshots_decide_where_zfs_still_decodes_it() -> None:
    ok = (DATA / "send-nvP-t-full.txt").read_text()
    assert zfs.stale_token(ok) is None  # nothing read of the source: zfs's word only
    assert zfs.stale_token(ok, _source(0xB3E58B6C7EE7EA95)) is None
    assert zfs.stale_token(ok, _source(0x1234)) == zfs.StaleToken("srcpool/a@s1")
    # Another dataset read: no verdict from it.
    other = [zfs.Dataset("srcpool/b", "filesystem", 0, 0, 0, 0, 0)]
    assert zfs.stale_token(ok, other) is None


class _Source:
    """A source host whose `zfs send -nvP -t` answers as the guest does."""

    label = "nas"

    def __init__(self, status: int, stdout: str, stderr: str) -> None:
        self.result = CommandResult("nas", "zfs send -nvP -t ...", status, stdout, stderr)

    def privileged(self, argv: list[str]) -> list[str]:
        return argv

    def execute(self, argv: list[str], timeout: float = 0) -> CommandResult:
        return self.result


def test_a_stale_token_is_refused_offering_only_discard() -> None:
    token = (DATA / "resume-token-full.txt").read_text().strip()
    stale = (DATA / "send-nvP-t-stale.txt").read_text()
    dump, _, error = stale.rpartition("resume token contents:")[2].rpartition("\n" + "cannot")
    host = _Source(1, "resume token contents:" + dump + "\n", "cannot" + error)
    with pytest.raises(PreflightError) as e:
        zfs.resume_info(host, token, "dstpool/a")  # type: ignore[arg-type]
    err = e.value
    assert err.reason is PreflightReason.STALE_TOKEN and err.host == "nas"
    assert "resume token is stale" in err.message and "srcpool/a@s1" in err.message
    assert "no longer exists on nas" in err.message
    assert err.fix is not None and "--discard-partial" in err.fix and "--resume" not in err.fix
    assert "zfs receive -A dstpool/a" in err.fix
    # A token zfs still sends decodes as before.
    good = _Source(0, (DATA / "send-nvP-t-full.txt").read_text(), "")
    info = zfs.resume_info(good, token, "dstpool/a", _source(0xB3E58B6C7EE7EA95))  # type: ignore[arg-type]
    assert info.toname == "srcpool/a@s1"
