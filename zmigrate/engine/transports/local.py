"""local: both ends on one host, one pipeline `zfs send | mbuffer | zfs receive`, no network."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from .. import cmdline
from ..readings import mbuffer
from .base import Carrier, Ends, StreamSpec, Transport

if TYPE_CHECKING:
    from .base import PlanFacts


class Local(Carrier):
    transport: ClassVar[Transport] = Transport.LOCAL
    two_ends: ClassVar[bool] = False
    crosses_link: ClassVar[bool] = False

    def describe(self, plan: PlanFacts) -> str:
        return "on the same host, without network"

    def ends(self, spec: StreamSpec) -> Ends:
        # One pipeline, one status: a failed receive must end the mbuffer (-e) at once.
        mb = mbuffer.command(spec.block, spec.source_buffer, hash_=spec.hash,
                             rate=spec.rate_limit, stop_on_error=True)
        line = cmdline.pipe(cmdline.join(spec.send), cmdline.join(mb), cmdline.join(spec.receive))
        return Ends(line, None)


CARRIER = Local()
