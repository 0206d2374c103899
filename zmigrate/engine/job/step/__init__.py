"""One step of a job, run: the listener's port (`port`), both ends started and followed
(`pipeline.StepRunner`), their mbuffers' output read (`stream_watch`), what the hosts' CPU and
TCP counters say meanwhile (`readings`, `end_cpu`, `resent_watch`), stalls looked at
(`stall_watch`), and why an end failed (`why_failed`). The job (`job.job`) runs its steps
through `StepRunner`; the doctor picks ports and waits for listeners as a step does."""

from .pipeline import StepResult, StepRunner, check_hashes
from .port import free_port

__all__ = ["StepResult", "StepRunner", "check_hashes", "free_port"]
