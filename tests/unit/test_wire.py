"""The wire's readers over real captured outputs (tests/data/wire/README.md), the ceiling's
formula, the advice that applies, and the script's quoting."""

from __future__ import annotations

import shlex

import pytest
from wire_samples import bad_cable, capture, half_duplex_scaled, reading, shaped

from zmigrate.engine import cmdline, plain_words
from zmigrate.engine.errors import InvalidNameError
from zmigrate.engine.findings import AdviceKind
from zmigrate.engine.plain_words import advice as words
from zmigrate.engine.wire import (
    Ceiling,
    Rings,
    Wire,
    at_the_wire,
    payload_rate,
    wire_advice,
    wire_script,
)
from zmigrate.engine.wire.parse import (
    ethtool_link,
    ethtool_rings,
    ifconfig_link,
    route_iface,
    tc_rate,
)


def test_a_virtio_nic_reads_its_mtu_rings_and_no_speed() -> None:
    r = reading(capture("linux-virtio-eth0.txt"), "this")
    assert (r.system, r.iface, r.local, r.virtual) == ("Linux", "eth0", False, "")
    # /sys says -1 and ethtool "Unknown!": unknown, not a figure.
    assert (r.speed, r.duplex, r.mtu, r.path_mtu) == (None, None, 1400, 1400)
    assert r.rings == Rings(256, 256, 256, 256)
    assert r.shaping is None and r.missing == ()


def test_a_veth_has_no_speed_but_its_shaping_and_path_mtu() -> None:
    near = reading(capture("linux-veth-9000-tbf.txt"), "near")
    # veth reports 10000 Mb/s in /sys and ethtool: nominal, so unknown.
    assert (near.iface, near.virtual, near.speed, near.mtu) == ("zmwcapa", "veth", None, 9000)
    assert near.shaping == 400_000_000
    assert near.path_mtu == 1504  # bisected: the far end takes 1500 + a VLAN tag's 4
    far = reading(capture("linux-veth-1500-far.txt"), "far")
    assert (far.mtu, far.path_mtu, far.shaping) == (1500, 1500, None)


def test_loopback_is_local_and_makes_no_ceiling() -> None:
    lo = reading(capture("linux-loopback.txt"), "a")
    assert lo.local and lo.iface == "lo" and lo.speed is None
    assert Wire(lo, lo, None).ceiling is None
    from zmigrate.engine.wire import ceiling
    assert ceiling(lo, lo) is None


def test_without_ethtool_the_rings_are_unknown_and_said_so() -> None:
    r = reading(capture("linux-veth-9000-tbf-no-ethtool.txt"), "bare")
    assert r.rings is None and r.missing == ("ethtool",)
    assert r.mtu == 9000 and r.shaping == 400_000_000  # what /sys and tc tell still is


def test_ethtool_reports() -> None:
    assert ethtool_link(capture("ethtool-100mbit.txt")) == (100, "full")
    assert ethtool_link("\tSpeed: Unknown!\n\tDuplex: Unknown! (255)\n") == (None, None)
    assert ethtool_rings(capture("ethtool-g-256-of-4096.txt")) == Rings(256, 4096, 256, 4096)
    assert ethtool_rings("") is None


def test_tc_rates() -> None:
    assert tc_rate("qdisc tbf 8003: root refcnt 3 rate 400Mbit burst 262100b lat 50ms") \
        == 400_000_000
    # htb: the fastest root class's ceiling (a starved 8bit class is not the link's pace).
    assert tc_rate(capture("tc-htb.txt")) == 300_000_000
    assert tc_rate("qdisc pfifo_fast 0: root refcnt 2 bands 3 priomap 1 2 2 2 1") is None
    assert tc_rate("qdisc tbf 1: root refcnt 2 rate 12500Kbps burst 10Kb lat 50ms") \
        == 100_000_000


def test_freebsd_route_ifconfig_and_clock() -> None:
    r = reading(capture("freebsd-em0.txt"), "backup-01")
    assert (r.system, r.iface, r.speed, r.duplex, r.mtu) == ("FreeBSD", "em0", 1000, "full",
                                                            1500)
    assert (r.cpu_mhz, r.cpu_max_mhz, r.rings, r.missing) == (2400, 2400, None, ())
    assert ifconfig_link(capture("freebsd-ifconfig-100baseTX.txt")) == (100, "full", 1500)
    assert route_iface(capture("freebsd-em0.txt").split("@@route\n")[1]) == ("em0", False)


def test_the_ceiling_formula() -> None:
    # 1 Gb/s at MTU 1500: 1460 payload bytes per 1538 on the wire.
    assert payload_rate(1e9, 1500) == pytest.approx(118_660_598, rel=1e-6)
    assert payload_rate(1e9, 9000) == pytest.approx(123_921_221, rel=1e-6)
    w = bad_cable()
    assert w.ceiling is not None
    c = w.ceiling
    # The slower link (100 Mb/s on the source), at the smaller MTU (1400).
    assert (c.limit, c.host, c.iface, c.bits, c.mtu) == ("link", "tank.lan", "eth0",
                                                         100_000_000, 1400)
    assert c.rate == pytest.approx(100e6 / 8 * 1360 / 1438)
    s = shaped().ceiling
    assert s is not None and (s.limit, s.bits, s.mtu) == ("shaping", 400_000_000, 1500)
    assert s.rate == pytest.approx(400e6 / 8 * 1460 / 1514)  # a qdisc counts from the header
    assert Ceiling.from_json(s.to_json()) == Ceiling(round(s.rate), s.bits, s.mtu, s.limit,
                                                     s.host, s.iface)


def test_the_cure_that_applies_here() -> None:
    kinds = {a.kind: a for a in wire_advice(bad_cable())}
    assert set(kinds) == {AdviceKind.LINK_SLOWER, AdviceKind.MTU_MISMATCH,
                          AdviceKind.RINGS_BELOW_MAX}
    assert words(kinds[AdviceKind.LINK_SLOWER]) == (
        "On the source (tank.lan), eth0 negotiated 100 Mb/s while the destination's port does "
        "1 Gb/s: check the cable or the switch port")
    assert words(kinds[AdviceKind.MTU_MISMATCH]).startswith(
        "MTU 1500 on the destination (em0), 1400 on the source (eth0): the path carries 1400")
    rings = [words(a) for a in wire_advice(bad_cable()) if a.kind is AdviceKind.RINGS_BELOW_MAX]
    assert rings == [
        "On the source (tank.lan), eth0's rx ring holds 256 of 4096: ethtool -G eth0 rx 4096",
        "On the source (tank.lan), eth0's tx ring holds 256 of 4096: ethtool -G eth0 tx 4096"]
    other = {a.kind for a in wire_advice(half_duplex_scaled())}
    assert other == {AdviceKind.LINK_SLOWER, AdviceKind.HALF_DUPLEX, AdviceKind.MTU_MISMATCH,
                     AdviceKind.CPU_SCALED}
    shaped_kinds = {a.kind for a in wire_advice(shaped())}
    assert shaped_kinds == {AdviceKind.MTU_MISMATCH, AdviceKind.HOST_SHAPING}


def test_rings_are_advised_on_linux_only() -> None:
    w = bad_cable()
    from dataclasses import replace
    bsd = Wire(replace(w.source, system="FreeBSD"), w.destination, w.ceiling)
    assert AdviceKind.RINGS_BELOW_MAX not in {a.kind for a in wire_advice(bsd)}


def test_at_the_wire() -> None:
    c = shaped().ceiling
    assert c is not None
    full = at_the_wire(0.95 * c.rate, c)
    assert full is not None and full.num("share") == pytest.approx(0.95)
    assert words(full).startswith("The network carries 43.7 MiB/s, 95% of the 400 Mb/s shaping "
                              "on lab-src: the wire is the limit, only a faster link")
    assert at_the_wire(0.8 * c.rate, c) is None and at_the_wire(1.0, None) is None


def test_wire_json_round_trip() -> None:
    w = bad_cable()
    back = Wire.from_json(w.to_json())
    assert back is not None and back.source == w.source and back.destination == w.destination


def test_the_script_quotes_and_validates_the_peer() -> None:
    script = wire_script("10.0.0.2")
    assert script.startswith("A=10.0.0.2;")
    assert cmdline.address("[fe80::1]") == "fe80::1"
    assert cmdline.address("backup-01.lan") == "backup-01.lan"
    for bad in ("10.0.0.2; rm -rf /", "$(reboot)", "-oProxy", "a b"):
        with pytest.raises(InvalidNameError):
            cmdline.address(bad)
    # The whole script reaches the host as one quoted word of `sh -c`.
    assert shlex.split(shlex.join(["sh", "-c", script]))[2] == script
    assert "ping" not in wire_script("10.0.0.2", probe_mtu=False)


def test_the_verdict_at_the_wire_whatever_the_buffers_show() -> None:
    from every_kind import HZ, both, network, replay, trace

    from zmigrate.engine.events import Side
    from zmigrate.engine.findings import FindingKind
    from zmigrate.engine.transports import Transport
    from zmigrate.engine.verdict.diagnosis import Bottleneck

    assert HZ == 2.0
    # Both buffers near empty at 45 MiB/s over the captured tbf 400 Mbit/s (46.0 MiB/s): the
    # source keeps up with a full wire, the wire sets the pace.
    empty = both(trace(Side.SEND, 30, 45, 45, lambda i: i % 3),
                 trace(Side.RECEIVE, 30, 45, 45, lambda i: i % 2))
    for samples in (empty, network(45)):
        verdict = replay(samples, Transport.TCP, wire=shaped())
        assert verdict.kind is Bottleneck.NETWORK
        assert verdict.finding.kind is FindingKind.AT_THE_WIRE
        assert verdict.finding.num("share") >= 0.9
    # Without the wire's reading, the same trace is the source's.
    assert replay(empty, Transport.TCP).finding.kind is FindingKind.BOTH_EMPTY
    # Well below the ceiling the buffers judge as before.
    assert replay(network(30), Transport.TCP, wire=shaped()).finding.kind is FindingKind.SEND_FULL
    # Compressed, the wire carries the sender's (compressed) bytes: a stream at 130 MiB/s whose
    # compressed 45 MiB/s fill the 400 Mbit/s wire is at the wire, said as 98 %, never 283 %.
    squeezed = both(trace(Side.SEND, 30, 45, 45, lambda i: i % 3),
                    trace(Side.RECEIVE, 30, 130, 130, lambda i: i % 2))
    verdict = replay(squeezed, Transport.TCP, compress="zstd", wire=shaped())
    assert verdict.finding.kind is FindingKind.AT_THE_WIRE
    assert 0.9 <= verdict.finding.num("share") <= 1.0
    assert plain_words.finding(verdict.finding) == (
        "The wire carries the zstd-compressed stream at 45 MiB/s, 98% of the 400 Mb/s shaping "
        "on lab-src: the wire is the limit")
    # A compressed stream's wire well below the ceiling is not at the wire, however fast the
    # stream itself runs.
    slow = both(trace(Side.SEND, 30, 20, 20, lambda i: i % 3),
                trace(Side.RECEIVE, 30, 130, 130, lambda i: i % 2))
    assert replay(slow, Transport.TCP, compress="zstd", wire=shaped()).finding.kind \
        is not FindingKind.AT_THE_WIRE


def test_the_openzfs_guest_without_ethtool_or_ping_says_unknown_never_a_figure() -> None:
    """Captured on the OpenZFS 2.3 guest (Debian 12, virtio NIC behind QEMU's user network):
    no ethtool, no ping; its speed, rings and path MTU are unknown, and it says which tools."""
    r = reading(capture("openzfs-guest-virtio.txt"), "guest")
    assert (r.system, r.iface, r.local, r.mtu) == ("Linux", "enp0s4", False, 1500)
    assert (r.speed, r.duplex, r.rings, r.path_mtu, r.shaping) == (None, None, None, None, None)
    assert r.missing == ("ethtool", "ping")
    assert wire_advice(Wire(r, r, None)) == []  # nothing known, nothing advised
