"""What a stage measured in a module of its own reads of the running doctor (`stages.Doctor`).

A protocol, so `compress.py` and `links.py` need nothing of `stages.py`, which calls them.
"""

from __future__ import annotations

from typing import Any, Protocol

from .. import zfs
from ..hosts import Host
from ..job import Job
from ..plan import Options
from ..transports import Transport
from .measure import Measurer
from .results import StageResult


class StageContext(Protocol):
    """The doctor's hosts, settings and measuring, as its stage modules use them."""

    src: Host
    dst: Host
    snapshot: str | None
    seconds: float
    run_id: str
    options: Options
    transport: Transport
    ciphers: tuple[str, ...]
    measurer: Measurer
    src_caps: zfs.Capabilities | None
    dst_caps: zfs.Capabilities | None

    @property
    def cancelled(self) -> bool: ...

    def job(self) -> Job: ...

    def measure_stage(self, name: str, title: str, in_path: bool,
                      start: list[tuple[Host, str]], *, details: dict[str, Any] | None = None,
                      seconds: float | None = None) -> StageResult: ...

    @staticmethod
    def mbuffer_argv(*extra: str) -> list[str]: ...
