"""What is read of a step while it streams, beside its mbuffers: the CPU its way's own ends get
(end_cpu.py) and the segments the host that sends onto the link sends again (resent_watch.py)."""

from __future__ import annotations

from ...hosts import Host, Process
from ...transports import Carrier
from .end_cpu import EndCpuWatch
from .resent_watch import ResentWatch, interface_ends
from .stream_watch import Emit


class StepReadings:
    """Both watches of a step, followed and ticked together."""

    def __init__(self, carrier: Carrier, emit: Emit, t0: float) -> None:
        self.carrier = carrier
        self.cpu = EndCpuWatch(carrier.cpu_ends, emit, t0)
        self.resent = ResentWatch(emit, t0)

    def follow(self, src: Host, sender: Process, receiver: Process | None, dst: Host,
               mark: str | None, addresses: tuple[str | None, str | None] = (None, None)
               ) -> None:
        """Read the step's ends (EndCpuWatch.follow_ends) and the host that puts the stream on
        the link: the source, or this computer where it relays; and, where the hosts talk
        directly, each one's interface toward the other's address (`addresses`: the
        destination's as the source reaches it, the source's as the destination sees it)."""
        relays = self.carrier.relays
        self.cpu.follow_ends(sender, receiver, dst, mark, relayed=relays)
        if self.carrier.crosses_link:
            self.resent.follow(None if relays else src,
                               [] if relays else interface_ends(src, dst, addresses))

    def tick(self, now: float, flowing: bool) -> None:
        self.cpu.tick(now, flowing=flowing)
        self.resent.tick(now, flowing=flowing)

    def __enter__(self) -> StepReadings:
        return self

    def __exit__(self, *_exc: object) -> None:
        """The step's stream ended: no reading of it is said after this."""
        self.resent.close()
