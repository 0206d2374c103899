"""The listener's port: one picked where nothing listens, the wait until the listener zmigrate
started holds it, and the process named where another holds it instead."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Literal

from ...errors import (
    CancelledError,
    PortInUseError,
    PreflightError,
    PreflightReason,
    TransferError,
    ZmigrateError,
)
from ...events import StageChanged
from ...hosts import Host, Process
from ...hosts import tools as capabilities
from ...transports.listener import LISTEN_TIMEOUT, holders, parse_taken
from .stream_watch import Emit, StreamWatch
from .why_failed import taken_error, unchecked_words

# Below every system's ephemeral range (Linux 32768-60999, FreeBSD 49152-65535, illumos from
# 32768): a port picked there is not one an outgoing connection, or its TIME_WAIT, holds.
PORT_LOW, PORT_HIGH = 20000, 32767


def free_port(host: Host, low: int = PORT_LOW, high: int = PORT_HIGH, *,
              used: set[int] | None = None) -> int:
    """A TCP port nothing listens on at `host` (`used`: the listening ports, if known)."""
    taken = listening_ports(host) if used is None else used
    rng = random.Random()
    for _ in range(200):
        port = rng.randint(low, high)
        if port not in taken:
            return port
    raise PreflightError("no free TCP port found", host=host.label, fix="give one with --port",
                         reason=PreflightReason.NO_PORT)


def listening_ports(host: Host) -> set[int]:
    """Ports in LISTEN state on `host` (ss, netstat or sockstat: capabilities.LISTENING)."""
    r = host.run(capabilities.LISTENING, timeout=30)
    return capabilities.parse_listening(r.stdout)


def wait_listening(host: Host, port: int, seconds: float = 1.0) -> bool:
    """Whether `port` listens on `host` within about `seconds`.

    One remote command polls every 20 ms: a round of `listening_ports` costs a whole SSH session
    (100-150 ms on loopback), so the sender could start that much earlier.
    """
    tries = max(1, round(seconds / 0.02))
    line = (
        f"i=0; while :; do {capabilities.listening_grep(port)} && exit 0; i=$((i+1)); "
        f"[ $i -ge {tries} ] && exit 1; sleep 0.02 2>/dev/null || sleep 1; done"
    )
    return host.run(line, timeout=seconds + 30).ok


def await_listener(listens: Callable[[float], bool], proc: Process, cancelled: threading.Event,
                   poll: float = 1.0, grace: float = 0.0
                   ) -> Literal["listening", "cancelled", "stopped", "timeout"]:
    """Wait up to LISTEN_TIMEOUT until `listens(seconds)` says `proc`, a listener, listens (it
    may wait that long to find out); or say why not: cancelled, the listener stopped first (after
    `grace` seconds more for word that it did listen), or the time ran out."""
    deadline = time.monotonic() + LISTEN_TIMEOUT
    while time.monotonic() < deadline:
        if cancelled.is_set():
            return "cancelled"
        if proc.poll() is not None:
            return "listening" if grace and listens(grace) else "stopped"
        if listens(poll):
            return "listening"
    return "cancelled" if cancelled.is_set() else "timeout"


def wait_ours(watch: StreamWatch, proc: Process, cancelled: threading.Event, dst: Host,
              port: int, emit: Emit, stopped: Callable[[], ZmigrateError]) -> None:
    """Until the listener's probe says our listener holds `port`: a port someone else holds is
    an error naming them (the sender never starts, so no byte reaches them); `stopped` makes
    the error of a listener that ended first."""
    # The listener's probe prints its answer; output may still be on its way after an exit.
    state = await_listener(watch.settled.wait, proc, cancelled, poll=0.01, grace=0.5)
    if watch.taken is not None:
        raise taken_error(port, dst.label, *watch.taken)
    if state == "listening":
        if watch.unchecked:
            emit(StageChanged("starting", unchecked_words(port, dst.label)))
        return
    if state == "cancelled":
        raise CancelledError("cancelled")
    if state == "stopped":
        # Its probe had no time to say who holds the port: ask.
        raise holder_named(stopped(), dst, port)
    raise TransferError(f"the receiver did not listen on port {port} within "
                        f"{LISTEN_TIMEOUT:.0f} s", host=dst.label)


def port_holder(host: Host, port: int) -> tuple[str, str] | None:
    """(pid, `user args`) of a process holding `port` on `host`, if any."""
    try:
        r = host.run(holders(port), timeout=30)
    except ZmigrateError:
        return None
    return next((t for t in map(parse_taken, r.stdout.splitlines()) if t is not None), None)


def holder_named(error: ZmigrateError, dst: Host, port: int | None, *,
                 relisten: bool = False) -> ZmigrateError:
    """`error`; or, where it is a port in use that a process holds now, the error naming that
    process (`relisten`: taken as the listener started again). Nobody holds it any more (taken
    and let go meanwhile): `error` stands, and another port will do."""
    if not isinstance(error, PortInUseError) or port is None:
        return error
    taken = port_holder(dst, port)
    if taken is None:
        return error
    named = taken_error(port, dst.label, *taken, relisten=relisten)
    named.__cause__ = error
    return named


__all__ = ["PORT_HIGH", "PORT_LOW", "await_listener", "free_port", "holder_named",
           "listening_ports", "port_holder", "wait_listening", "wait_ours"]
