"""Why is this transfer slow? A live verdict from the two mbuffers' fill levels and rates.

The reading follows the field notes (docs in /work/shared/seeds): a buffer that stays full means
the stage *after* it is slower than the stage before it; a buffer that stays empty means the
stage *before* it is the slower one. So:

- sender full, receiver empty          -> the network (or ssh) between them is the limit - or
  the CPU of that way's own end (a TLS end, the source's ssh), where it was read (EndCpu) on a
  CPU or waiting for one most of the time;
- receiver full                        -> zfs receive / the destination pool is the limit;
- both empty, sender reads at the pace -> zfs send / the source pool is the limit;
- receiver swings between full and empty, or runs empty again and again while it drains far
  faster than it is fed and the sender still has a backlog -> zfs receive is bursty (one big
  read per transaction group): give it about 5 s of stream in its buffer;
- the sender's read rate sits at the rate limit -> the limit is the user's own cap;
- compressing in transit, both empty -> the stage before the wire, the compressor (or zfs send
  before it), is the limit: the sender's mbuffer sits after the compressor
  (transports/compress.py), so it counts compressed bytes and runs empty when they come slowly.

Pure engine code: no Qt, no I/O. `diagnose` judges a list of samples; `Diagnoser` is the job
observer that keeps a bounded history and emits a `Verdict` every few seconds of sample time.
A verdict is data (findings.py): its headline and its advice are kinds with figures, which each
face words in its own terms (the CLI names its flags, the GUI its controls).
"""

from __future__ import annotations

import math
import statistics
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .. import transports
from ..events import Bottleneck as Bottleneck
from ..events import (
    Ceiling,
    EndCpu,
    Event,
    Observer,
    PlanReady,
    Resent,
    Sample,
    Side,
    Stalled,
    Wire,
)
from ..events import Verdict as Verdict
from ..findings import Advice, AdviceKind, Finding, FindingKind
from ..plan import MEMORY_SHARE
from ..readings import iface_loss
from ..readings.tcp_resent import loss_advice
from ..transports import CIPHER, Transport
from ..transports.base import WIRE_ADVICE
from ..units import MiB
from ..wire.advise import at_the_wire

# -- thresholds (percent of buffer fill unless said otherwise) ----------------------------------
FULL = 90.0  # a sample at or above this is "full"
EMPTY = 1.0  # below this a buffer is "empty" (mbuffer prints whole percents: 0 % = empty)
HIGH = 70.0  # a mean fill at or above this: the buffer is mostly full, the next stage is slow
LOW = 20.0  # a mean fill at or below this: the buffer is mostly empty, the stage before is slow
RISE = 10.0  # a receive buffer whose fill grows this much over the window is filling up
DRAINING = 0.3  # ... or spends this share of the time draining a backlog after the input ended
SWING_SHARE = 0.10  # bursty when at least this share of samples is full AND this share empty
RATE_TOLERANCE = 0.10  # rate-limited when the sender reads within 10 % of the rate limit
BURST_RATIO = 1.5  # receiver drains in bursts: its peak out-rate >= 1.5x its mean in-rate
MIN_EMPTIES = 3  # "many" times empty within one window (the field notes saw 240 in 10 min)
MIN_SAMPLES = 4  # per side, about 2 s of mbuffer's 2 Hz status
FULL_COVERAGE = 10.0  # seconds of samples after which confidence is no longer scaled down
BUFFER_SECONDS = 5.0  # zfs receive gaps: hold 5 s of stream on the receiver (field notes)
BUFFER_ROUND = 64 * MiB  # round the suggested receive buffer up to a multiple of this
GIGABIT_RATE = 110 * 10**6  # what 1 GbE delivers in practice, bytes/s: a link not measured yet
HISTORY_MAX = 1200  # samples per side kept for the final verdict (decimated beyond that)
STILL = 10.0  # seconds of status lines without a byte moving: no rate verdict on those (a stall)
# An end of the way (a TLS end, the source's ssh) on a CPU or waiting for one this share of the
# time is held by CPU: a link that kept it waiting would leave it asleep most of the time (the
# lab's 400 Mbit/s link: 0.1-0.2). A quota-starved socat read 0.75-0.85, a starved ssh 0.9.
WANTS_CPU = 0.7


@dataclass(frozen=True, slots=True)
class _Stats:
    """One side's figures over the samples judged."""

    n: int
    span: float
    fill_mean: float
    fill_min: float
    fill_max: float
    frac_full: float
    frac_empty: float
    in_mean: float
    in_median: float
    in_peak: float
    out_mean: float
    out_peak: float
    rate: float  # bytes/s actually moved, from the running total
    empties: int  # times the fill dropped to empty from above
    in_low: float  # the in-rate's 10th percentile: near 0 when the input keeps pausing
    rise: float  # fill at the end minus fill at the start (points of percent)
    draining: float  # share of samples with no input but data in the buffer: a backlog drains


def _peak(values: list[float]) -> float:
    """The 90th percentile: a real peak, not one odd status line."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.floor(0.9 * len(ordered)))]


def _stats(samples: Sequence[Sample]) -> _Stats | None:
    if not samples:
        return None
    fills = [s.fill for s in samples]
    ins = [s.in_rate for s in samples]
    outs = [s.out_rate for s in samples]
    span = samples[-1].t - samples[0].t
    moved = samples[-1].total - samples[0].total
    rate = moved / span if span > 0 and moved > 0 else statistics.fmean(outs)
    empties = sum(1 for a, b in zip(samples, samples[1:], strict=False)
                  if a.fill >= EMPTY and b.fill < EMPTY)
    return _Stats(
        n=len(samples), span=span,
        fill_mean=statistics.fmean(fills), fill_min=min(fills), fill_max=max(fills),
        frac_full=sum(f >= FULL for f in fills) / len(fills),
        frac_empty=sum(f < EMPTY for f in fills) / len(fills),
        in_mean=statistics.fmean(ins), in_median=statistics.median(ins), in_peak=_peak(ins),
        out_mean=statistics.fmean(outs), out_peak=_peak(outs),
        rate=rate, empties=empties,
        in_low=sorted(ins)[len(ins) // 10],
        rise=statistics.fmean(fills[-2:]) - statistics.fmean(fills[:2]),
        draining=sum(s.in_rate <= 0 and s.fill >= EMPTY for s in samples) / len(samples),
    )


def suggested_buffer(rate: float, seconds: float = BUFFER_SECONDS) -> int:
    """A receive buffer holding `seconds` of stream at `rate` bytes/s, rounded up to a multiple
    of BUFFER_ROUND (one BUFFER_ROUND at least), e.g. 576 MiB for 5 s at 115 MiB/s."""
    return max(1, math.ceil(rate * seconds / BUFFER_ROUND)) * BUFFER_ROUND


def buffer_advice(rate: float, seconds: float = BUFFER_SECONDS,
                  memory: int | None = None) -> Advice:
    """The 5-second receive buffer rule as advice: hold `seconds` of stream at `rate` bytes/s
    in a receive buffer of `size` bytes (suggested_buffer), e.g. 576 MiB for 115 MiB/s.

    With the receiver's available `memory`, the size stays within the share zmigrate would let
    a buffer take there (plan.MEMORY_SHARE); `seconds` then says what that size holds."""
    size = suggested_buffer(rate, seconds)
    figures: dict[str, float | str] = {"rate": rate, "seconds": seconds, "size": size}
    if memory:
        cap = max(BUFFER_ROUND, int(memory * MEMORY_SHARE) // BUFFER_ROUND * BUFFER_ROUND)
        if size > cap:
            figures.update(size=cap, seconds=round(cap / max(rate, 1.0), 1), memory=memory)
    return Advice(AdviceKind.RECEIVE_BUFFER, figures)


def buffer_suggestion(rate_limit: float | None, memory: Sequence[int]) -> Advice:
    """The receive buffer to suggest before any measurement (buffer_advice): 5 s of stream at
    the rate limit, else at GIGABIT_RATE, within MEMORY_SHARE of the smaller free `memory` of
    the hosts that report it. Figures: `size`, `seconds`, `rate`, `memory` when cut to fit."""
    return buffer_advice(rate_limit or GIGABIT_RATE,
                         memory=min((m for m in memory if m), default=None))


def _network_advice(transport: Transport | None) -> tuple[Advice, ...]:
    if transport is not None:
        return transports.carrier(transport).network_advice()
    # Not known: what ssh would need, and the wire's own advice.
    return (Advice(AdviceKind.USE_TCP_IF_SSH), Advice(AdviceKind.TRY_CIPHER, {"cipher": CIPHER}),
            *(Advice(k) for k in WIRE_ADVICE))


def _source_advice(rate: float) -> tuple[Advice, ...]:
    return (Advice(AdviceKind.SOURCE_READ, {"rate": rate}), Advice(AdviceKind.SOURCE_DISKS),
            Advice(AdviceKind.SOURCE_QUIET))


def _destination_advice(rate: float) -> tuple[Advice, ...]:
    return (Advice(AdviceKind.DESTINATION_SLOW, {"rate": rate}), Advice(AdviceKind.WRITE_TEST),
            Advice(AdviceKind.DESTINATION_VDEVS))


@dataclass(frozen=True, slots=True)
class _Context:
    rate_limit: int | None
    transport: Transport | None
    receive_buffer: int | None
    compress: str = ""  # the compressor in transit ("" none)
    ceiling: Ceiling | None = None  # the path's ceiling, where the hosts' links were read
    ends: tuple[EndCpu, ...] = ()  # what the CPU gave the way's own ends, where they were read


def combined(ends: Sequence[EndCpu]) -> tuple[EndCpu, ...]:
    """One reading per side over the time the readings cover: their shares weighted by their
    seconds, named by the latest (a side's end is one program through a step)."""
    by_side: dict[Side, EndCpu] = {}
    for e in sorted(ends, key=lambda e: e.t):
        was = by_side.get(e.side)
        by_side[e.side] = e if was is None else _merged(was, e)
    return tuple(by_side.values())


def _merged(was: EndCpu, e: EndCpu) -> EndCpu:
    """`e` over its and `was`'s seconds together."""
    secs = was.seconds + e.seconds

    def mean(old: float, new: float) -> float:
        return (old * was.seconds + new * e.seconds) / secs if secs else new

    return replace(e, seconds=secs, on_cpu=mean(was.on_cpu, e.on_cpu),
                   waiting=mean(was.waiting, e.waiting))


def _confidence(base: float, span: float) -> float:
    """Scale a rule's confidence by how much time the samples cover (half weight at none)."""
    coverage = min(1.0, span / FULL_COVERAGE)
    return round(max(0.0, min(1.0, base * (0.5 + 0.5 * coverage))), 3)


def _evidence(send: _Stats | None, recv: _Stats | None, ctx: _Context,
              receive_empties: int | None) -> dict[str, float]:
    ev: dict[str, float] = {}
    for name, st in (("send", send), ("receive", recv)):
        if st is None:
            continue
        ev.update({
            f"{name}_samples": float(st.n),
            f"{name}_fill_mean": round(st.fill_mean, 1),
            f"{name}_fill_min": st.fill_min,
            f"{name}_fill_max": st.fill_max,
            f"{name}_in_rate": round(st.in_mean),
            f"{name}_out_rate": round(st.out_mean),
            f"{name}_out_peak": round(st.out_peak),
            f"{name}_rate": round(st.rate),
        })
    if recv is not None:
        ev["receive_empty_count"] = float(
            receive_empties if receive_empties is not None else recv.empties)
    for e in ctx.ends:
        ev[f"{e.side.value}_end_on_cpu"] = round(100 * e.on_cpu, 1)
        ev[f"{e.side.value}_end_waiting"] = round(100 * e.waiting, 1)
    if ctx.rate_limit:
        ev["rate_limit"] = float(ctx.rate_limit)
    if ctx.receive_buffer:
        ev["receive_buffer"] = float(ctx.receive_buffer)
    spans = [st.span for st in (send, recv) if st is not None]
    ev["seconds"] = round(max(spans), 1) if spans else 0.0
    return ev


def _judge_single(send: _Stats, rate: float
                  ) -> tuple[Bottleneck, Finding, tuple[Advice, ...], float]:
    """One mbuffer on the way (a local copy): its fill alone says whether the source reads
    slower than the rest takes."""
    if send.fill_mean <= LOW:
        return (Bottleneck.SOURCE,
                Finding(FindingKind.BUFFER_EMPTY, {"fill": send.fill_mean, "rate": rate}),
                _source_advice(rate), 0.6 + 0.3 * (LOW - send.fill_mean) / LOW)
    return (Bottleneck.NONE, Finding(FindingKind.BUFFER_BALANCED, {"fill": send.fill_mean}),
            (), 0.3)


def _judge(send: _Stats | None, recv: _Stats | None, single: bool, ctx: _Context,
           empties: int) -> tuple[Bottleneck, Finding, tuple[Advice, ...], float]:
    """The rules, in order; returns (kind, headline, advice, confidence before coverage)."""
    through = (recv or send)
    assert through is not None
    rate = through.rate
    # 1. The user's own cap explains the rate whatever the buffers do.
    if ctx.rate_limit and send is not None and \
            abs(send.in_median - ctx.rate_limit) <= RATE_TOLERANCE * ctx.rate_limit:
        closeness = abs(send.in_median - ctx.rate_limit) / ctx.rate_limit
        return (Bottleneck.RATE_LIMITED,
                Finding(FindingKind.RATE_LIMITED, {"rate_limit": ctx.rate_limit}),
                (Advice(AdviceKind.RAISE_RATE_LIMIT, {"rate_limit": ctx.rate_limit}),),
                0.95 - closeness)
    # 2. The receiving buffer swings between full and empty: zfs receive stops and bursts.
    if recv is not None and recv.frac_full >= SWING_SHARE and recv.frac_empty >= SWING_SHARE:
        peak = max(recv.in_peak, send.out_peak if send else 0.0, rate)
        return (Bottleneck.BURSTY_RECEIVE,
                Finding(FindingKind.RECEIVE_SWINGS,
                        {"full_share": recv.frac_full, "empty_share": recv.frac_empty}),
                _bursty_advice(peak, ctx), 0.85)
    # 3. The receiving buffer stays full: the destination cannot write faster.
    if recv is not None and recv.fill_mean >= HIGH:
        return (Bottleneck.DESTINATION,
                Finding(FindingKind.RECEIVE_FULL, {"fill": recv.fill_mean, "rate": rate}),
                _destination_advice(rate),
                0.6 + 0.35 * (recv.fill_mean - HIGH) / (100 - HIGH))
    # 3b. The receive buffer fills up (or, the stream all sent, is still draining a backlog):
    #     more arrives than the destination takes. A large buffer may never reach HIGH.
    if recv is not None and not single and recv.fill_min > EMPTY and (
            (recv.rise >= RISE and recv.in_mean > 1.1 * recv.out_mean)
            or recv.draining >= DRAINING):
        filling = recv.rise >= RISE
        return (Bottleneck.DESTINATION,
                Finding(FindingKind.RECEIVE_FILLING if filling else FindingKind.RECEIVE_DRAINING,
                        {"fill_min": recv.fill_min, "fill_max": recv.fill_max,
                         "rate": recv.out_mean}),
                _destination_advice(recv.out_mean),
                0.6 + 0.3 * min(1.0, max(recv.rise / 50, recv.draining)))
    if single:
        assert send is not None
        return _judge_single(send, rate)
    # 4. The receiver runs dry again and again, drains far faster than it is fed, and the
    #    sender still has data waiting: zfs receive is starved between bursts.
    sender_backlog = send is None or send.fill_mean > LOW
    # An input that flows steadily into an empty buffer is no burst problem: the receiver
    # keeps up, and whatever feeds it is the limit (rule 5).
    input_pauses = recv is not None and recv.in_low < 0.3 * recv.in_mean
    if recv is not None and empties >= MIN_EMPTIES and sender_backlog and input_pauses \
            and recv.out_peak >= BURST_RATIO * max(recv.in_mean, 1.0):
        peak = max(recv.in_peak, send.out_peak if send else 0.0)
        return (Bottleneck.BURSTY_RECEIVE,
                Finding(FindingKind.RECEIVE_STARVED, {"empties": empties,
                                                      "out_peak": recv.out_peak,
                                                      "in_rate": recv.in_mean}),
                _bursty_advice(peak, ctx), 0.75)
    # 4b. At the wire's ceiling (both hosts' links read) the wire sets the pace whatever the
    #     buffers show: a source or a receiver that keeps up with a full wire holds nothing back.
    #     Compressed, the wire carries the sender's bytes (compressed), not the stream's.
    wire_rate = (send.rate if send is not None else 0.0) if ctx.compress else rate
    if (wire := at_the_wire(wire_rate, ctx.ceiling)) is not None:
        figures = {**wire.figures, "compressed": ctx.compress} if ctx.compress else wire.figures
        return Bottleneck.NETWORK, Finding(FindingKind.AT_THE_WIRE, figures), (), 0.8
    # 5. The sender holds a backlog while the receiver is near empty: the path between them is
    #    the limit (a large send buffer may hold the backlog without ever being full).
    if send is not None and send.fill_mean > LOW and (recv is None or recv.fill_mean <= LOW):
        return _network(send, recv, rate, ctx)
    # 6. Both ends near empty: the sender's read is the pace (or its compressor's, if any).
    if (squeezed := _compressor(send, recv, ctx.compress)) is not None:
        return squeezed
    if send is not None and send.fill_mean <= LOW and (recv is None or recv.fill_mean <= LOW):
        base = 0.55 + 0.35 * (LOW - send.fill_mean) / LOW
        both: dict[str, float | str] = {"send_fill": send.fill_mean, "rate": send.in_mean}
        if recv is not None:
            both["receive_fill"] = recv.fill_mean
        return (Bottleneck.SOURCE, Finding(FindingKind.BOTH_EMPTY, both),
                _source_advice(send.in_mean), base if recv else base * 0.7)
    if send is None and recv is not None and recv.fill_mean <= LOW:
        return (Bottleneck.NONE, Finding(FindingKind.RECEIVER_WAITS), (), 0.2)
    return (Bottleneck.NONE, Finding(FindingKind.BALANCED), (), 0.3)


def _network(send: _Stats, recv: _Stats | None, rate: float, ctx: _Context
             ) -> tuple[Bottleneck, Finding, tuple[Advice, ...], float]:
    """Rule 5: the path between the buffers is the limit - by an end's CPU, where one of the
    way's own ends was read wanting the CPU nearly all the time."""
    base = 0.55 + 0.4 * max(0.0, send.fill_mean - LOW) / (100 - LOW)
    base = base if recv else base * 0.6
    figures: dict[str, float | str] = {
        "fill": send.fill_mean, "rate": rate,
        "transport": ctx.transport.value if ctx.transport else ""}
    if recv is not None:
        figures["receive_fill"] = recv.fill_mean
    bound = max(ctx.ends, key=lambda e: e.wants, default=None)
    if bound is not None and bound.wants >= WANTS_CPU and ctx.transport is not None:
        figures.update(program=bound.program, host=bound.host, side=bound.side.value,
                       on_cpu=bound.on_cpu, waiting=bound.waiting)
        free = (Advice(AdviceKind.FREE_CPU, {"host": bound.host, "program": bound.program}),) \
            if bound.waiting > bound.on_cpu else ()
        return (Bottleneck.NETWORK, Finding(FindingKind.END_CPU, figures),
                (*free, *transports.carrier(ctx.transport).cpu_advice()), max(base, 0.8))
    return (Bottleneck.NETWORK, Finding(FindingKind.SEND_FULL, figures),
            _network_advice(ctx.transport), base)


def _compressor(send: _Stats | None, recv: _Stats | None, tool: str
                ) -> tuple[Bottleneck, Finding, tuple[Advice, ...], float] | None:
    """Both near empty while compressing (`tool`): the sender's mbuffer, after the
    compressor, gets compressed bytes slowly, so the stage before the wire is the limit. The
    rate is the receiver's (stream bytes): the sender's counts compressed ones."""
    if not tool or send is None or recv is None or send.fill_mean > LOW \
            or recv.fill_mean > LOW:
        return None
    return (Bottleneck.COMPRESSOR,
            Finding(FindingKind.COMPRESSOR_SLOW, {
                "tool": tool, "send_fill": send.fill_mean, "receive_fill": recv.fill_mean,
                "rate": recv.rate}),
            (Advice(AdviceKind.COMPRESS_LIGHTER, {"tool": tool}),
             Advice(AdviceKind.SOURCE_READ, {"rate": recv.rate})),
            0.5 + 0.35 * max(0.0, LOW - send.fill_mean) / LOW)


def _bursty_advice(peak: float, ctx: _Context) -> tuple[Advice, ...]:
    stalls: tuple[Advice, ...] = ()
    if ctx.receive_buffer and ctx.receive_buffer >= peak * BUFFER_SECONDS:
        stalls = (Advice(AdviceKind.RECEIVE_STALLS, {
            "buffer": ctx.receive_buffer,
            "seconds": ctx.receive_buffer / max(peak, 1.0)}),)
    return (*stalls, buffer_advice(peak), Advice(AdviceKind.RECEIVE_TXG))


def _is_single(send: Sequence[Sample], recv: Sequence[Sample]) -> bool:
    """Local transport: one mbuffer reports for both sides, so the two series are identical."""
    if not send or len(send) != len(recv):
        return False
    return all((a.t, a.in_rate, a.out_rate, a.total, a.fill)
               == (b.t, b.in_rate, b.out_rate, b.total, b.fill)
               for a, b in zip(send, recv, strict=True))


def diagnose(samples: Sequence[Sample], *, rate_limit: int | None = None, window: float = 30.0,
             final: bool = False, transport: Transport | None = None,
             receive_buffer: int | None = None, receive_empties: int | None = None,
             compress: str = "", ceiling: Ceiling | None = None,
             ends: Sequence[EndCpu] = (), resent: Sequence[Resent] = ()) -> Verdict:
    """Judge what limits a transfer from its mbuffer samples.

    Args:
        samples: in time order, either side or both.
        rate_limit: the user's rate limit in bytes/s, if any.
        window: only the last `window` seconds are judged, unless `final`.
        final: judge every sample given (the whole transfer) and mark the verdict final.
        transport, receive_buffer: from the plan, to tailor the advice.
        compress: the plan's compressor in transit: the sender's figures are compressed bytes.
        ceiling: the path's ceiling (wire/): a network stage at WIRE_SHARE of it is the wire.
        ends: what the CPU gave the way's own ends (job/step/end_cpu.py), over the samples' time.
        resent: what the sending host sent, and sent again (job/step/resent_watch.py): a link that
            loses packets is named, first where the way between the buffers is the slowest.
        receive_empties: times the receive buffer ran empty, when counted elsewhere over
            samples that were since thinned out.
    """
    t = samples[-1].t if samples else 0.0
    if not final:
        samples = [s for s in samples if s.t >= t - window]
    send_s = [s for s in samples if s.side is Side.SEND]
    recv_s = [s for s in samples if s.side is Side.RECEIVE]
    single = _is_single(send_s, recv_s)
    send, recv = _stats(send_s), _stats([] if single else recv_s)
    if not final:
        ends = [e for e in ends if e.t >= t - window]
    ctx = _Context(rate_limit, transport, receive_buffer, compress, ceiling, combined(ends))
    evidence = _evidence(send, recv, ctx, receive_empties)
    if single:
        # One buffer between zfs send and zfs receive: judge it as the receiver's buffer
        # too (full means receive is slow, swinging means receive is bursty).
        evidence["single_buffer"] = 1.0
        recv = send
    if max(len(send_s), len(recv_s)) < MIN_SAMPLES:
        # At the end there will be no more: the transfer was too short to tell, not "yet".
        finding = Finding(FindingKind.TOO_SHORT if final else FindingKind.NOT_ENOUGH_DATA)
        return Verdict(Bottleneck.NONE, finding, (), evidence, 0.0, final, t)
    empties = receive_empties if receive_empties is not None else (recv.empties if recv else 0)
    kind, finding, advice, base = _judge(send, recv, single, ctx, empties)
    if not final:
        resent = [r for r in resent if r.t >= t - window]
    lost = _lost(resent)
    if lost is not None:
        evidence["resent_share"] = round(100 * lost.num("share"), 2)
        advice = (lost, *advice) if kind is Bottleneck.NETWORK else (*advice, lost)
    span = max(st.span for st in (send, recv) if st is not None)
    return Verdict(kind, finding, advice, evidence, _confidence(base, span), final, t)


def _lost(resent: Sequence[Resent]) -> Advice | None:
    """That the link loses packets, from the readings' sums (named by the latest), and where,
    as the interfaces read with them told (the fewest read in any reading counts)."""
    if not resent:
        return None
    last, again = resent[-1], sum(r.again for r in resent)
    lossy = loss_advice(last.host, last.system, sum(r.sent for r in resent), again)
    if lossy is None:
        return None
    return iface_loss.where(lossy, iface_loss.merged(x for r in resent for x in r.lost),
                            min(r.ifaces_read for r in resent), again)


def stall_verdict(event: Stalled, timeout: float | None = None) -> Verdict:
    """The live verdict on a stall (or on its end): where the stream stopped, and what
    zmigrate does meanwhile (waits, or gives up after `timeout` seconds)."""
    figures = {**event.figures, "where": event.where, "host": event.host,
               "seconds": round(event.seconds, 1)}
    if event.cleared:
        return Verdict(Bottleneck.NONE, Finding(FindingKind.STALL_CLEARED, figures), (),
                       {"seconds": round(event.seconds, 1)}, 0.0, False, event.t, event.dataset)
    return Verdict(Bottleneck.STALLED, Finding(FindingKind.STALLED, figures),
                   (Advice(AdviceKind.STALL_WAIT, {"timeout": timeout or 0}),),
                   {"seconds": round(event.seconds, 1)}, 0.9, False, event.t, event.dataset)


class Diagnoser:
    """Job observer: collects samples and emits a Verdict every `period` seconds of sample time.

    Memory stays bounded: the last `window` seconds for live verdicts, plus per-side histories
    thinned to every 2nd, 4th... sample once they pass HISTORY_MAX, for the final verdict. It
    reads the transport and receive buffer size from the PlanReady event when it comes.
    """

    def __init__(self, emit: Observer, *, rate_limit: int | None = None,
                 period: float = 5.0, window: float = 30.0) -> None:
        self._emit = emit
        self.rate_limit = rate_limit
        self.period = period
        self.window = window
        self.transport: Transport | None = None
        self.receive_buffer: int | None = None
        self.compress = ""
        self.ceiling: Ceiling | None = None
        self._recent: deque[Sample] = deque()
        self._ends: deque[EndCpu] = deque()  # the window's readings of the way's ends
        self._ends_whole: tuple[EndCpu, ...] = ()  # theirs over the whole transfer
        self._resent: deque[Resent] = deque()  # the window's readings of TCP's segments
        self._resent_whole: Resent | None = None  # theirs summed over the whole transfer
        self._history: dict[Side, list[Sample]] = {Side.SEND: [], Side.RECEIVE: []}
        self._stride = 1
        self._seen: dict[Side, int] = {Side.SEND: 0, Side.RECEIVE: 0}
        self._last_fill: float | None = None
        self._empties = 0
        self._next_emit: float | None = None
        self._final: Verdict | None = None
        self._lock = threading.Lock()
        self.stall_timeout: float | None = None
        self._stalled = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, PlanReady):
            plan = event.plan
            self.transport = plan.transport
            self.receive_buffer = plan.destination_buffer
            self.stall_timeout = plan.options.stall_timeout
            self.compress = plan.compress
            if self.rate_limit is None:
                self.rate_limit = plan.options.rate_limit
            return
        if isinstance(event, Stalled):
            self._on_stalled(event)
            return
        if isinstance(event, Wire):
            self.ceiling = event.ceiling
            return
        if isinstance(event, EndCpu):
            with self._lock:
                self._ends.append(event)
                while self._ends and self._ends[0].t < event.t - self.window:
                    self._ends.popleft()
                self._ends_whole = combined((*self._ends_whole, event))
            return
        if isinstance(event, Resent):
            self._on_resent(event)
            return
        if not isinstance(event, Sample):
            return
        verdict = None
        with self._lock:
            if self._final is not None:
                return
            self._add(event)
            if self._next_emit is None:
                self._next_emit = event.t + self.period
            elif event.t >= self._next_emit:
                self._next_emit = event.t + self.period
                if not self._stalled and not self._still(event.t):
                    verdict = self._diagnose(list(self._recent), final=False)
        if verdict is not None:
            self._emit(verdict)  # outside the lock: observers may call back into us

    def _on_resent(self, event: Resent) -> None:
        with self._lock:
            self._resent.append(event)
            while self._resent and self._resent[0].t < event.t - self.window:
                self._resent.popleft()
            was = self._resent_whole
            self._resent_whole = event if was is None else replace(
                event, sent=was.sent + event.sent, again=was.again + event.again,
                seconds=was.seconds + event.seconds,
                ifaces_read=min(was.ifaces_read, event.ifaces_read),
                lost=iface_loss.merged((*was.lost, *event.lost)))

    def _still(self, t: float) -> bool:
        """Whether no byte moved on either side for the last STILL seconds: no stage is slow
        then, the stream stands (the stall verdict says where, once it is one)."""
        if not self._recent or self._recent[0].t > t - STILL:
            return False
        return all(s.in_rate <= 0 and s.out_rate <= 0 for s in self._recent if s.t >= t - STILL)

    def _on_stalled(self, event: Stalled) -> None:
        with self._lock:
            if self._final is not None:
                return
            self._stalled = not event.cleared
            if event.cleared:
                # Judge the stream that moves again, not the stall's samples; nor does the
                # final verdict (a stall is no stage's pace).
                self._recent.clear()
                self._next_emit = None
                start = event.t - event.seconds
                for side in Side:
                    self._history[side] = [s for s in self._history[side]
                                           if not start < s.t < event.t]
        self._emit(stall_verdict(event, self.stall_timeout))

    def _add(self, s: Sample) -> None:
        self._recent.append(s)
        while self._recent and self._recent[0].t < s.t - self.window:
            self._recent.popleft()
        if s.side is Side.RECEIVE:
            if self._last_fill is not None and self._last_fill >= EMPTY and s.fill < EMPTY:
                self._empties += 1
            self._last_fill = s.fill
        n = self._seen[s.side]
        self._seen[s.side] = n + 1
        if n % self._stride == 0:
            hist = self._history[s.side]
            hist.append(s)
            if len(hist) > HISTORY_MAX:
                # Thin both sides alike so identical local-transport series stay identical.
                self._stride *= 2
                for side in Side:
                    self._history[side] = self._history[side][::2]

    def _diagnose(self, samples: list[Sample], *, final: bool) -> Verdict:
        samples.sort(key=lambda s: s.t)
        return diagnose(samples, rate_limit=self.rate_limit, window=self.window, final=final,
                        transport=self.transport, receive_buffer=self.receive_buffer,
                        receive_empties=self._empties if final else None,
                        compress=self.compress, ceiling=self.ceiling,
                        ends=self._ends_whole if final else tuple(self._ends),
                        resent=(() if self._resent_whole is None else (self._resent_whole,))
                        if final else tuple(self._resent))

    def finish(self) -> Verdict:
        """The verdict over the whole transfer; emitted once, returned on every call."""
        with self._lock:
            if self._final is not None:
                return self._final
            merged = self._history[Side.SEND] + self._history[Side.RECEIVE]
            self._final = self._diagnose(merged, final=True)
            verdict = self._final
        self._emit(verdict)
        return verdict
