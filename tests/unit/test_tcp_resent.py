"""TCP's counters of segments sent and sent again, as each system prints them (tests/data/tcp,
its README says where each capture comes from), and the share sent again between two readings."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from every_kind import NETWORK_TITLE, SOURCE_TITLE, report, stage
from lab.util import wait_until

from zmigrate.engine import plain_words
from zmigrate.engine.events import Resent, StageResult
from zmigrate.engine.findings import AdviceKind, Note, NoteKind
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.job.step.end_cpu import SETTLE, SOON
from zmigrate.engine.job.step.readings import StepReadings
from zmigrate.engine.job.step.resent_watch import ResentWatch
from zmigrate.engine.readings.tcp_resent import (
    LOSSY,
    SCRIPT,
    Counters,
    Segments,
    between,
    parse,
)
from zmigrate.engine.transports import Transport, carrier

DATA = Path(__file__).resolve().parents[1] / "data" / "tcp"


@pytest.mark.parametrize(("name", "counters"), [
    # Linux: OutSegs leaves out what went again, RetransSegs counts it.
    ("linux-6.18-proc-net-snmp.txt", Counters(168674731 + 167749, 167749)),
    ("freebsd-13-netstat-s-p-tcp.txt", Counters(0, 0)),
    # "packets sent" counts the data packets sent again too.
    ("darwin-netstat-s-tcp.txt", Counters(226578, 40440)),
    ("solaris-netstat-s-P-tcp.txt", Counters(21843389688 + 41967918, 41967918)),
])
def test_each_systems_counters(name: str, counters: Counters) -> None:
    assert parse((DATA / name).read_text()) == counters


def test_what_is_neither_form_reads_as_nothing() -> None:
    assert parse("") is None
    assert parse("Tcp: RtoAlgorithm OutSegs\nTcp: 1 x\n") is None
    assert parse("netstat: illegal option -- P\n") is None


def test_the_script_reads_this_machine() -> None:
    """The script as a host runs it, here (Linux): two readings, the later not below the
    earlier."""
    first = parse(subprocess.run(["sh", "-c", SCRIPT], capture_output=True, text=True,
                                 check=True).stdout)
    second = parse(subprocess.run(["sh", "-c", SCRIPT], capture_output=True, text=True,
                                  check=True).stdout)
    assert first is not None and second is not None
    resent = between(first, second)
    assert resent is not None and resent.sent >= 0


def test_the_share_sent_again_between_two_readings() -> None:
    resent = between(Counters(1000, 10), Counters(21000, 410))
    assert resent == Segments(20000, 400) and resent.share == pytest.approx(0.02)
    assert between(Counters(5, 0), Counters(5, 0)) == Segments(0, 0)
    assert Segments(0, 0).share == 0.0
    # A host that restarted between the readings, or one reading missing: nothing said.
    assert between(Counters(1000, 10), Counters(50, 0)) is None
    assert between(None, Counters(50, 0)) is None and between(Counters(1, 0), None) is None


def _network(mib: float, share: float) -> StageResult:
    return stage("network", NETWORK_TITLE, mib, True, notes=(Note(NoteKind.RESENT, {
        "host": "tank.lan", "sent": 100_000, "again": round(share * 100_000), "share": share,
        "system": "Linux"}),))


def test_a_link_that_loses_packets_is_named_first_where_it_is_the_slowest() -> None:
    source = stage("source_read", SOURCE_TITLE, 400, True)
    lossy = report([source, _network(40, LOSSY * 3)]).advice
    assert lossy[0].kind is AdviceKind.LOSSY_LINK, lossy
    assert lossy[0].figures == {"host": "tank.lan", "share": LOSSY * 3, "system": "Linux",
                                "ifaces_read": 0}
    assert "ip -s link on tank.lan" in plain_words.advice(lossy[0])
    sound = report([source, _network(40, LOSSY / 2)]).advice
    assert AdviceKind.LOSSY_LINK not in {a.kind for a in sound}, sound
    # Not the slowest stage (the source reads slower): still named, after the slowest's own.
    behind = report([stage("source_read", SOURCE_TITLE, 30, True),
                     _network(900, LOSSY * 2)]).advice
    kinds = [a.kind for a in behind]
    assert AdviceKind.LOSSY_LINK in kinds and kinds[0] is AdviceKind.SOURCE_POOL, kinds


def test_the_watch_reads_the_sending_host_then_nothing_once_the_step_ended() -> None:
    """This machine as the sending host (LocalHost runs the script here): a reading SETTLE
    seconds in, the next SOON after says what was sent between (loopback traffic made
    meanwhile); once closed, a tick reads nothing and nothing more is said."""
    said: list[object] = []
    t0 = time.monotonic()
    watch = ResentWatch(said.append, t0)
    host = LocalHost("tank.lan")
    try:
        _read_then_close(watch, host, said, t0)
    finally:
        host.close()


def _read_then_close(watch: ResentWatch, host: LocalHost, said: list[object],
                     t0: float) -> None:
    watch.follow(host)
    watch.tick(t0)  # the step's start: nothing read yet
    watch.tick(t0 + SETTLE)
    assert wait_until(lambda: watch._last is not None, 10)
    with socket.create_server(("127.0.0.1", 0)) as server, \
            socket.create_connection(server.getsockname()) as client, \
            server.accept()[0] as peer:
        sender = threading.Thread(target=client.sendall, args=(b"x" * (4 << 20),))
        sender.start()
        got = 0
        while got < 4 << 20:
            got += len(peer.recv(1 << 20))
        sender.join()
    watch.tick(t0 + SETTLE + SOON)
    assert wait_until(lambda: bool(said), 10)
    (reading,) = said
    assert isinstance(reading, Resent)
    assert (reading.host, reading.system) == ("tank.lan", "Linux")
    assert reading.sent > 0 and 0 <= reading.again <= reading.sent and reading.seconds > 0
    with StepReadings(carrier(Transport.TCP), said.append, t0) as readings:
        readings.follow(host, host.spawn("true"), None, host, None)
    readings.tick(t0 + 60, flowing=True)  # closed: reads nothing
    watch.close()
    watch.tick(t0 + 3600)
    time.sleep(0.5)
    assert said == [reading]
