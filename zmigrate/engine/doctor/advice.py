"""What to do about the slowest stage: advice from the stages' rates and CPU, as data.

Each item is an `Advice` (findings.py): a kind and its figures, worded by each face.
"""

from __future__ import annotations

from ..events import NicLoss
from ..findings import Advice, AdviceKind, NoteKind, unique
from ..readings import iface_loss, tcp_resent
from ..transports import Transport, carrier
from ..verdict.diagnosis import buffer_advice
from ..wire import Wire, at_the_wire, wire_advice
from .results import StageResult


def _cpu(kind: AdviceKind, stage: StageResult) -> Advice | None:
    bound = stage.cpu_bound
    if bound is None:
        return None
    return Advice(kind, {"process": bound.name, "cpu": bound.cpu, "host": bound.host,
                         "stage": stage.title})


WIRE_ITSELF = frozenset({AdviceKind.LINK_SLOWER, AdviceKind.HALF_DUPLEX,
                         AdviceKind.MTU_MISMATCH, AdviceKind.HOST_SHAPING})


def _network(rate: float, wire: Wire | None) -> list[Advice]:
    """The network stage is the slowest: at the wire's ceiling nothing is to tune; else the
    cures the wire's reading names, or the general ones where it was not read."""
    full = at_the_wire(rate, wire.ceiling if wire is not None else None)
    if full is not None and wire is not None:
        # Nothing to tune; only a faster wire (cable, port, MTU, the host's own shaping) helps.
        return [full, *(a for a in wire_advice(wire) if a.kind in WIRE_ITSELF)]
    if wire is None:
        return [Advice(AdviceKind.NETWORK_LINK, {"rate": rate}), Advice(AdviceKind.JUMBO_FRAMES),
                Advice(AdviceKind.NIC_RINGS), Advice(AdviceKind.TRANSPORT_CPU)]
    return [Advice(AdviceKind.NETWORK_LINK, {"rate": rate}), *wire_advice(wire),
            Advice(AdviceKind.TRANSPORT_CPU)]


def _lossy(stages: list[StageResult]) -> Advice | None:
    """The link loses packets: TCP sent too large a share again during the network stage;
    where, as both ends' interfaces told (iface_loss.where)."""
    for s in stages:
        resent = next((n for n in s.notes if n.kind is NoteKind.RESENT), None)
        if resent is None:
            continue
        lossy = tcp_resent.loss_advice(resent.word("host"), resent.word("system"),
                                       resent.count("sent"), resent.count("again"))
        if lossy is None:
            return None
        losses = [NicLoss(n.word("host"), n.word("iface"), n.count("frames"), n.count("ring"),
                          n.count("queue"), n.word("tool") if n.has("tool") else iface_loss.IP)
                  for n in s.notes if n.kind is NoteKind.IFACE_LOSS]
        read = resent.count("ifaces_read") if resent.has("ifaces_read") else 0
        return iface_loss.where(lossy, losses, read, resent.count("again"))
    return None


def advise(stages: list[StageResult], slowest: StageResult | None,
           transport: Transport, memory: int | None = None,
           compress: Advice | None = None, wire: Wire | None = None) -> tuple[Advice, ...]:
    """What to do, most telling first: a cleanup left to do by hand (this run's or an earlier
    one's), a process that held a whole core, the slowest stage's own advice and its receive
    buffer, compression in transit on or off (`compress`, from doctor/compress.py), faster
    ciphers or tcp against ssh, CPU-bound ciphers, and why the ssh stages were skipped."""
    out: list[Advice] = []
    by = {s.name: s for s in stages}
    for s in stages:
        if s.details.get("cleanup_error"):
            out.append(Advice(AdviceKind.CLEANUP_FAILED, {"dataset": str(s.details["dataset"]),
                                                          "host": str(s.details["host"])}))
        out += [Advice(AdviceKind.LEFTOVER_DATASET, left)
                for left in s.details.get("leftovers", ())]
    if slowest is not None:
        rate = slowest.rate or 0.0
        bound = _cpu(AdviceKind.CPU_BOUND, slowest)
        if bound is not None:
            out.append(bound)
        if slowest.name == "source_read":
            out += [Advice(AdviceKind.SOURCE_POOL, {"rate": rate}),
                    Advice(AdviceKind.SOURCE_QUIET)]
        elif slowest.name == "network":
            out += [a for a in (_lossy(stages),) if a is not None] + _network(rate, wire)
        elif slowest.name.startswith("ssh"):
            out.append(Advice(AdviceKind.SSH_SLOW, {"rate": rate}))
        elif slowest.name == "destination_write":
            out.append(Advice(AdviceKind.DESTINATION_POOL, {"rate": rate}))
        out.append(buffer_advice(rate, memory=memory))  # within the receiver's memory
    if (slowest is None or slowest.name != "network") and (lossy := _lossy(stages)):
        out.append(lossy)  # not what holds this transfer back, but it will when the rest is fast
    if wire is not None and (slowest is None or slowest.name != "network"):
        # Not the slowest stage, but a mis-set link is worth a word all the same.
        out += [a for a in wire_advice(wire) if a.kind is not AdviceKind.CPU_SCALED]
    if compress is not None:
        out.append(compress)
    ssh_rows = [s for s in stages if s.name.startswith("ssh_") and s.rate is not None]
    default = by.get("ssh_default")
    fastest = max(ssh_rows, key=lambda s: s.rate or 0.0, default=None)
    if fastest is not None and default is not None and default.rate and fastest.rate \
            and fastest is not default and fastest.rate > 1.2 * default.rate:
        out.append(Advice(AdviceKind.FASTER_CIPHER, {
            "cipher": str(fastest.details.get("cipher")), "rate": fastest.rate,
            "default_rate": default.rate}))
    net = by.get("network")
    on_ssh = carrier(transport).source_ssh  # the stream goes through the source's ssh
    if on_ssh and net is not None and net.rate and fastest is not None \
            and fastest.rate and net.rate > 1.5 * fastest.rate:
        out.append(Advice(AdviceKind.TCP_FASTER, {"tcp_rate": net.rate,
                                                   "ssh_rate": fastest.rate}))
    for s in stages:
        if s is not slowest and s.name.startswith("ssh"):
            cipher = _cpu(AdviceKind.CIPHER_CPU_BOUND, s)
            if cipher is not None:
                out.append(cipher)
    skipped = by.get("ssh")
    if skipped is not None:
        for note in skipped.notes:
            if note.kind is NoteKind.SSH_UNREACHABLE:
                out.append(Advice(AdviceKind.SSH_UNREACHABLE, {"reason": note.word("reason")}))
    return unique(out)  # the same advice once
