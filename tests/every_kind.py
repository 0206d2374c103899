"""Verdicts and doctor reports of every kind, made by the real engine.

Sample traces (shaped like the field notes' figures) are replayed through diagnosis.Diagnoser,
as a job's events would be, and judged as it judges them; doctor stage results (as the stages
would report them) go through the doctor's own report, whose advice comes from advise(). Between
them every Bottleneck, FindingKind, AdviceKind and NoteKind appears: tests/unit/test_words.py
and tests/gui/test_words_faces.py word each case in the CLI's and the wizard's terms.
"""

from __future__ import annotations

from collections.abc import Callable

from wire_samples import bad_cable, half_duplex_scaled, shaped

from zmigrate.engine.doctor import Doctor, DoctorReport, HostCpu, ProcessCpu, StageResult
from zmigrate.engine.doctor.stages import report as doctor_report
from zmigrate.engine.events import EndCpu, PlanReady, Sample, Side, Stalled
from zmigrate.engine.findings import Figure, Note, NoteKind
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.plan import Options, Plan
from zmigrate.engine.readings.mbuffer import Status
from zmigrate.engine.transports import Transport, carrier
from zmigrate.engine.units import GiB, MiB
from zmigrate.engine.verdict.diagnosis import Diagnoser, Verdict, diagnose
from zmigrate.engine.verdict.stall import SideView, StallWatch, StallWhere
from zmigrate.engine.wire import Wire

HZ = 2.0  # mbuffer's status lines per second
Curve = Callable[[int], float] | float


def trace(side: Side, seconds: float, in_rate: Curve, out_rate: Curve, fill: Curve,
          t0: float = 0.0) -> list[Sample]:
    """One side's samples at 2 Hz; rates in MiB/s, the total follows the out rate."""
    def fn(v: Curve) -> Callable[[int], float]:
        return v if callable(v) else (lambda _i: float(v))

    fin, fout, ffill = fn(in_rate), fn(out_rate), fn(fill)
    out: list[Sample] = []
    total = 0.0
    for i in range(int(seconds * HZ)):
        total += fout(i) * MiB / HZ
        out.append(Sample(t0 + i / HZ, side, fin(i) * MiB, fout(i) * MiB, round(total), ffill(i)))
    return out


def both(send: list[Sample], recv: list[Sample]) -> list[Sample]:
    return sorted(send + recv, key=lambda s: s.t)


def mirror(send: list[Sample]) -> list[Sample]:
    """The local transport: one mbuffer reports for both sides."""
    return both(send, [Sample(s.t, Side.RECEIVE, s.in_rate, s.out_rate, s.total, s.fill)
                       for s in send])


def plan(transport: Transport | None, *, rate_limit: int | None = None,
         receive_buffer: int = 512 * MiB, stall_timeout: float | None = None,
         compress: str = "") -> Plan:
    return Plan("src", "dst", "tank/data@s", "backup/data", "full", None,
                transport or Transport.TCP,
                Options(rate_limit=rate_limit, stall_timeout=stall_timeout), (), 24680,
                receive_buffer, receive_buffer, None, False, compress=compress)


def replay(samples: list[Sample], transport: Transport | None = Transport.TCP, *,
           rate_limit: int | None = None, receive_buffer: int = 512 * MiB,
           compress: str = "", wire: Wire | None = None,
           ends: tuple[EndCpu, ...] = ()) -> Verdict:
    """The job's events through the real Diagnoser: its plan (unless the transport is not
    known), the wire its preflight read (if given), what the way's ends got of the CPU (if
    given), then the samples; its final verdict."""
    emitted: list[object] = []
    diagnoser = Diagnoser(emitted.append)
    if transport is not None:
        diagnoser(PlanReady(plan(transport, rate_limit=rate_limit,
                                 receive_buffer=receive_buffer, compress=compress)))
    if wire is not None:
        diagnoser(wire)
    for e in ends:
        diagnoser(e)
    for s in samples:
        diagnoser(s)
    verdict = diagnoser.finish()
    assert emitted[-1] is verdict
    return verdict


def swinging() -> list[Sample]:
    """The receiver's buffer swings between full and empty: zfs receive takes bursts."""
    fills = [100, 100, 95, 60, 20, 0, 0, 0, 30, 80]
    recv = trace(Side.RECEIVE, 30, 110, lambda i: 0 if fills[i % 10] >= 95 else 240,
                 lambda i: fills[i % 10])
    return both(trace(Side.SEND, 30, 110, 60, lambda i: 50 + 5 * (i % 10)), recv)


def starved() -> list[Sample]:
    """The field notes' receiver: `in @ 113 MB/s, out @ 225 MB/s`, empty again and again, its
    input pausing between bursts."""
    recv = trace(Side.RECEIVE, 30, lambda i: 0 if i % 4 == 3 else 113,
                 lambda i: 225 if i % 2 else 0, lambda i: 0 if i % 2 else 1)
    return both(trace(Side.SEND, 30, 113, 113, lambda i: 40 + 60 * (i % 3) / 2), recv)


def network(mib: float = 40) -> list[Sample]:
    """The sender's buffer full, the receiver's empty: the path between them is the limit."""
    return both(trace(Side.SEND, 20, mib, mib, lambda i: 97 + i % 3),
                trace(Side.RECEIVE, 20, mib, mib, lambda i: i % 2))


def stalled(send_fill: float, recv_fill: float, transport: Transport = Transport.TCP, *,
            silent: str = "", looked: dict[str, Figure] | None = None,
            timeout: float | None = None, cleared: bool = False) -> Verdict:
    """A stream whose mbuffers stop moving (rates 0, as the captured stall lines show) for 31 s,
    through the real StallWatch and Diagnoser; `silent` names a side ("send", "receive", "both")
    that prints nothing meanwhile, `looked` what a look at the named host found."""
    p = plan(transport, stall_timeout=timeout)
    way = carrier(transport)
    watch = StallWatch(0.0, 30.0, single=not way.two_ends, path=way.stall_path(p, "src", "dst"))
    emitted: list[object] = []
    diagnoser = Diagnoser(emitted.append)
    diagnoser(PlanReady(p))

    def view(host: str, side: str, fill: float, lines: int, age: float) -> SideView:
        quiet = silent in (side, "both")
        return SideView(host, Status(0.0, 0.0, 4 * MiB, fill), 1 if quiet else lines,
                        31.0 if quiet else age)

    stall = None
    for i in range(1, 63):
        stall = watch.check(i / 2, view("src", "send", send_fill, i, 0.5),
                            view("dst", "receive", recv_fill, i, 0.5)) or stall
    assert stall is not None
    if looked is not None:
        side = stall.figures.get("side")
        stall = watch.refine(looked, (StallWhere.SOURCE if side == "send" else
                                      StallWhere.DESTINATION) if looked.get("state") else None)
        assert stall is not None
    diagnoser(Stalled(31.0, stall.where.value, stall.host, stall.seconds, dict(stall.figures)))
    if cleared:
        moving = SideView("dst", Status(MiB, MiB, 5 * MiB, 0.0), 100, 0.5)
        end = watch.check(80.0, moving, moving)
        assert end is not None and end.cleared
        diagnoser(Stalled(80.0, end.where.value, end.host, end.seconds, dict(end.figures),
                          cleared=True))
    verdict = emitted[-1]
    assert isinstance(verdict, Verdict)
    return verdict


def verdicts() -> dict[str, Verdict]:
    """One verdict per case, named."""
    source = both(trace(Side.SEND, 30, 180, 180, lambda i: i % 3),
                  trace(Side.RECEIVE, 30, 180, 180, lambda i: i % 2))
    return {
        "not enough data yet": diagnose(trace(Side.SEND, 1, 100, 100, 100)),
        "too short": replay(both(trace(Side.SEND, 1, 100, 100, 100),
                                 trace(Side.RECEIVE, 1, 100, 100, 0))),
        "rate limited": replay(both(trace(Side.SEND, 30, 20, 20, 0),
                                    trace(Side.RECEIVE, 30, 20, 20, 0)), rate_limit=20 * MiB),
        "receive swings": replay(swinging()),
        "receive swings, big buffer": replay(swinging(), receive_buffer=2 * GiB),
        "receive full": replay(both(trace(Side.SEND, 30, 60, 60, 100),
                                    trace(Side.RECEIVE, 30, 60, 60, lambda i: 96 + i % 4))),
        "local, buffer empty": replay(mirror(trace(Side.SEND, 20, 50, 50, 0)), Transport.LOCAL),
        "local, buffer part full": replay(mirror(trace(Side.SEND, 20, 50, 50, 50)),
                                          Transport.LOCAL),
        "receive starved": replay(starved()),
        "receive filling": replay(both(
            trace(Side.SEND, 8, 400, 112, lambda i: 15 + 2 * i if i < 8 else 30 - i),
            trace(Side.RECEIVE, 8, 112, lambda i: 99 if i % 2 else 0, lambda i: 7 + 2.3 * i))),
        "receive draining": replay(trace(Side.RECEIVE, 10, 0, lambda i: 90 if i % 2 else 0,
                                         lambda i: 44 - 2 * i)),
        "network over tcp": replay(network(), Transport.TCP),
        # 45 MiB/s over the captured veth's tbf 400 Mbit/s (48.2 MB/s of payload): 98 %.
        "network at the wire": replay(network(45), Transport.TCP, wire=shaped()),
        "network over ssh": replay(network(), Transport.SSH),
        "network over private": replay(network(), Transport.PRIVATE),
        # The receiving TLS end on a core of its own nearly all the time: its core is the pace.
        "private end on its core": replay(network(), Transport.PRIVATE, ends=(
            EndCpu(9.0, Side.RECEIVE, "dst", "socat", 0.95, 0.02, 5.0),
            EndCpu(14.0, Side.RECEIVE, "dst", "socat", 0.97, 0.01, 5.0),
            EndCpu(14.0, Side.SEND, "src", "socat", 0.41, 0.03, 5.0))),
        # The source's ssh under a CPU quota (lab-near: 6 % of a core): it mostly waits.
        "ssh end waiting for a cpu": replay(network(6), Transport.SSH, ends=(
            EndCpu(9.0, Side.SEND, "src", "ssh", 0.06, 0.91, 5.0),)),
        "network through the relay": replay(network(), Transport.RELAY),
        "network, transport unknown": replay(network(), None),
        "network, sender only": replay(trace(Side.SEND, 30, 100, 100, 100)),
        "source": replay(source),
        # Compressing: the sender's mbuffer (after zstd) gets compressed bytes slowly.
        "compressor": replay(both(trace(Side.SEND, 30, 60, 60, lambda i: i % 3),
                                  trace(Side.RECEIVE, 30, 110, 110, lambda i: i % 2)),
                             compress="zstd"),
        "receiver waits": replay(trace(Side.RECEIVE, 30, 60, 60, 0)),
        "balanced": replay(both(trace(Side.SEND, 30, 80, 80, 50),
                                trace(Side.RECEIVE, 30, 80, 80, 40))),
        "stalled on a tcp port": stalled(98, 0),
        "stalled in the source's ssh": stalled(98, 0, Transport.SSH, timeout=120),
        "stalled in the relay": stalled(98, 0, Transport.RELAY),
        "stalled at zfs receive": stalled(98, 25, looked={"answers": 1, "state": "disk",
                                                           "pool_health": "SUSPENDED"}),
        "stalled, receiver stopped": stalled(98, 25, silent="receive",
                                             looked={"answers": 1, "state": "stopped"}),
        "stalled, receiver silent": stalled(98, 0, silent="receive", looked={"answers": 0}),
        "stalled, sender silent": stalled(98, 0, silent="send"),
        "stalled, both silent": stalled(98, 0, silent="both"),
        "stalled at zfs send": stalled(0, 0, timeout=20),
        "stalled locally": stalled(50, 50, Transport.LOCAL),
        "stall cleared": stalled(98, 0, cleared=True),
    }


# -- the doctor ---------------------------------------------------------------------------------
def _cpu(host: str, process: str, cpu: float) -> tuple[HostCpu, ...]:
    return (HostCpu(host, min(100.0, cpu / 4), 4, (ProcessCpu(host, 4242, process, cpu),)),)


def stage(name: str, title: str, mib: float | None, in_path: bool, *,
          cpu: tuple[HostCpu, ...] = (), notes: tuple[Note, ...] = (),
          skipped: bool = False, **details: object) -> StageResult:
    rate = None if mib is None else mib * MiB
    return StageResult(name, title, rate, 0.0 if rate is None else 10.0,
                       0 if rate is None else int(rate * 10), in_path, cpu, notes,
                       skipped=skipped, details=dict(details))


SOURCE_TITLE = "source read (zfs send)"
NETWORK_TITLE = "network (tcp, mbuffer)"
WRITE_TITLE = "destination write (temp dataset)"
FAST = "aes128-gcm@openssh.com"


def report(stages: list[StageResult], transport: Transport = Transport.TCP,
           wire: Wire | None = None) -> DoctorReport:
    """The doctor's own report on these stages (the slowest on the path, advise()'s advice)
    and the wire as both hosts read it (wire_samples.py: real captures)."""
    doctor = Doctor(LocalHost("tank.lan"), LocalHost("backup-01"),
                    options=Options(transport=transport))
    doctor.wire = wire
    return doctor_report(doctor, stages)


def reports() -> dict[str, DoctorReport]:
    """One doctor report per case, named."""
    return {
        "slow source disks, cpu-bound send": report([
            stage("source_read", SOURCE_TITLE, 95, True, cpu=_cpu("tank.lan", "zfs", 99.0),
                  notes=(Note(NoteKind.RAN_TO_END, {"bytes": 3 * MiB}), Note(NoteKind.FROM_CACHE)),
                  snapshot="tank/data@s"),
            stage("network", NETWORK_TITLE, 940, True),
            stage("ssh_default", "ssh, default cipher", 113, False,
                  cpu=_cpu("tank.lan", "ssh", 99.0), cipher=None),
            stage(f"ssh_{FAST}", f"ssh, {FAST}", 214, False, cipher=FAST),
        ]),
        "slow network": report([
            stage("source_read", SOURCE_TITLE, None, True, skipped=True,
                  notes=(Note(NoteKind.NEEDS_SNAPSHOT),)),
            stage("network", NETWORK_TITLE, 105, True,
                  notes=(Note(NoteKind.RESENT, {"host": "tank.lan", "sent": 81234,
                                                "again": 3120, "share": 3120 / 81234,
                                                "system": "FreeBSD 14.1-RELEASE",
                                                "ifaces_read": 1}),
                         Note(NoteKind.IFACE_LOSS, {"host": "backup-01", "iface": "eth0",
                                                    "frames": 2890, "ring": 0, "queue": 0}))),
            stage("ssh", "ssh from source to destination", None, False, skipped=True,
                  notes=(Note(NoteKind.SSH_UNREACHABLE,
                              {"reason": "Permission denied (publickey)."}),)),
            stage("destination_write", WRITE_TITLE, None, True, skipped=True,
                  notes=(Note(NoteKind.NO_ROOM, {"free": 200 * MiB, "parent": "backup",
                                                 "share": 0.1, "minimum": 32 * MiB}),)),
        ]),
        "nothing read, nothing written": report([
            stage("source_read", SOURCE_TITLE, None, True, skipped=True,
                  notes=(Note(NoteKind.LEFT_OUT),)),
            stage("network", NETWORK_TITLE, 105, True),
            stage("destination_write", WRITE_TITLE, None, True, skipped=True,
                  notes=(Note(NoteKind.NO_POOL),)),
        ]),
        "ssh is the path and slow": report([
            stage("source_read", SOURCE_TITLE, 400, True),
            stage("network", NETWORK_TITLE, 940, False),
            stage("ssh_default", "ssh, default cipher", 113, True, cipher=None),
            stage(f"ssh_{FAST}", f"ssh, {FAST}", 214, False, cipher=FAST,
                  cpu=_cpu("tank.lan", "ssh", 97.0)),
        ], Transport.SSH),
        "compression pays on a slow link": report([
            stage("source_read", SOURCE_TITLE, 400, True),
            stage("compress", "compression (zstd, on the source)", 180, False,
                  notes=(Note(NoteKind.COMPRESS_SAMPLE, {"tool": "zstd", "ratio": 1.9,
                                                         "sample": 256 * MiB}),),
                  tool="zstd", ratio=1.9, compressed=135 * MiB),
            stage("network", NETWORK_TITLE, 47, True),
        ]),
        "compression costs on a fast link": report([
            stage("source_read", SOURCE_TITLE, 400, True),
            stage("compress", "compression (zstd, on the source)", 180, False,
                  tool="zstd", ratio=1.3, compressed=197 * MiB),
            stage("network", NETWORK_TITLE, 940, True),
        ]),
        "no compressor on the source": report([
            stage("source_read", SOURCE_TITLE, 400, True),
            stage("compress", "compression (zstd, on the source)", None, False, skipped=True,
                  notes=(Note(NoteKind.NO_COMPRESSOR, {"tool": "zstd"}),)),
            stage("network", NETWORK_TITLE, 940, True),
        ]),
        "a bad cable, MTUs that differ, small rings": report([
            stage("source_read", SOURCE_TITLE, 400, True),
            stage("network", NETWORK_TITLE, 6, True),
        ], wire=bad_cable()),
        "half duplex, a CPU clocked down": report([
            stage("source_read", SOURCE_TITLE, 400, True),
            stage("network", NETWORK_TITLE, 5, True),
        ], wire=half_duplex_scaled()),
        "the network fills the shaped wire": report([
            stage("source_read", SOURCE_TITLE, 400, True),
            stage("network", NETWORK_TITLE, 45, True),
        ], wire=shaped()),
        "slow destination, its dataset left": report([
            stage("source_read", SOURCE_TITLE, 400, True),
            stage("network", NETWORK_TITLE, 940, True),
            stage("destination_write", WRITE_TITLE, 135, True,
                  notes=(Note(NoteKind.WRITE_SYNC, {"seconds": 1.4}),
                         Note(NoteKind.WRITE_LIMIT, {"limit": 4 * 1024 * MiB})),
                  dataset="backup/zmigrate-doctor-5e1f09aa", host="backup-01",
                  cleanup_error="could not destroy backup/zmigrate-doctor-5e1f09aa on backup-01",
                  leftovers=[{"dataset": "backup/zmigrate-doctor-0badcafe", "host": "backup-01",
                              "created": 1764000000, "used": 3 * 1024 * MiB}]),
        ]),
    }
