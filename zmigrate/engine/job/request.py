"""What a job is asked to move (`Request`): read by every step of its preparation."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..plan import Options


@dataclass(frozen=True, slots=True)
class Request:
    """What to move: `pool/ds@snap` on the source into `pool/ds` on the destination."""

    snapshot: str
    destination: str
    options: Options = field(default_factory=Options)
