"""The listener's probe (transports/listener.py) run by a real sh against real sockets, and the
words of a rejected or squatted listener (job/step/why_failed.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from zmigrate.engine.events import Side
from zmigrate.engine.job.step.stream_watch import SideState
from zmigrate.engine.job.step.why_failed import (
    dropped,
    rejected_addresses,
    taken_error,
    unreached_error,
)
from zmigrate.engine.transports.listener import (
    LISTENING_MARK,
    TAKEN_MARK,
    holders,
    parse_taken,
    with_readiness_probe,
)


def _run_in_group(line: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["setsid", "-w", "sh", "-c", line], capture_output=True, text=True,
                          timeout=30, check=False)


def test_a_listener_of_its_own_group_is_ready() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    own = (f"{sys.executable} -c 'import socket, time; s = socket.socket(); "
           f"s.bind((\"0.0.0.0\", {port})); s.listen(1); time.sleep(4)'")
    r = _run_in_group(with_readiness_probe(own, port, 5))
    assert r.stderr.splitlines()[0] == LISTENING_MARK, r.stderr


def test_a_port_held_by_another_process_is_named_and_never_ready() -> None:
    with socket.socket() as squatter:
        squatter.bind(("0.0.0.0", 0))  # noqa: S104 - as a squatter on the host would
        squatter.listen(1)
        port = squatter.getsockname()[1]
        r = _run_in_group(with_readiness_probe("sleep 1", port, 5))
        held = subprocess.run(["sh", "-c", holders(port)], capture_output=True, text=True,
                              timeout=30, check=False)
    assert LISTENING_MARK not in r.stderr, r.stderr
    taken = [t for t in map(parse_taken, r.stderr.splitlines()) if t is not None]
    assert taken and taken[0][0] == str(os.getpid()), r.stderr
    assert parse_taken(held.stdout.splitlines()[0]) == taken[0]


def test_parse_taken() -> None:
    assert parse_taken(f"{TAKEN_MARK} 812 bob nc -l 20001") == ("812", "bob nc -l 20001")
    assert parse_taken(f"{TAKEN_MARK} ?") == ("?", "")
    assert parse_taken(LISTENING_MARK) is None


def test_the_taken_error_names_the_process_or_says_it_cannot() -> None:
    seen = taken_error(20001, "nas", "812", "bob nc -l 20001")
    assert "held by process 812 (bob nc -l 20001)" in seen.message
    assert seen.fix is not None and "--port" in seen.fix
    hidden = taken_error(20001, "nas", "?", "")
    assert "a process zmigrate cannot see" in hidden.message


def test_rejected_strangers_are_named_but_never_advised() -> None:
    receive = SideState(Side.RECEIVE, "nas")
    receive.tail.extend(["mbuffer: warning: rejected connection from 10.0.0.9",
                         "mbuffer: warning: rejected connection from 10.0.0.9",
                         "mbuffer: warning: rejected connection from 10.0.0.7"])
    assert rejected_addresses(receive) == ["10.0.0.9", "10.0.0.7"]
    err = unreached_error(20001, 10, "src", rejected_addresses(receive))
    assert "10.0.0.9, 10.0.0.7" in err.message
    assert err.fix is not None and "--allow-address" not in err.fix


def test_only_mbuffers_own_dropped_socket_counts_as_dropped() -> None:
    send = SideState(Side.SEND, "src")
    send.tail.append("warning: cannot send 'p/ds@s': Broken pipe")
    assert not dropped(send)
    send.tail.append("mbuffer: error: outputThread: error writing to 10.0.0.2:20001 at offset "
                     "0x20000: Broken pipe")
    assert dropped(send)
