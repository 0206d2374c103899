"""Unit tests for engine.verdict.diagnosis: verdicts on traces shaped like the field notes' figures.

A verdict is data; what it says is checked here in the CLI's words (cli/words.py), which name
its flags. tests/gui/test_words_faces.py checks the wizard's words for every kind.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from every_kind import HZ, both, trace
from hypothesis import given
from hypothesis import strategies as st

from zmigrate.cli import words
from zmigrate.engine.events import NicLoss, PlanReady, Resent, Sample, Side
from zmigrate.engine.findings import Advice, AdviceKind, FindingKind
from zmigrate.engine.plan import Options, Plan
from zmigrate.engine.transports import Transport
from zmigrate.engine.units import MiB
from zmigrate.engine.verdict.diagnosis import (
    HISTORY_MAX,
    Bottleneck,
    Diagnoser,
    Verdict,
    buffer_advice,
    diagnose,
)


def advice_text(v: Verdict) -> str:
    return "\n".join(words.advice(a) for a in v.advice)


def text(v: Verdict) -> str:
    return words.finding(v.finding)


def kinds(v: Verdict) -> list[AdviceKind]:
    return [a.kind for a in v.advice]


# -- the field notes' cases ---------------------------------------------------------------------
def seed_bursty_receive(seconds: float = 30.0) -> list[Sample]:
    """Receiver `in @ 113 MB/s, out @ 225 MB/s, buffer 1% full`, running empty again and again
    (240x in 10 min); the sender keeps a backlog, and the stream into the receiver pauses
    between bursts (an input that never paused would make the network the limit)."""
    recv = trace(Side.RECEIVE, seconds, lambda i: 0 if i % 4 == 3 else 113,
                 lambda i: 225 if i % 2 else 0, lambda i: 0 if i % 2 else 1)
    send = trace(Side.SEND, seconds, 113, 113, lambda i: 40 + 60 * (i % 3) / 2)
    return both(send, recv)


def test_seed_receiver_starved_in_bursts_is_bursty_receive_with_5s_buffer() -> None:
    v = diagnose(seed_bursty_receive())
    assert v.kind is Bottleneck.BURSTY_RECEIVE
    assert 0.6 <= v.confidence <= 0.9
    # 5 s at 113 MiB/s = 565 MiB, rounded up to a 64 MiB multiple for --buffer.
    assert "565 MiB at 113 MiB/s (--buffer 576M)" in advice_text(v)
    assert v.evidence["receive_empty_count"] >= 20
    assert v.evidence["receive_fill_mean"] <= 1


def test_buffer_advice_matches_the_5s_rule() -> None:
    advice = buffer_advice(115 * MiB)
    assert advice == Advice(AdviceKind.RECEIVE_BUFFER,
                            {"rate": 115 * MiB, "seconds": 5.0, "size": 576 * MiB})
    assert words.advice(advice) == (
        "Give the receiver a buffer of at least 5 s of stream: 575 MiB at 115 MiB/s "
        "(--buffer 576M)")
    assert words.advice(buffer_advice(10 * MiB)).endswith("(--buffer 64M)")
    assert words.advice(buffer_advice(204.8 * MiB)).endswith("(--buffer 1G)")


def test_receive_buffer_swinging_full_and_empty_is_bursty() -> None:
    fills = [100, 100, 95, 60, 20, 0, 0, 0, 30, 80]
    recv = trace(Side.RECEIVE, 30, 110, lambda i: 0 if fills[i % 10] >= 95 else 240,
                 lambda i: fills[i % 10])
    send = trace(Side.SEND, 30, 110, 60, lambda i: 50 + 5 * (i % 10))
    v = diagnose(both(send, recv))
    assert v.kind is Bottleneck.BURSTY_RECEIVE
    assert 0.7 <= v.confidence <= 0.9
    assert v.finding.kind is FindingKind.RECEIVE_SWINGS
    assert v.advice[0].kind is AdviceKind.RECEIVE_BUFFER
    assert "(--buffer" in words.advice(v.advice[0])


def test_seed_netcat_sender_full_is_network_bound() -> None:
    # `in @ 103 MB/s, out @ 103 MB/s, 912 MB total, buffer 100% full` on the sender.
    send = trace(Side.SEND, 30, 103, 103, 100)
    recv = trace(Side.RECEIVE, 30, 103, 103, 0)
    v = diagnose(both(send, recv), transport=Transport.TCP)
    assert v.kind is Bottleneck.NETWORK
    assert 0.85 <= v.confidence <= 1.0
    text = advice_text(v)
    assert "ip link set dev IFACE mtu 9000 on both ends" in text
    assert "ethtool -G IFACE rx 2048 tx 2048" in text
    assert "Check the CPU of the transport processes" in text
    assert "--transport tcp" not in text  # it is already tcp
    assert AdviceKind.USE_TCP not in kinds(v)
    assert v.evidence["send_fill_mean"] == 100
    assert v.evidence["send_rate"] == pytest.approx(103 * MiB, rel=0.01)


def _resent(t: float, sent: int, again: int) -> Resent:
    return Resent(t, "tank.lan", "FreeBSD", sent, again, 5.0)


def test_the_live_verdict_names_the_interface_that_lost_the_packets() -> None:
    """Readings whose interfaces were read: the window's losses summed by host and interface
    name the end that lost them and its cure; both read and none lost puts the loss between
    the hosts; a reading with one end unread counts as one read."""
    send, recv = trace(Side.SEND, 30, 40, 40, 100), trace(Side.RECEIVE, 30, 40, 40, 0)
    ring = NicLoss("nas", "igb0", 0, 400, 0)
    lost = [replace(_resent(t, 100_000, 3_000), ifaces_read=2, lost=(ring,))
            for t in (10.0, 15.0, 20.0, 25.0)]
    v = diagnose(both(send, recv), transport=Transport.TCP, resent=lost)
    said = words.advice(v.advice[0])
    assert "On nas, igb0 counted 1,600 frames missed with its receive ring full: raise its " \
        "receive ring (ethtool -G igb0 rx MAX" in said, said
    none = [replace(r, lost=()) for r in lost]
    said = words.advice(diagnose(both(send, recv), transport=Transport.TCP,
                                 resent=none).advice[0])
    assert "so the loss is between them" in said, said
    one = [*none[:3], replace(none[3], ifaces_read=1)]
    said = words.advice(diagnose(both(send, recv), transport=Transport.TCP,
                                 resent=one).advice[0])
    assert "netstat -i on tank.lan" in said, said


def test_a_link_that_loses_packets_is_named_first_where_the_network_holds_it_back() -> None:
    """The sending host's TCP sent 3% again over the window: the verdict says the link loses
    packets before the network's other cures; 0.5% is TCP finding its pace, nothing said;
    readings older than the window do not count, the final verdict counts them all."""
    send = trace(Side.SEND, 30, 40, 40, 100)
    recv = trace(Side.RECEIVE, 30, 40, 40, 0)
    lossy = [_resent(t, 100_000, 3_000) for t in (10.0, 15.0, 20.0, 25.0)]
    v = diagnose(both(send, recv), transport=Transport.TCP, resent=lossy)
    assert v.kind is Bottleneck.NETWORK and kinds(v)[0] is AdviceKind.LOSSY_LINK, kinds(v)
    assert v.advice[0].figures == {"host": "tank.lan", "share": 0.03, "system": "FreeBSD",
                                   "ifaces_read": 0}
    assert v.evidence["resent_share"] == 3.0
    assert words.advice(v.advice[0]).startswith(
        "The link loses packets: tank.lan had to send 3.0% of its TCP segments again")
    assert "netstat -i on tank.lan" in words.advice(v.advice[0])
    sound = [_resent(t, 100_000, 500) for t in (10.0, 15.0, 20.0, 25.0)]
    v = diagnose(both(send, recv), transport=Transport.TCP, resent=sound)
    assert AdviceKind.LOSSY_LINK not in kinds(v) and "resent_share" not in v.evidence
    # Too few segments to tell (a quiet host): nothing said either way.
    v = diagnose(both(send, recv), transport=Transport.TCP, resent=[_resent(20.0, 900, 90)])
    assert AdviceKind.LOSSY_LINK not in kinds(v)
    # A loss 40 s before the window's end is outside a live verdict's 30 s; the final counts it.
    longer = both(trace(Side.SEND, 60, 40, 40, 100), trace(Side.RECEIVE, 60, 40, 40, 0))
    early = [_resent(15.0, 100_000, 9_000), _resent(55.0, 100_000, 0)]
    assert AdviceKind.LOSSY_LINK not in kinds(diagnose(longer, resent=early))
    assert AdviceKind.LOSSY_LINK in kinds(diagnose(longer, resent=early, final=True))


def test_a_lossy_link_behind_another_stage_is_named_after_its_advice() -> None:
    send = trace(Side.SEND, 30, 20, 20, 0)
    recv = trace(Side.RECEIVE, 30, 20, 20, 0)
    v = diagnose(both(send, recv), resent=[_resent(20.0, 50_000, 2_000)])
    assert v.kind is Bottleneck.SOURCE and kinds(v)[-1] is AdviceKind.LOSSY_LINK, kinds(v)


def test_the_diagnoser_sums_the_readings_for_its_final_verdict() -> None:
    out: list[object] = []
    d = Diagnoser(out.append)
    for s in both(trace(Side.SEND, 60, 40, 40, 100), trace(Side.RECEIVE, 60, 40, 40, 0)):
        d(s)
        if s.side is Side.SEND and s.t in (20.0, 40.0):
            d(_resent(s.t, 60_000, 600 if s.t == 20.0 else 1_200))
    final = d.finish()
    # 1,800 of 120,000: 1.5% over the whole transfer.
    assert final.advice[0].kind is AdviceKind.LOSSY_LINK, kinds(final)
    assert final.advice[0].num("share") == pytest.approx(0.015)


def test_network_bound_over_ssh_advises_tcp_and_a_fast_cipher() -> None:
    # ssh with the default cipher: 32.5 MB/s in the field notes.
    send = trace(Side.SEND, 20, 32.5, 32.5, lambda i: 97 + i % 3)
    recv = trace(Side.RECEIVE, 20, 32.5, 32.5, lambda i: i % 2)
    v = diagnose(both(send, recv), transport=Transport.SSH)
    assert v.kind is Bottleneck.NETWORK
    assert v.finding.kind is FindingKind.SEND_FULL
    assert v.finding.word("transport") == "ssh"
    assert "SSH carries only 32.5 MiB/s" in text(v)
    advice = advice_text(v)
    assert "Use --transport tcp instead of ssh" in advice
    assert "--ssh-option Ciphers=aes128-gcm@openssh.com" in advice
    assert kinds(v)[:2] == [AdviceKind.USE_TCP, AdviceKind.TRY_CIPHER]


def test_network_bound_over_private_points_at_the_tls_ends_cpu() -> None:
    """Over private the ends' CPU is what the way adds to the wire: where it (or a pool
    compressing on the same cores) starves them, the buffers look like a slow network."""
    from zmigrate.gui import words as gui_words
    send = trace(Side.SEND, 20, 60, 60, lambda i: 97 + i % 3)
    recv = trace(Side.RECEIVE, 20, 60, 60, lambda i: i % 2)
    v = diagnose(both(send, recv), transport=Transport.PRIVATE)
    assert v.kind is Bottleneck.NETWORK
    assert kinds(v) == [AdviceKind.JUMBO_FRAMES, AdviceKind.NIC_RINGS, AdviceKind.TLS_CPU,
                        AdviceKind.RUN_DOCTOR]
    advice = advice_text(v)
    assert "the TLS ends (socat or openssl)" in advice and "--transport tcp" in advice
    assert "(ssh, mbuffer)" not in advice
    shown = [gui_words.advice(a) for a in v.advice]
    assert "Direct TCP on the Transport and tuning page spares that CPU" in shown[2], shown


def test_network_bound_relay_names_this_computers_link() -> None:
    send = trace(Side.SEND, 20, 40, 40, lambda i: 97 + i % 3)
    recv = trace(Side.RECEIVE, 20, 40, 40, lambda i: i % 2)
    v = diagnose(both(send, recv), transport=Transport.RELAY)
    assert v.kind is Bottleneck.NETWORK
    assert "this computer's link (the relay) carries only 40 MiB/s" in text(v)
    advice = advice_text(v)
    assert "--transport tcp (or ssh) skips this computer" in advice
    assert "mtu 9000" not in advice
    assert kinds(v) == [AdviceKind.RELAY_PATH, AdviceKind.RELAY_BYPASS, AdviceKind.RELAY_NEARBY]


def test_seed_zfs_send_at_180_is_source_bound() -> None:
    # zfs send to /dev/null ran at about 180 MB/s: both buffers stay near empty.
    send = trace(Side.SEND, 30, lambda i: 175 + 5 * (i % 3), lambda i: 175 + 5 * (i % 3),
                 lambda i: i % 3)
    recv = trace(Side.RECEIVE, 30, lambda i: 175 + 5 * (i % 3), lambda i: 175 + 5 * (i % 3),
                 lambda i: i % 2)
    v = diagnose(both(send, recv))
    assert v.kind is Bottleneck.SOURCE
    assert 0.7 <= v.confidence <= 0.95
    advice = advice_text(v)
    assert "zfs send SNAPSHOT > /dev/null" in advice
    assert "zpool iostat" in advice
    assert v.finding.kind is FindingKind.BOTH_EMPTY
    assert v.finding.num("rate") == pytest.approx(180 * MiB, rel=0.01)
    assert text(v).endswith("at 180 MiB/s")


def test_rate_limited_at_20m() -> None:
    send = trace(Side.SEND, 30, lambda i: 20 * (1 + 0.02 * (i % 3 - 1)), 20, 0)
    recv = trace(Side.RECEIVE, 30, 20, 20, 0)
    v = diagnose(both(send, recv), rate_limit=20 * MiB)
    assert v.kind is Bottleneck.RATE_LIMITED
    assert 0.85 <= v.confidence <= 0.95
    assert v.advice == (Advice(AdviceKind.RAISE_RATE_LIMIT, {"rate_limit": 20 * MiB}),)
    assert advice_text(v) == "Raise or drop --bwlimit (now 20M) to go faster"
    assert text(v) == "The transfer runs at the --bwlimit cap of 20 MiB/s"
    assert v.evidence["rate_limit"] == 20 * MiB
    # The same trace without a limit reads as a slow source.
    assert diagnose(both(send, recv)).kind is Bottleneck.SOURCE
    # A limit far above what flows is not the cap.
    assert diagnose(both(send, recv), rate_limit=100 * MiB).kind is Bottleneck.SOURCE


def test_receiver_full_is_destination_bound() -> None:
    send = trace(Side.SEND, 30, 60, 60, 100)
    recv = trace(Side.RECEIVE, 30, 60, 60, lambda i: 96 + i % 4)
    v = diagnose(both(send, recv))
    assert v.kind is Bottleneck.DESTINATION
    assert 0.8 <= v.confidence <= 1.0
    assert kinds(v) == [AdviceKind.DESTINATION_SLOW, AdviceKind.WRITE_TEST,
                        AdviceKind.DESTINATION_VDEVS]
    assert "zpool iostat -v 1" in advice_text(v)
    assert "--write-test" in advice_text(v)


def test_half_full_buffers_are_balanced() -> None:
    send = trace(Side.SEND, 30, 80, 80, 50)
    recv = trace(Side.RECEIVE, 30, 80, 80, 40)
    v = diagnose(both(send, recv))
    assert v.kind is Bottleneck.NONE
    assert v.finding.kind is FindingKind.BALANCED and v.advice == ()
    assert v.confidence <= 0.4


def test_not_enough_data_yet() -> None:
    v = diagnose(trace(Side.SEND, 1, 100, 100, 100))
    assert v.kind is Bottleneck.NONE
    assert v.finding.kind is FindingKind.NOT_ENOUGH_DATA
    assert text(v) == "Not enough data yet"
    assert v.confidence == 0
    assert diagnose([]).finding.kind is FindingKind.NOT_ENOUGH_DATA


def test_short_traces_are_less_certain() -> None:
    long = diagnose(both(trace(Side.SEND, 30, 103, 103, 100), trace(Side.RECEIVE, 30, 103, 103, 0)))
    short = diagnose(both(trace(Side.SEND, 3, 103, 103, 100), trace(Side.RECEIVE, 3, 103, 103, 0)))
    assert short.kind is long.kind is Bottleneck.NETWORK
    assert short.confidence < long.confidence


def test_a_large_receive_buffer_filling_up_is_the_destination() -> None:
    """The lab's gzip-9 pool: the stream arrives at 110 MiB/s into a buffer far larger than a
    few seconds of it, zfs receive takes about 45: the fill only grows, never reaching HIGH."""
    send = trace(Side.SEND, 8, 400, 112, lambda i: 15 + 2 * i if i < 8 else 30 - i)
    recv = trace(Side.RECEIVE, 8, 112, lambda i: 99 if i % 2 else 0, lambda i: 7 + 2.3 * i)
    v = diagnose(both(send, recv))
    assert v.kind is Bottleneck.DESTINATION
    assert v.finding.kind is FindingKind.RECEIVE_FILLING
    assert v.finding.num("rate") == pytest.approx(49.5 * MiB)


def test_a_backlog_draining_after_the_last_byte_arrived_is_the_destination() -> None:
    recv = trace(Side.RECEIVE, 10, 0, lambda i: 90 if i % 2 else 0, lambda i: 44 - 2 * i)
    assert diagnose(recv).kind is Bottleneck.DESTINATION


def test_a_shaped_link_with_a_big_send_buffer_draining_is_the_network() -> None:
    """The lab's 400 Mbit/s link: zfs send put most of the stream into the send buffer in
    1.5 s; it drains at the link's pace into a receiver that keeps up (steady in, low fill)."""
    send = trace(Side.SEND, 8, lambda i: 500 if i < 3 else 0, 46, lambda i: 60 - 2 * i)
    recv = trace(Side.RECEIVE, 8, 45.5, lambda i: 241 if i % 5 == 4 else 0,
                 lambda i: 0 if i % 5 == 4 else 2 * (i % 5) + 1)
    v = diagnose(both(send, recv), transport=Transport.TCP)
    assert v.kind is Bottleneck.NETWORK


# -- one side only ------------------------------------------------------------------------------
def test_local_transport_one_buffer_for_both_sides() -> None:
    full = trace(Side.SEND, 20, 50, 50, 100)
    mirror = [Sample(s.t, Side.RECEIVE, s.in_rate, s.out_rate, s.total, s.fill) for s in full]
    v = diagnose(both(full, mirror), transport=Transport.LOCAL)
    assert v.kind is Bottleneck.DESTINATION
    assert v.evidence["single_buffer"] == 1
    empty = trace(Side.SEND, 20, 50, 50, 0)
    mirror = [Sample(s.t, Side.RECEIVE, s.in_rate, s.out_rate, s.total, s.fill) for s in empty]
    assert diagnose(both(empty, mirror)).kind is Bottleneck.SOURCE


def test_sender_only_full_is_network_with_less_confidence() -> None:
    v = diagnose(trace(Side.SEND, 30, 100, 100, 100))
    assert v.kind is Bottleneck.NETWORK
    assert 0.3 <= v.confidence <= 0.6
    assert "receive_fill_mean" not in v.evidence


def test_receiver_only() -> None:
    assert diagnose(trace(Side.RECEIVE, 30, 60, 60, 98)).kind is Bottleneck.DESTINATION
    starving = diagnose(trace(Side.RECEIVE, 30, 60, 60, 0))
    assert starving.kind is Bottleneck.NONE
    assert starving.confidence <= 0.3


def test_window_judges_only_recent_samples_unless_final() -> None:
    old = both(trace(Side.SEND, 60, 100, 100, 100), trace(Side.RECEIVE, 60, 100, 100, 0))
    new = both(trace(Side.SEND, 30, 50, 50, 0, t0=60), trace(Side.RECEIVE, 30, 50, 50, 0, t0=60))
    assert diagnose(old + new, window=30).kind is Bottleneck.SOURCE
    whole = diagnose(old + new, final=True)
    assert whole.final
    assert whole.evidence["seconds"] == pytest.approx(89.5)


# -- the observer -------------------------------------------------------------------------------
def _plan(transport: Transport, rate_limit: int | None, buffer: int) -> Plan:
    return Plan("a", "b", "p/d@s", "q/d", "full", None, transport,
                Options(rate_limit=rate_limit), (), None, buffer, buffer, None, False)


def test_diagnoser_emits_every_period_and_a_final_verdict_once() -> None:
    got: list[object] = []
    d = Diagnoser(got.append, rate_limit=None, period=5.0)
    for s in seed_bursty_receive(seconds=60):
        d(s)
    live = [v for v in got if isinstance(v, Verdict)]
    assert 10 <= len(live) <= 12  # one per 5 s of sample time over 60 s
    assert all(not v.final for v in live)
    assert [v.t for v in live] == sorted(v.t for v in live)
    assert live[-1].kind is Bottleneck.BURSTY_RECEIVE
    final = d.finish()
    assert final.final
    assert final.kind is Bottleneck.BURSTY_RECEIVE
    # Empties are counted over the whole transfer, not just the window.
    assert final.evidence["receive_empty_count"] >= 50
    assert got[-1] is final
    assert d.finish() is final
    assert got.count(final) == 1
    d(Sample(100.0, Side.SEND, 1, 1, 1, 1))  # after the end: ignored
    assert got[-1] is final


def test_diagnoser_reads_plan_and_ignores_other_events() -> None:
    got: list[object] = []
    d = Diagnoser(got.append)
    d("something else")
    d(PlanReady(_plan(Transport.SSH, 20 * MiB, 64 * MiB)))
    assert (d.transport, d.rate_limit, d.receive_buffer) == (Transport.SSH, 20 * MiB, 64 * MiB)
    for s in both(trace(Side.SEND, 12, 20, 20, 0), trace(Side.RECEIVE, 12, 20, 20, 0)):
        d(s)
    assert all(isinstance(v, Verdict) for v in got)
    assert d.finish().kind is Bottleneck.RATE_LIMITED


def test_diagnoser_memory_is_bounded() -> None:
    d = Diagnoser(lambda _v: None, period=5.0, window=30.0)
    for s in both(trace(Side.SEND, 6000, 103, 103, 100), trace(Side.RECEIVE, 6000, 103, 103, 0)):
        d(s)
    assert len(d._recent) <= 2 * 30 * HZ + 2
    assert all(len(h) <= HISTORY_MAX for h in d._history.values())
    final = d.finish()
    assert final.kind is Bottleneck.NETWORK
    assert final.evidence["seconds"] > 5000


def test_to_json_is_the_verdict_event_and_reads_back() -> None:
    v = diagnose(seed_bursty_receive())
    data = json.loads(json.dumps(v.to_json()))
    assert data["event"] == "verdict"
    assert data["kind"] == "bursty_receive"
    assert data["finding"]["kind"] == "receive_starved"
    assert data["finding"]["figures"]["empties"] >= 20
    assert [a["kind"] for a in data["advice_items"]] == ["receive_buffer", "receive_txg"]
    assert data["advice_items"][0]["figures"]["size"] == 576 * MiB
    assert "text" not in data and "advice" not in data  # words are the faces'
    assert data["evidence"]["receive_in_rate"] == pytest.approx(0.75 * 113 * MiB, rel=0.01)
    assert data["final"] is False
    assert data["t"] == pytest.approx(29.5)
    assert Verdict.from_json(data) == v
    assert Verdict.from_json({"kind": "network", "text": "an older record"}) is None
    assert Verdict.from_json({"kind": "no such kind", "finding": {"kind": "balanced"}}) is None


def test_the_cli_json_adds_its_words() -> None:
    """`text` and `advice` (strings, for scripts written against them) next to the data."""
    data = words.verdict_json(diagnose(seed_bursty_receive()).to_json())
    assert list(data)[:4] == ["event", "kind", "text", "advice"]
    assert data["text"].startswith("The receiver's buffer ran empty ")
    assert data["advice"][0].endswith("(--buffer 576M)")
    assert [a["kind"] for a in data["advice_items"]] == ["receive_buffer", "receive_txg"]
    old = {"event": "verdict", "kind": "network", "text": "kept as it was"}
    assert words.verdict_json(old) == old


@given(st.lists(st.tuples(st.booleans(), st.floats(0, 1e10), st.floats(0, 1e10),
                          st.integers(0, 2**50), st.floats(0, 100)), max_size=80),
       st.one_of(st.none(), st.integers(1, 2**40)))
def test_diagnose_never_fails_and_confidence_is_a_share(
        rows: list[tuple[bool, float, float, int, float]], limit: int | None) -> None:
    samples = [Sample(i * 0.5, Side.SEND if s else Side.RECEIVE, a, b, n, f)
               for i, (s, a, b, n, f) in enumerate(rows)]
    v = diagnose(samples, rate_limit=limit)
    assert 0.0 <= v.confidence <= 1.0
    assert isinstance(v.kind, Bottleneck)
    assert all(math.isfinite(x) for x in v.evidence.values())
    for sentence in (text(v), *(words.advice(a) for a in v.advice)):
        assert sentence[:1].isupper(), sentence


def test_a_finished_transfer_with_too_few_samples_was_too_short_to_judge() -> None:
    v = diagnose(both(trace(Side.SEND, 1, 100, 100, 100), trace(Side.RECEIVE, 1, 100, 100, 0)),
                 final=True)
    assert v.kind is Bottleneck.NONE and v.final
    assert v.finding.kind is FindingKind.TOO_SHORT
    assert text(v) == "The transfer was too short to judge"


def test_buffer_advice_stays_within_the_receivers_memory() -> None:
    free = 2 * 1024 * MiB
    capped = buffer_advice(500 * MiB, memory=free)
    assert capped.count("size") == 512 * MiB  # a quarter of its free memory, not 2.5 GiB
    assert capped.num("seconds") == pytest.approx(1.0) and capped.count("memory") == free
    text = words.advice(capped)
    assert "--buffer 512M" in text and "as its memory allows" in text and text[0].isupper()
    roomy = buffer_advice(100 * MiB, memory=free)
    assert roomy.count("size") == 512 * MiB and not roomy.has("memory")
