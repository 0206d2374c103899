"""relay: through this computer, up the source's control session and down the destination's.

For hosts that cannot reach each other (two networks, NAT, a firewall): the stream is encrypted
twice and crosses this computer's links, which then set the pace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from ..findings import Advice, AdviceKind, Figure, Finding
from ..readings import mbuffer
from ..readings.end_cpu import OWN
from .base import Carrier, Ends, StreamSpec, Transport

if TYPE_CHECKING:
    from .base import PlanFacts


class Relay(Carrier):
    transport: ClassVar[Transport] = Transport.RELAY
    relays: ClassVar[bool] = True
    link_words: ClassVar[str] = "this computer's link (the relay)"
    # This process decrypts the source's session and encrypts the destination's.
    cpu_ends: ClassVar[tuple[str, ...]] = (OWN,)

    def describe(self, plan: PlanFacts) -> str:
        return "relayed through this computer (both SSH control sessions)"

    def ends(self, spec: StreamSpec) -> Ends:
        # mbuffer reads stdin and writes stdout by default: the two control sessions.
        dst_mb = mbuffer.command(spec.block, spec.destination_buffer, hash_=spec.hash)
        src_mb = mbuffer.command(spec.block, spec.source_buffer, hash_=spec.hash,
                                 rate=spec.rate_limit, stop_on_error=True)
        return Ends(spec.source_side(src_mb), spec.receive_side(dst_mb))

    def sender_label(self, plan: PlanFacts, dst_label: str) -> str:
        return "the sender (relayed through this computer)"

    def stall_path(self, plan: PlanFacts, src: str, dst: str) -> dict[str, Figure]:
        # Both control sessions: this computer's links carry the stream.
        return {"path": self.transport.value, "source": src, "destination": dst}

    def stalled_words(self, f: Finding) -> str:
        return ("nothing crosses this computer's links: the stream goes up one SSH session "
                "and down the other, and neither carries it")

    def cpu_advice(self) -> tuple[Advice, ...]:
        return (Advice(AdviceKind.RELAY_BYPASS), Advice(AdviceKind.RELAY_NEARBY))

    def network_advice(self) -> tuple[Advice, ...]:
        return tuple(Advice(k) for k in (AdviceKind.RELAY_PATH, AdviceKind.RELAY_BYPASS,
                                         AdviceKind.RELAY_NEARBY))


CARRIER = Relay()
