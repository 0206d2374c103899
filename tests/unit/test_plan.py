"""Planning is pure: inventories and capabilities in, a Plan or a PreflightError out."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

import pytest

from zmigrate.engine import zfs
from zmigrate.engine.errors import InvalidNameError, PreflightError
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.plan import Options, Site, make_plan, safe_buffer
from zmigrate.engine.transports import Transport
from zmigrate.engine.transports.route import Endpoint, SshRoute
from zmigrate.engine.units import GiB, MiB

CAPS = zfs.parse_probe((Path(__file__).parent.parent / "data/zfs/zfs-fuse/probe.txt").read_text())


def snap(ds: str, short: str, guid: int, txg: int, used: int = MiB, ref: int = 10 * MiB
         ) -> zfs.Snapshot:
    return zfs.Snapshot(f"{ds}@{short}", guid, 1_700_000_000 + txg, txg, used, ref)


def dataset(name: str, snaps: list[zfs.Snapshot] | None = None) -> zfs.Dataset:
    return zfs.Dataset(name, "filesystem", hash(name) & 0xFFFF, 0, 10 * MiB, 100 * GiB, 0,
                       snaps or [])


SRC_SNAPS = [snap("tank/home", s, g, t) for s, g, t in
             [("a", 11, 10), ("b", 12, 20), ("c", 13, 30), ("d", 14, 40)]]


def sites(dst_snaps: list[zfs.Snapshot] | None, dst_exists: bool = True,
          caps: zfs.Capabilities = CAPS) -> tuple[Site, Site]:
    src = Site(LocalHost("src"), caps, [dataset("tank/home", SRC_SNAPS)])
    dst_sets = [dataset("backup")]
    if dst_exists:
        dst_sets.append(dataset("backup/home", dst_snaps))
    return src, Site(LocalHost("dst"), caps, dst_sets)


def plan(dst_snaps: list[zfs.Snapshot] | None, snapshot: str = "tank/home@d",
         dst_exists: bool = True, **opts: object):  # type: ignore[no-untyped-def]
    src, dst = sites(dst_snaps, dst_exists)
    return make_plan(src, dst, snapshot, "backup/home", Options(**opts),  # type: ignore[arg-type]
                     connect_address="192.0.2.7", allow_address="192.0.2.5", port=40001)


def test_full_send_renders_both_commands() -> None:
    p = plan(None, dst_exists=False, buffer_size=512 * MiB, rate_limit=20 * MiB)
    assert p.kind == "full" and p.transport is Transport.TCP and p.arrives == ("d",)
    (dst_host, dst_cmd), (src_host, src_cmd) = p.commands()
    assert (dst_host, src_host) == ("dst", "src")
    assert dst_cmd == "mbuffer -s 128k -m 512M -I 192.0.2.5:40001 | zfs receive backup/home"
    assert src_cmd == "zfs send tank/home@d | mbuffer -s 128k -m 512M -r 20M -O 192.0.2.7:40001"
    assert "full copy" in p.describe() and "cleartext" in p.describe()


def test_md5_of_the_stream_only_when_asked() -> None:
    p = plan(None, dst_exists=False, verify_hash=True)
    (_, dst_cmd), (_, src_cmd) = p.commands()
    assert dst_cmd == ("mbuffer -s 128k -m 1G -I 192.0.2.5:40001 --hash md5 | "
                       "zfs receive backup/home")
    assert src_cmd == "zfs send tank/home@d | mbuffer -s 128k -m 1G -O 192.0.2.7:40001 --hash md5"
    assert not any("md5" in w for w in p.warnings)
    assert p.stream_hash and "the stream's MD5 on both ends" in p.describe()
    assert not plan(None, dst_exists=False).stream_hash


def test_md5_asked_where_an_mbuffer_cannot_says_so() -> None:
    src, _ = sites(None, dst_exists=False)
    old_mbuffer = dataclasses.replace(CAPS, mbuffer_hash=False)
    dst = Site(LocalHost("dst"), old_mbuffer, [dataset("backup")])
    p = make_plan(src, dst, "tank/home@d", "backup/home", Options(verify_hash=True),
                  connect_address="192.0.2.7", allow_address="192.0.2.5", port=40001)
    assert all("--hash" not in line for _, line in p.commands())
    assert not p.stream_hash and "MD5" not in p.describe()
    assert any(w.startswith("dst: this mbuffer has no --hash") for w in p.warnings), p.warnings


def test_incremental_base_is_newest_common_by_guid_not_name() -> None:
    # The destination has a snapshot named "c" that is NOT the source's c (other guid).
    dst = [snap("backup/home", "a", 11, 5), snap("backup/home", "b", 12, 6),
           snap("backup/home", "c", 999, 7)]
    with pytest.raises(PreflightError, match="diverged.*@c"):
        plan(dst)
    p = plan(dst, force=True)
    assert p.base == "b" and p.rolled_back == ("c",)
    assert [x.name for x in p.destroys] == ["backup/home@c"]
    assert p.arrives == ("c", "d")
    assert p.commands()[0][1] == "zfs rollback -r backup/home@b"
    assert "zfs receive -F backup/home" in p.commands()[1][1]
    assert "zfs send -I tank/home@b tank/home@d" in p.commands()[2][1]


def test_incremental_intermediates_or_only_endpoint() -> None:
    dst = [snap("backup/home", "a", 11, 5)]
    assert plan(dst).arrives == ("b", "c", "d")
    p = plan(dst, intermediates=False)
    assert p.arrives == ("d",) and "zfs send -i tank/home@a tank/home@d" in p.commands()[1][1]
    assert "-F" not in p.commands()[0][1]


def test_history_sends_oldest_in_full_then_the_rest() -> None:
    p = plan(None, dst_exists=False, history=True)
    assert [s.base for s in p.steps] == [None, "tank/home@a"]
    assert p.arrives == ("a", "b", "c", "d")


@pytest.mark.parametrize(("dst_snaps", "exists", "opts", "message"), [
    ([], True, {}, "already exists"),
    ([snap("backup/home", "x", 77, 1)], True, {}, "no snapshot in common"),
    ([snap("backup/home", "d", 14, 1)], True, {}, "nothing to send"),
    (None, False, {"base": "b"}, "base @b is missing"),
    ([snap("backup/home", "a", 11, 1)], True, {"base": "c"}, "base @c is missing"),
])
def test_refusals(dst_snaps: list[zfs.Snapshot] | None, exists: bool, opts: dict[str, object],
                  message: str) -> None:
    with pytest.raises(PreflightError, match=message) as info:
        plan(dst_snaps, dst_exists=exists, **opts)
    assert info.value.fix


def test_missing_snapshot_parent_and_pool_root() -> None:
    src, dst = sites(None, dst_exists=False)
    with pytest.raises(PreflightError, match="does not exist") as info:
        make_plan(src, dst, "tank/home@zz", "backup/home", Options(), connect_address="x",
                  port=1)
    assert "pick one of" in str(info.value.fix)
    with pytest.raises(PreflightError, match="parent backup/deep"):
        make_plan(src, dst, "tank/home@d", "backup/deep/home", Options(), connect_address="x",
                  port=1)
    with pytest.raises(PreflightError, match="pool root"):
        make_plan(src, dst, "tank/home@d", "backup", Options(), connect_address="x", port=1)


def test_mbuffer_missing_is_refused_with_install_hint() -> None:
    caps = dataclasses.replace(CAPS, mbuffer_version=None)
    src, dst = sites(None, dst_exists=False, caps=caps)
    with pytest.raises(PreflightError, match="mbuffer is not installed") as info:
        make_plan(src, dst, "tank/home@d", "backup/home", Options(), connect_address="x", port=1)
    assert "apt install mbuffer" in str(info.value.fix)


def test_buffer_is_capped_to_a_share_of_free_memory() -> None:
    caps = dataclasses.replace(CAPS, mem_available=1 * GiB)
    size, note = safe_buffer(1 * GiB, 128 * 1024, caps)
    assert size == 256 * MiB and note and "25%" in note
    assert safe_buffer(64 * MiB, 128 * 1024, CAPS) == (64 * MiB, None)


def test_both_ends_on_one_machine_share_its_memory() -> None:
    # Both mbuffers on one 4 GiB guest, each given 25 % of its free memory, and Debian 12's
    # mbuffer touching its whole buffer at start: the kernel killed one (OpenZFS lane, go-back).
    tools = dataclasses.replace(CAPS.tools, machine="boot-1")
    caps = dataclasses.replace(CAPS, mem_available=1 * GiB, tools=tools)
    src = Site(LocalHost("src"), caps, [dataset("tank/home", SRC_SNAPS)])
    dst = Site(LocalHost("dst"), caps, [dataset("backup")])
    p = make_plan(src, dst, "tank/home@d", "backup/home", Options(buffer_size=1 * GiB),
                  connect_address="192.0.2.7", port=1)
    assert all(" -m 128M " in c for _, c in p.commands()), p.commands()
    assert any("shared by both ends" in w for w in p.warnings), p.warnings
    other = dataclasses.replace(caps, tools=dataclasses.replace(tools, machine="boot-2"))
    p = make_plan(src, dataclasses.replace(dst, caps=other), "tank/home@d", "backup/home",
                  Options(buffer_size=1 * GiB), connect_address="192.0.2.7", port=1)
    assert all(" -m 256M " in c for _, c in p.commands()), p.commands()


def test_ssh_and_local_transports() -> None:
    p = plan(None, dst_exists=False, transport=Transport.SSH, ssh_target="root@192.0.2.7",
             ssh_options=("-p", "2222"))
    assert p.steps[0].destination_command is None and p.steps[0].receive_mark
    line = p.commands()[0][1]
    words = shlex.split(line)
    assert words[words.index("ssh"):words.index("ssh") + 6] == [
        "ssh", "-o", "BatchMode=yes", "-p", "2222", "root@192.0.2.7"]
    remote = shlex.split(words[-1])
    # In sh whatever the login shell; the receiving mbuffer reports on the remote's stdout
    # (fd 3), not into a file: no /tmp log on the destination.
    mark = p.steps[0].receive_mark
    assert remote[:2] == ["sh", "-c"] and remote[2] == (
        f": {mark}; exec 3>&1; mbuffer -s 128k -m 1G 2>&3 | zfs receive backup/home")
    assert "/tmp" not in line and " -l " not in line
    p = plan(None, dst_exists=False, transport=Transport.LOCAL)
    assert p.commands() == [("src", "zfs send tank/home@d | mbuffer -s 128k -m 1G | "
                                    "zfs receive backup/home")]
    p = plan(None, dst_exists=False, transport=Transport.LOCAL, verify_hash=True)
    # -e: a failed receive ends the mbuffer at once (with --hash it would read on to the end).
    assert p.commands() == [("src", "zfs send tank/home@d | mbuffer -s 128k -m 1G -e --hash md5 | "
                                    "zfs receive backup/home")]


def test_a_proxy_command_that_stays_here_is_named_in_the_plan() -> None:
    from zmigrate.gui import words as gui_words

    routed = SshRoute(Endpoint("root", "192.0.2.7"), proxied=True)
    p = plan(None, dst_exists=False, transport=Transport.SSH, ssh_target="root@192.0.2.7",
             ssh_route=routed)
    said = [str(w) for w in p.warnings]
    assert any("ProxyCommand" in w and "--transport relay" in w and "root@192.0.2.7" in w
               for w in said), said
    # The wizard names its own choice instead of the flag.
    shown = [gui_words.caveat(w) for w in p.warnings]
    assert any("ProxyCommand" in w and "Relayed through this computer" in w for w in shown) \
        and not any("--" in w for w in shown), shown
    direct = plan(None, dst_exists=False, transport=Transport.SSH,
                  ssh_target="root@192.0.2.7", ssh_route=SshRoute(Endpoint("root", "192.0.2.7")))
    assert not any("ProxyCommand" in str(w) for w in direct.warnings)
    # The user's own ProxyCommand option goes to the source's ssh: nothing to warn about.
    theirs = SshRoute(Endpoint("root", "192.0.2.7"), options=("-oProxyCommand=nc %h %p",),
                      proxied=True)
    own = plan(None, dst_exists=False, transport=Transport.SSH, ssh_target="root@192.0.2.7",
               ssh_route=theirs)
    assert not any("ProxyCommand" in str(w) for w in own.warnings)


def test_a_cleartext_listener_open_to_any_address_is_named() -> None:
    """tcp's listener is guarded by the source's address alone: where it was not found, the
    plan says the port takes anyone (and how to close it); the private listener proves its
    peer's key, so it says nothing of the kind."""
    from zmigrate.gui import words as gui_words

    src, dst = sites(None, dst_exists=False)
    open_ = make_plan(src, dst, "tank/home@d", "backup/home", Options(),
                      connect_address="192.0.2.7", allow_address=None, port=40001)
    (_, dst_cmd), _ = open_.commands()
    assert "-I 40001 " in dst_cmd
    said = [str(w) for w in open_.warnings]
    assert any(w.startswith("dst: the listener on port 40001 takes a connection from any "
                            "address") and "--allow-address" in w for w in said), said
    shown = [gui_words.caveat(w) for w in open_.warnings]
    assert any("any address" in w and '"Accept only from" on the Transport and tuning page'
               in w and "choose Direct TCP, private" in w and "--" not in w for w in shown), shown
    guarded = plan(None, dst_exists=False)
    assert not any("any address" in str(w) for w in guarded.warnings), guarded.warnings
    private = make_plan(src, dst, "tank/home@d", "backup/home",
                        Options(transport=Transport.PRIVATE),
                        connect_address="192.0.2.7", allow_address=None, port=40001)
    assert not any("any address" in w for w in private.warnings), private.warnings


def test_the_users_listener_addresses_are_used_and_checked() -> None:
    p = plan(None, dst_exists=False, connect_address="[2001:db8::7]", allow_address="nas-a.lan")
    (_, dst_cmd), (_, src_cmd) = p.commands()
    assert "-I nas-a.lan:40001" in dst_cmd and "-O '[2001:db8::7]:40001'" in src_cmd
    for bad in ("10.0.0.2; reboot", "$(id)", "-oProxy"):
        with pytest.raises(InvalidNameError, match="is not valid"):
            plan(None, dst_exists=False, connect_address=bad)
