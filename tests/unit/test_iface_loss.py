"""An interface's losses toward the peer (readings/iface_loss.py), from captured `ip -s -s link`
and `tc -s qdisc` output, and where the doctor's advice puts a lossy link's losses."""

from __future__ import annotations

import json
from pathlib import Path

from zmigrate.cli.common import event_to_json
from zmigrate.engine import plain_words
from zmigrate.engine.doctor.advice import _lossy
from zmigrate.engine.doctor.results import StageResult
from zmigrate.engine.events import NicLoss, Resent
from zmigrate.engine.findings import Advice, Note, NoteKind
from zmigrate.engine.readings import iface_loss
from zmigrate.engine.readings.iface_loss import EXPLAINS

DATA = Path(__file__).parent.parent / "data" / "wire"


def _reading(name: str) -> iface_loss.Counters | None:
    return iface_loss.parse((DATA / name).read_text())


def test_the_captured_tbf_queue_dropped_and_the_nic_lost_nothing() -> None:
    before, after = _reading("linux-iface-loss-tbf-1.txt"), _reading("linux-iface-loss-tbf-2.txt")
    assert before is not None and after is not None
    assert after.iface == "zmcapa"
    assert {k: after.values[k] for k in ("crc", "frame", "missed", "fifo", "overrun")} == \
        dict.fromkeys(("crc", "frame", "missed", "fifo", "overrun"), 0)
    assert iface_loss.between("lab", before, after) == NicLoss("lab", "zmcapa", 0, 0, 16695)


def test_no_interface_another_one_or_a_counter_reset_say_nothing() -> None:
    after = _reading("linux-iface-loss-tbf-2.txt")
    assert iface_loss.parse("") is None  # a host without ip, or no route
    assert iface_loss.between("lab", None, after) is None
    assert after is not None
    other = iface_loss.Counters("eth1", after.values)
    assert iface_loss.between("lab", other, after) is None
    reset = iface_loss.Counters("zmcapa", {**after.values, iface_loss.QUEUE: 0})
    assert iface_loss.between("lab", after, reset) is None


def test_freebsd_netstat_is_read_from_its_link_line() -> None:
    """netstat's link line of the interface (not another's, not its address lines): Ierrs as
    bad frames, Idrop as missed, Drop as its queue's; without `-d` (no drops) no reading."""
    before = _reading("freebsd-netstat-di.txt")
    netstat = iface_loss.NETSTAT
    assert before == iface_loss.Counters("wpi0", {"Ierrs": 53068, "Idrop": 0,
                                                  iface_loss.QUEUE: 0}, netstat)
    after = iface_loss.Counters("wpi0", {"Ierrs": 53108, "Idrop": 900, iface_loss.QUEUE: 12},
                                netstat)
    assert iface_loss.between("nas", before, after) == NicLoss("nas", "wpi0", 40, 900, 12,
                                                               netstat)
    no_drops = _reading("freebsd-netstat-I-no-d.txt")
    assert no_drops == iface_loss.Counters("de0", {"Ierrs": 0}, netstat)
    assert iface_loss.between("nas", no_drops, no_drops) is None  # no ring figure read


def test_a_host_that_printed_no_counters_is_not_read_as_losing_nothing() -> None:
    named = iface_loss.parse("@@iface eth0\n")  # the interface, then no tool printed anything
    assert named == iface_loss.Counters("eth0", {})
    assert iface_loss.between("lab", named, named) is None


def test_the_script_asks_netstat_where_the_host_has_no_ip() -> None:
    line = iface_loss.script("192.0.2.7")
    assert 'netstat -I "$IF" -d -n -W' in line
    assert line.index("command -v ip") < line.index("command -v netstat")


def _network(*notes: Note) -> list[StageResult]:
    return [StageResult("network", "network (tcp, mbuffer)", 40.0, 4.0, 160 << 20, True,
                        notes=notes)]


RESENT = {"host": "tank", "sent": 200_000, "again": 20_000, "share": 0.1,
          "system": "Linux 6.8", "ifaces_read": 2}


def _loss(host: str, frames: int = 0, ring: int = 0, queue: int = 0, tool: str = "ip") -> Note:
    return Note(NoteKind.IFACE_LOSS, {"host": host, "iface": "eth0", "frames": frames,
                                      "ring": ring, "queue": queue, "tool": tool})


def test_the_end_that_lost_most_is_where_the_link_loses_and_its_cause_the_cure() -> None:
    advice = _lossy(_network(Note(NoteKind.RESENT, RESENT), _loss("tank", frames=30),
                             _loss("nas", ring=9_000, frames=40)))
    assert advice is not None
    said = plain_words.advice(advice)
    assert "On nas, eth0 counted 9,000 frames missed with its receive ring full, 40 frames " \
        "received bad (CRC or framing): raise its receive ring (ethtool -G eth0 rx MAX" in said
    bad = _lossy(_network(Note(NoteKind.RESENT, RESENT), _loss("nas", frames=5_000)))
    assert bad is not None and "check its cable, the switch port" in plain_words.advice(bad)


def test_a_freebsd_end_is_told_the_cure_its_host_takes() -> None:
    """An end read by netstat (FreeBSD) is told its loader tunables, not ethtool or tc; a
    report from before the tool was said is worded as Linux's, as it was."""
    ring = _lossy(_network(Note(NoteKind.RESENT, RESENT),
                           _loss("core", ring=9_000, tool=iface_loss.NETSTAT)))
    assert ring is not None
    said = plain_words.advice(ring)
    assert "On core, eth0 counted 9,000 frames missed" in said
    assert "iflib.override_nrxds" in said and "ethtool" not in said
    queue = _lossy(_network(Note(NoteKind.RESENT, RESENT),
                            _loss("core", queue=9_000, tool=iface_loss.NETSTAT)))
    assert queue is not None and "net.link.ifqmaxlen" in plain_words.advice(queue)
    old = dict(ring.figures)
    del old["tool"]
    assert "ethtool -G eth0" in plain_words.advice(Advice(ring.kind, old))


def test_losses_too_few_to_explain_it_put_the_loss_between_the_hosts() -> None:
    few = int(EXPLAINS * 20_000) - 1  # RESENT's segments sent again
    advice = _lossy(_network(Note(NoteKind.RESENT, RESENT), _loss("nas", frames=few)))
    assert advice is not None
    assert "so the loss is between them: a switch port" in plain_words.advice(advice)


def test_ends_not_read_leave_the_counters_to_the_user() -> None:
    one = {**RESENT, "ifaces_read": 1}
    advice = _lossy(_network(Note(NoteKind.RESENT, one)))
    assert advice is not None and "(ip -s link on tank)" in plain_words.advice(advice)
    older = {k: v for k, v in RESENT.items() if k != "ifaces_read"}  # a report from before
    advice = _lossy(_network(Note(NoteKind.RESENT, older)))
    assert advice is not None and "(ip -s link on tank)" in plain_words.advice(advice)


def test_the_stage_note_says_each_cause_largest_first() -> None:
    note = _loss("nas", frames=12, ring=0, queue=3_400)
    assert plain_words.note(note) == ("On nas, eth0 counted 3,400 packets dropped by its own "
                                      "queue (tc qdisc), 12 frames received bad (CRC or framing)")


def test_a_resent_event_says_its_losses_as_json_reads_them_back() -> None:
    """`--json` and a replay from the record compare equal: `lost` is a list of objects."""
    event = Resent(3.0, "tank", "Linux", 1000, 20, 5.0, ifaces_read=2,
                   lost=(NicLoss("nas", "eth0", 0, 12, 0),))
    out = event_to_json(event)
    assert out is not None and out["lost"] == [{"host": "nas", "iface": "eth0", "frames": 0,
                                                "ring": 12, "queue": 0, "tool": "ip"}]
    assert json.loads(json.dumps(out)) == out
