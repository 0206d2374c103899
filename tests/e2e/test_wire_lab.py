"""The wire read on real links of the namespace lab: a veth whose ends have different MTUs (its
path MTU measured), the tbf-shaped link's ceiling and a transfer drawn against it, and a host
without ethtool saying "unknown" (tests/data/wire holds the captures the unit tests read)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lab.shaped import ShapedLab
from lab.sshd import Lab, SshdLab
from lab.util import run, snapshot_guid, zfs
from lab.zfsfuse import Pool, PoolFactory

from zmigrate.engine.hosts.login import HostSpec, connect
from zmigrate.engine.plain_words import link_detail
from zmigrate.engine.readings.iface_loss import EXPLAINS
from zmigrate.engine.readings.tcp_resent import LOSSY
from zmigrate.engine.wire import read_side

pytestmark = [pytest.mark.lab, pytest.mark.timeout(600)]

IP = "/usr/sbin/ip"
SHAPED_BITS = 400_000_000


@pytest.fixture
def jumbo_one_end(lab: Lab, tmp_path: Path) -> Iterator[ShapedLab]:
    """A namespace pair of its own, unshaped: MTU 9000 on this machine's end, 1500 on lab-far's."""
    pair = ShapedLab(tmp_path / "jumbo", lab, rate=None, mtu=1500).start()
    try:
        run([IP, "link", "set", pair.near_link, "mtu", "9000"], timeout=30)
        yield pair
    finally:
        pair.stop()


def test_mtus_that_differ_are_reported_with_the_path_mtu_measured(
        jumbo_one_end: ShapedLab) -> None:
    r = jumbo_one_end.zmigrate("doctor", "lab-src", "lab-far", "--stage", "network",
                               "--transport", "tcp",
                               "--seconds", "2", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    report = r.events[-1]
    wire = report["wire"]
    src, dst = wire["source"], wire["destination"]
    assert (src["iface"], src["mtu"], dst["mtu"]) == (jumbo_one_end.near_link, 9000, 1500)
    # Measured by DF pings: a 9000-byte packet does not reach the 1500 end; veth takes its MTU
    # plus a VLAN tag's 4 bytes, no more.
    assert 1500 <= src["path_mtu"] <= 1504, src
    assert dst["path_mtu"] == 1500, dst
    advice = {a["kind"]: a["figures"] for a in report["advice_items"]}
    assert advice["mtu_mismatch"]["path_mtu"] == 1500, report["advice_items"]
    assert any(text.startswith("MTU 9000 on the source") and "the path carries 1500" in text
               for text in report["advice"]), report["advice"]
    print("\n" + "\n".join(report["advice"]))


def _random_source(make_pool: PoolFactory, prefix: str, mib: int) -> tuple[str, Pool]:
    """`mib` MiB of random data in an uncompressed dataset of a new source pool, snapshotted
    (its dataset), and an empty destination pool."""
    src = make_pool(f"{prefix}src", size_mb=768)
    ds = f"{src.name}/data"
    zfs("create", "-o", "compression=off", ds)
    run(["dd", "if=/dev/urandom", f"of={src.mountpoint / 'data' / 'blob'}", "bs=1M",
         f"count={mib}", "status=none"], timeout=120)
    zfs("snapshot", f"{ds}@s")
    return ds, make_pool(f"{prefix}dst", size_mb=768)


def test_the_shaped_links_ceiling_and_a_transfer_drawn_against_it(
        shaped_lab: ShapedLab, make_pool: PoolFactory) -> None:
    shaped_lab.shape("400mbit")
    ds, dst = _random_source(make_pool, "w", 320)
    sent = shaped_lab.zmigrate("send", f"lab-src:{ds}@s", f"lab-far:{dst.name}/copy",
                               "--json", "--no-history")
    assert sent.returncode == 0, sent.stderr + sent.stdout
    events = sent.events
    assert snapshot_guid(f"{dst.name}/copy@s") == snapshot_guid(f"{ds}@s")
    wires = [e for e in events if e["event"] == "wire"]
    assert len(wires) == 1, [e["event"] for e in events]
    ceiling = wires[0]["ceiling"]
    assert (ceiling["limit"], ceiling["bits"], ceiling["host"]) == ("shaping", SHAPED_BITS,
                                                                     "lab-src"), ceiling
    assert wires[0]["source"]["shaping"] == SHAPED_BITS
    done = events[-1]
    rate = float(done["bytes"]) / float(done["seconds"])
    share = rate / ceiling["rate"]
    expected = rate / (SHAPED_BITS / 8)
    verdicts = [f"{v['kind']} {v['text']}" for v in events if v["event"] == "verdict"]
    print(f"\nrate {rate / 2**20:.1f} MiB/s, ceiling {ceiling['rate'] / 2**20:.1f} MiB/s, "
          f"share {share:.0%}; " + "; ".join(verdicts))
    assert abs(share - expected) <= 0.10 * expected, (share, expected)
    assert 0.5 <= share <= 1.05, share  # drawn against the link it crossed
    if share >= 0.9:  # at the wire: the final verdict says so, not a tuning problem
        final = [v for v in events if v["event"] == "verdict"][-1]
        assert final["kind"] == "network" and "the wire is the limit" in final["text"], final


def test_a_host_without_ethtool_says_unknown(
        lab: Lab, shaped_lab: ShapedLab, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    runner = SshdLab(tmp_path_factory.mktemp("noethtool"))
    try:
        bare = runner.start_bare(lab, "lab-noethtool", "/bin/bash",
                                 without=frozenset({"ethtool"}))
        monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(lab.ssh_config))
        monkeypatch.setenv("ZMIGRATE_KNOWN_HOSTS", str(lab.known_hosts))
        monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
        host = connect(HostSpec(bare.alias))
        try:
            side = read_side(host, f"{shaped_lab.net}.2")
        finally:
            host.close()
    finally:
        runner.stop()
    assert side.iface == shaped_lab.near_link and side.mtu == 1500
    assert side.rings is None and "ethtool" in side.missing, side
    assert "rings unknown (no ethtool)" in link_detail(side), link_detail(side)


def test_list_names_the_hosts_link(shaped_lab: ShapedLab) -> None:
    r = shaped_lab.zmigrate("list", "lab-far")
    assert r.returncode == 0, r.stderr + r.stdout
    far_end = f"zmsb{shaped_lab.suffix}"  # lab-far's end of the veth, toward this computer
    assert f"# lab-far: link {far_end} veth, MTU {shaped_lab.mtu} (toward this computer)" \
        in r.stdout, r.stdout


def _resent(far: ShapedLab) -> tuple[dict[str, float], list[str], list[str]]:
    """The doctor's network stage over lab-far's link: its note on TCP's segments sent again
    (figures, with the stage's notes on what an interface lost under `lost`), the advice's
    kinds and the advice as said."""
    r = far.zmigrate("doctor", "lab-src", "lab-far", "--stage", "network", "--transport", "tcp",
                     "--seconds", "4", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    report = r.events[-1]
    network = next(e for e in r.events if e.get("event") == "doctor_stage"
                   and e["name"] == "network")
    assert network["error"] is None and network["rate"], network
    notes = [n["figures"] for n in network["notes"] if n["kind"] == "resent"]
    assert len(notes) == 1, network["notes"]
    lost = [n["figures"] for n in network["notes"] if n["kind"] == "iface_loss"]
    return ({**notes[0], "lost": lost}, [a["kind"] for a in report["advice_items"]],
            report["advice"])


def test_a_link_that_loses_packets_is_named(shaped_lab: ShapedLab) -> None:
    """A tbf queue too short to hold a burst drops packets as a lossy link does: the doctor's
    network stage reads how many segments the source sent again, and names the loss and where
    it is: both ends' interfaces read before and after, the source's own queue (the tbf)
    dropped them. On the same link with a queue that holds its bursts, TCP loses next to
    nothing and nothing is said."""
    try:
        shaped_lab.shape("400mbit", burst="16kb", latency="1ms")
        lossy, kinds, said = _resent(shaped_lab)
    finally:
        shaped_lab.shape("400mbit")
    assert lossy["host"] == "lab-src" and lossy["sent"] > 10_000, lossy
    assert lossy["share"] >= 3 * LOSSY, lossy
    assert "lossy_link" in kinds, kinds
    assert lossy["ifaces_read"] == 2, lossy
    at_source = [n for n in lossy["lost"] if n["host"] == "lab-src"]
    assert len(at_source) == 1 and at_source[0]["iface"] == shaped_lab.near_link, lossy
    assert at_source[0]["queue"] >= EXPLAINS * lossy["again"], lossy
    assert any(s.startswith("The link loses packets: lab-src had to send")
               and f"On lab-src, {shaped_lab.near_link} counted " in s
               and "dropped by its own queue (tc qdisc)" in s for s in said), said
    print("\n" + next(s for s in said if s.startswith("The link loses packets")))
    sound, kinds, _ = _resent(shaped_lab)
    assert sound["sent"] > 10_000 and sound["share"] < LOSSY, sound
    assert "lossy_link" not in kinds, kinds
    print(f"\nsent again: {lossy['share']:.1%} with a short queue, {sound['share']:.2%} without")


def test_a_transfer_over_a_link_that_loses_packets_is_told_so(
        shaped_lab: ShapedLab, make_pool: PoolFactory) -> None:
    """The same lossy link under a real transfer: the source's TCP counters are read as it
    streams, with both hosts' interfaces, and the live verdicts and the final one say the link
    loses packets (the network holds it back: first), the final one where: the source's own
    queue."""
    ds, dst = _random_source(make_pool, "l", 300)
    try:
        shaped_lab.shape("400mbit", burst="16kb", latency="1ms")
        sent = shaped_lab.zmigrate("send", f"lab-src:{ds}@s", f"lab-far:{dst.name}/copy",
                                   "--transport", "tcp", "--json", "--no-history")
    finally:
        shaped_lab.shape("400mbit")
    assert sent.returncode == 0, sent.stderr + sent.stdout
    assert snapshot_guid(f"{dst.name}/copy@s") == snapshot_guid(f"{ds}@s")
    events = sent.events
    done = events[-1]
    readings = [e for e in events if e["event"] == "resent"]
    assert readings, done
    assert {r["host"] for r in readings} == {"lab-src"}, readings
    sent_, again = sum(r["sent"] for r in readings), sum(r["again"] for r in readings)
    assert again >= 3 * LOSSY * sent_, (again, sent_)
    final = [e for e in events if e["event"] == "verdict" and e["final"]][-1]
    # The live verdicts judged after the first reading came.
    live = [e for e in events if e["event"] == "verdict" and not e["final"]
            and e["kind"] != "none" and e["t"] >= readings[0]["t"]]
    for v in (final, *live):
        kinds = [a["kind"] for a in v["advice_items"]]
        assert "lossy_link" in kinds, (v["kind"], kinds)
        if v["kind"] == "network":
            assert kinds[0] == "lossy_link", kinds
    assert all(r["ifaces_read"] == 2 for r in readings), readings
    queued = sum(x["queue"] for r in readings for x in r["lost"] if x["host"] == "lab-src")
    assert queued >= EXPLAINS * again, (queued, again)
    assert any(s.startswith("The link loses packets: lab-src had to send")
               and f"On lab-src, {shaped_lab.near_link} counted " in s
               and "dropped by its own queue (tc qdisc)" in s
               for s in final["advice"]), final["advice"]
    print(f"\n{again / sent_:.1%} sent again; {done['bytes'] / done['seconds'] / 2**20:.1f} "
          f"MiB/s; final verdict {final['kind']}: {final['advice'][0]}")
