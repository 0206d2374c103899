"""One step of a job, run: the listener's port (`port`), both ends started and followed
(`pipeline.StepRunner`), their mbuffers' output read (`stream_watch`), what the hosts' CPU and
TCP counters say meanwhile (`readings`, `end_cpu`, `resent_watch`), stalls looked at
(`stall_watch`), and why an end failed (`why_failed`). The job runs its steps through
`StepRunner`; the doctor picks ports, waits for its listeners and names a port's holder as a
step does."""

from . import resent_watch
from .pipeline import StepResult, StepRunner, check_hashes, stop_processes
from .port import await_listener, free_port, listening_ports, port_holder
from .why_failed import taken_error

__all__ = ["StepResult", "StepRunner", "await_listener", "check_hashes", "free_port",
           "listening_ports", "port_holder", "resent_watch", "stop_processes", "taken_error"]
