"""Connect to a job's two hosts at once: each SSH handshake is mostly waiting on its host, so
the second need not wait for the first (the CLI and the bench open both this way)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, wait

from .base import Host
from .login import HostKeyDecision, HostKeyInfo, HostSpec, Prompts, connect


class _OneAtATime(Prompts):
    """`prompts` asked by one connection at a time (two connect at once)."""

    def __init__(self, prompts: Prompts) -> None:
        self._prompts = prompts
        self._lock = threading.Lock()

    def unknown_host_key(self, info: HostKeyInfo) -> HostKeyDecision:
        with self._lock:
            return self._prompts.unknown_host_key(info)

    def secret(self, prompt: str) -> str | None:
        with self._lock:
            return self._prompts.secret(prompt)


def connect_both(src: HostSpec, dst: HostSpec, prompts: Prompts | None = None,
                 *, timeout: float = 15.0) -> tuple[Host, Host]:
    """`connect` to both hosts at once, a question to the user asked for one host at a time.
    If either fails, the other is closed and the source's error, else the destination's, is
    raised. (job_checks.both would leave the other connection open.)"""
    asked = _OneAtATime(prompts or Prompts())
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="zmigrate-connect") as pool:
        futures = [pool.submit(connect, spec, asked, timeout=timeout) for spec in (src, dst)]
        wait(futures)
    errors = [f.exception() for f in futures]
    if any(errors):
        for f, e in zip(futures, errors, strict=True):
            if e is None:
                f.result().close()
        raise next(e for e in errors if e is not None)
    return futures[0].result(), futures[1].result()
