"""The listener is ours or nothing (issue 33): a port held by another process stops the job
before the sender starts, and a stranger's connection the listener rejects neither disarms the
connect deadline nor becomes advice to let that stranger in."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from lab.util import dataset_exists, doctor_processes, wait_until, zfs, zfs_processes_naming
from lab.zfsfuse import Pool

from zmigrate.engine.doctor import Doctor
from zmigrate.engine.errors import TransferError
from zmigrate.engine.events import StageChanged
from zmigrate.engine.hosts import Host
from zmigrate.engine.job import Job, Request
from zmigrate.engine.job import decide as job_decide
from zmigrate.engine.job.step.pipeline import StepRunner
from zmigrate.engine.plan import Options
from zmigrate.engine.remedies import Remedy
from zmigrate.engine.transports import Transport
from zmigrate.engine.units import MiB

pytestmark = pytest.mark.lab


def _dataset(pool: Pool, mb: int = 2) -> str:
    ds = f"{pool.name}/ds"
    zfs("create", ds)
    with open(pool.mountpoint / "ds" / "data", "wb") as f:
        f.write(os.urandom(mb * MiB))
    zfs("snapshot", f"{ds}@s")
    return ds


def _leftovers(pools: tuple[Pool, Pool], port: int | None) -> list[str]:
    """Processes of this test's job: they name its pools or its port (other sessions' jobs
    may run beside it)."""
    return zfs_processes_naming(*[p.name for p in pools], *([f":{port}"] if port else []))


def test_a_port_taken_before_the_listener_stops_the_job_and_gets_nothing(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process binds the port between the pick and the listener's start (this test,
    on purpose): the job stops with an error naming that process, the sender never starts,
    and not one connection reaches the squatter."""
    src_pool, dst_pool = pools
    ds = _dataset(src_pool)
    src, dst = lab_hosts
    squatter = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    squatter.bind(("0.0.0.0", 0))  # noqa: S104 - the lab's destination listens on all addresses
    squatter.listen(8)
    busy = squatter.getsockname()[1]
    monkeypatch.setattr(job_decide, "free_port", lambda host, **kw: busy)
    seen: list[object] = []
    try:
        with pytest.raises(TransferError) as info:
            Job(src, dst, Request(f"{ds}@s", f"{dst_pool.name}/squatted",
                                  Options(buffer_size=16 * MiB)), seen.append).run()
        squatter.setblocking(False)
        with pytest.raises(BlockingIOError):
            squatter.accept()  # nobody connected: the sender never started
    finally:
        squatter.close()
    err = info.value
    assert f"port {busy} on lab-dst is held by process {os.getpid()}" in err.message, err.message
    assert err.host == "lab-dst" and err.fix is not None and "--port" in err.fix
    assert not any(isinstance(e, StageChanged) and e.stage == "sending" for e in seen)
    assert not any(isinstance(e, StageChanged) and "was taken" in e.detail for e in seen)
    assert not dataset_exists(f"{dst_pool.name}/squatted")
    assert wait_until(lambda: not _leftovers(pools, busy), 10), _leftovers(pools, busy)


@pytest.mark.parametrize("transport", [Transport.TCP, Transport.PRIVATE])
def test_a_rejected_stranger_is_not_advised(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool], transport: Transport,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The sender is held back (its line sleeps a minute first), so only the connect deadline
    can end the step; a stranger connects meanwhile and is rejected (tcp: by address; private:
    by its failed handshake). The job fails on what really happened (the sender reached
    nobody) within the deadline - the stranger's connection does not disarm it (private: its
    port stops listening for the stranger too) - and never offers the stranger
    --allow-address."""
    src_pool, dst_pool = pools
    ds = _dataset(src_pool)
    src, dst = lab_hosts
    stranger_sent: list[str] = []
    spawn = StepRunner._spawn

    def held_back(runner: StepRunner, host: Host, line: str, *args: Any, **kw: Any) -> Any:
        return spawn(runner, host, ("sleep 60; " + line) if host is src else line, *args, **kw)

    monkeypatch.setattr(StepRunner, "_spawn", held_back)

    def observe(event: object) -> None:
        if isinstance(event, StageChanged) and event.stage == "sending" and not stranger_sent:
            port = job.plan.port if job.plan else None
            assert port is not None
            # From the lab's eth0 address: not the 127.0.0.1 the listener accepts.
            try:
                with socket.create_connection(("192.0.2.2", port), timeout=5) as s:
                    s.sendall(b"forged" * 1000)
            except OSError:
                pass  # rejected: closed under its feet
            stranger_sent.append("192.0.2.2")

    options = Options(transport=transport, buffer_size=16 * MiB, allow_address="127.0.0.1")
    job = Job(src, dst, Request(f"{ds}@s", f"{dst_pool.name}/unreached", options), observe)
    t0 = time.monotonic()
    with pytest.raises(TransferError) as info:
        job.run()
    took = time.monotonic() - t0
    err = info.value
    assert stranger_sent
    assert took < 40, took  # the 10 s deadline, not the held-back sender's minute
    assert "--allow-address" not in (err.fix or ""), (err.message, err.fix)
    assert "rejected the connection" not in err.message, err.message
    assert "could not reach the destination's listener" in err.message, err.message
    assert err.remedies == (Remedy.UNREACHABLE,), (err.message, err.fix)
    assert not dataset_exists(f"{dst_pool.name}/unreached")
    port = job.plan.port if job.plan else None
    assert wait_until(lambda: not _leftovers(pools, port), 10), _leftovers(pools, port)


def _squat(port: int, got: list[socket.socket], seconds: float = 30.0) -> None:
    """Bind `port` on all addresses as soon as nobody listens on it, and listen."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("0.0.0.0", port))  # noqa: S104 - where the lab's listener listens
        except OSError:
            s.close()
            time.sleep(0.0005)
            continue
        s.listen(8)
        got.append(s)
        return


def _stranger_then_squatter(port: int, squatter: list[threading.Thread],
                            squatted: list[socket.socket]) -> None:
    """A squatter binding `port` as soon as it is free (in `squatter`, its socket in
    `squatted`), then a stranger's connection that sends no handshake: the listener refuses
    it, and lets the port go to listen again."""
    squatter.append(threading.Thread(target=_squat, args=(port, squatted)))
    squatter[0].start()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        try:
            s.sendall(b"forged" * 1000)
            s.recv(1)
        except OSError:
            pass  # refused: its handshake failed


def _squatter_got_nothing(squatter: list[threading.Thread], squatted: list[socket.socket],
                          said: str) -> None:
    """The squatter took the port (`said`: the run's error, for the assertion) and not one
    connection reached it."""
    for thread in squatter:
        thread.join(40)
    assert squatted, ("the squatter never got the port", said)
    squatted[0].setblocking(False)
    with pytest.raises(BlockingIOError):
        squatted[0].accept()  # nobody connected to it


@pytest.mark.parametrize("listener", ["socat", "openssl"])
def test_a_port_taken_as_the_private_listener_starts_again_stops_the_job_naming_its_holder(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool], listener: str,
        monkeypatch: pytest.MonkeyPatch, keys_left: Callable[[], list[str]]) -> None:
    """A stranger's connection fails its handshake, and in the instant the private listener
    lets the port go to listen again another process takes it (this test, binding in a tight
    loop). The job stops with an error naming that process, as the first check does, rather
    than moving to another port; the squatter gets no connection, and no key is left."""
    from zmigrate.engine.transports import private

    src_pool, dst_pool = pools
    ds = _dataset(src_pool)
    src, _dst = lab_hosts
    monkeypatch.setattr(private.Private, "end_tools", lambda self, spec: ("socat", listener))
    spawn = StepRunner._spawn

    def held_back(runner: StepRunner, host: Host, line: str, *args: Any, **kw: Any) -> Any:
        return spawn(runner, host, ("sleep 60; " + line) if host is src else line, *args, **kw)

    monkeypatch.setattr(StepRunner, "_spawn", held_back)
    squatted: list[socket.socket] = []
    squatter: list[threading.Thread] = []

    def observe(event: object) -> None:
        if isinstance(event, StageChanged) and event.stage == "sending" and not squatter:
            port = job.plan.port if job.plan else None
            assert port is not None
            _stranger_then_squatter(port, squatter, squatted)

    job = Job(src, _dst, Request(f"{ds}@s", f"{dst_pool.name}/relisten",
                                 Options(transport=Transport.PRIVATE, buffer_size=16 * MiB)),
              observe)
    t0 = time.monotonic()
    try:
        with pytest.raises(TransferError) as info:
            job.run()
        took = time.monotonic() - t0
        _squatter_got_nothing(squatter, squatted, info.value.message)
    finally:
        for s in squatted:
            s.close()
    err = info.value
    port = job.plan.port if job.plan else None
    assert f"port {port} on lab-dst is held by process {os.getpid()}" in err.message, err.message
    assert "started again after a connection that did not prove" in err.message, err.message
    assert err.remedies == (Remedy.PORT_HELD,), (err.message, err.remedies)
    assert took < 40, took  # stopped at once, not the held-back sender's minute
    assert not dataset_exists(f"{dst_pool.name}/relisten")
    assert wait_until(lambda: not _leftovers(pools, port), 10), _leftovers(pools, port)
    assert wait_until(lambda: not keys_left(), 10), keys_left()


@pytest.mark.parametrize("listener", ["socat", "openssl"])
def test_a_port_taken_as_the_doctors_tls_listener_starts_again_names_its_holder(
        lab_hosts: tuple[Host, Host], listener: str, monkeypatch: pytest.MonkeyPatch,
        keys_left: Callable[[], list[str]]) -> None:
    """The doctor's private (TLS) stage, as a job: a stranger's connection fails its
    handshake, and in the instant the stage's listener lets the port go to listen again this
    test takes it. The stage fails naming this process and the re-listen, not with "address
    in use" alone; the squatter gets no connection, and no process or key is left."""
    from zmigrate.engine.doctor import links
    from zmigrate.engine.doctor.measure import Measurer

    src, dst = lab_hosts
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(links, "_tls_tool", lambda caps: listener)
    spawn = Measurer.spawn
    squatted: list[socket.socket] = []
    squatter: list[threading.Thread] = []

    def held_back(measurer: Measurer, host: Host, pipeline: str) -> Any:
        if host is not src:
            return spawn(measurer, host, pipeline)
        # The listener holds its port now: a stranger first, then the sender, a minute late.
        _stranger_then_squatter(port, squatter, squatted)
        return spawn(measurer, host, "sleep 60; " + pipeline)

    monkeypatch.setattr(Measurer, "spawn", held_back)
    t0 = time.monotonic()
    try:
        report = Doctor(src, dst, seconds=20, write_test=False, ssh_test=False, stages=["tls"],
                        options=Options(port=port, transport=Transport.PRIVATE)).run()
        took = time.monotonic() - t0
        _squatter_got_nothing(squatter, squatted, "")
    finally:
        for sq in squatted:
            sq.close()
    tls = next(s for s in report.stages if s.name == "tls")
    error = tls.error or ""
    assert f"port {port} on lab-dst is held by process {os.getpid()}" in error, error
    assert "started again after a connection that did not prove" in error, error
    assert tls.rate is None
    assert took < 20, took  # stopped at once, not after the stage's time or the held sender
    assert wait_until(lambda: doctor_processes(report.run_id) == [], 10), \
        doctor_processes(report.run_id)
    assert wait_until(lambda: not keys_left(), 10), keys_left()


def test_the_doctors_wire_stages_on_a_taken_port_name_its_holder_and_send_it_nothing(
        lab_hosts: tuple[Host, Host]) -> None:
    """The doctor's network (mbuffer) and private (TLS) stages check their listener as a job
    does: on a port another process holds, each stage fails naming that process, its sender
    never starts, and not one connection reaches the squatter."""
    src, dst = lab_hosts
    squatter = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    squatter.bind(("0.0.0.0", 0))  # noqa: S104 - the lab's destination listens on all addresses
    squatter.listen(8)
    busy = squatter.getsockname()[1]
    try:
        report = Doctor(src, dst, seconds=1, write_test=False, ssh_test=False,
                        stages=["network", "tls"],
                        options=Options(port=busy, transport=Transport.PRIVATE)).run()
        squatter.setblocking(False)
        with pytest.raises(BlockingIOError):
            squatter.accept()  # nobody connected: no sender started
    finally:
        squatter.close()
    by = {s.name: s for s in report.stages}
    for name in ("network", "tls"):
        error = by[name].error or ""
        assert f"port {busy} on lab-dst is held by process {os.getpid()}" in error, (name, error)
        assert by[name].rate is None
    assert wait_until(lambda: doctor_processes(report.run_id) == [], 10), \
        doctor_processes(report.run_id)
