"""One transfer of one dataset: prepared in three steps, read both hosts (`preflight`), decide
(`decide`), plan (`planning`), then run its stream (`pipeline`, watched by `stream_watch`,
`stall_watch` and `end_cpu`) and verify it (`checks`)."""

from .job import InTree, Job, Request, discard_partial, partial_receive
from .preflight import Known, default_transport, read_settled

__all__ = [
    "InTree", "Job", "Known", "Request", "default_transport", "discard_partial", "partial_receive",
    "read_settled",
]
