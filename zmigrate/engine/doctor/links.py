"""The doctor's link stages: the network (tcp, mbuffer to mbuffer) and ssh (each cipher)."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from .. import cmdline
from ..errors import ZmigrateError
from ..findings import Note, NoteKind
from ..hosts import key_dirs
from ..job.step import free_port, resent_watch
from ..readings import iface_loss, tcp_resent
from ..transports import carrier, private, tls_ends
from ..transports.route import SshRoute, diagnose
from ..transports.tcp import address_port
from ..wire import Wire, read_wire
from .measure import DOCTOR_ENV, mbuffer_argv
from .results import StageResult

if TYPE_CHECKING:
    from ..zfs import Capabilities
    from .context import StageContext

SSH_PROBE_TIMEOUT = 30.0


def network_stage(doctor: StageContext) -> StageResult:
    """mbuffer to mbuffer over tcp, from /dev/zero to /dev/null: the network alone."""
    title = "network (tcp, mbuffer)"
    in_path = carrier(doctor.transport).doctor_stage == "network"
    try:
        connect, allow = doctor.job().addresses()
        connect = doctor.options.connect_address or connect
        allow = doctor.options.allow_address or allow
        port = doctor.options.port or free_port(doctor.dst)
    except ZmigrateError as exc:
        return StageResult("network", title, None, 0.0, 0, in_path, error=exc.message)
    listen = address_port(allow, port) if allow else str(port)
    receiver = cmdline.join(mbuffer_argv("-I", listen, "-o", "/dev/null"))
    sender = cmdline.join(mbuffer_argv("-i", "/dev/zero", "-O", address_port(connect, port)))
    # The sender's TCP counters and both ends' interfaces, before and after.
    ends = resent_watch.interface_ends(doctor.src, doctor.dst, (connect, allow))
    _, before = resent_watch.read(doctor.src)
    interfaces = resent_watch.read_interfaces(ends)
    result = doctor.measurer.measure("network", title, in_path,
                                     [(doctor.dst, receiver), (doctor.src, sender)], 0,
                                     listen_port=port, details={"port": port, "connect": connect})
    system, after = resent_watch.read(doctor.src)
    resent = tcp_resent.between(before, after)
    if resent is None or result.error is not None:
        return result
    losses = [loss for (host, _), was, now in zip(ends, interfaces,
                                                  resent_watch.read_interfaces(ends), strict=True)
              if (loss := iface_loss.between(host.label, was, now)) is not None]
    notes = [Note(NoteKind.RESENT, {"host": doctor.src.label, "sent": resent.sent,
                                    "again": resent.again, "share": resent.share,
                                    "system": system, "ifaces_read": len(losses)})]
    notes += [Note(NoteKind.IFACE_LOSS, {"host": x.host, "iface": x.iface, "frames": x.frames,
                                         "ring": x.ring, "queue": x.queue, "tool": x.tool})
              for x in losses if x.total > 0]
    return dataclasses.replace(result, notes=(*result.notes, *notes))


def _tls_tool(caps: Capabilities | None) -> str:
    """The TLS tool a job would use on a host (openssl where the probe did not answer)."""
    return (tls_ends.tool_for(caps.tools) if caps is not None else None) or tls_ends.OPENSSL


def tls_stage(doctor: StageContext) -> StageResult:
    """The private transport's way, from /dev/zero to /dev/null: each host's TLS tool as a job
    would run it (socat, else openssl s_client / s_server) over the network, with keys made
    for this measurement - the network and both hosts' CPUs at TLS 1.3."""
    title = "network (private: TLS 1.3)"
    in_path = carrier(doctor.transport).doctor_stage == "tls"
    try:
        connect, _ = doctor.job().addresses()
        connect = doctor.options.connect_address or connect
        port = doctor.options.port or free_port(doctor.dst)
        dirs = key_dirs.key_dirs()
        private.CARRIER.hand_keys(doctor.src, doctor.dst, dirs)  # all or nothing
    except ZmigrateError as exc:
        return StageResult("tls", title, None, 0.0, 0, in_path, error=exc.message)
    src_tool, dst_tool = _tls_tool(doctor.src_caps), _tls_tool(doctor.dst_caps)
    # Each end removes its keys on its way out (key_scope), as a job's do.
    # The listener's status is the line's: mbuffer ends well at any end of its input.
    receiver = private.key_scope(dirs[1]) + cmdline.status_of_first(
        tls_ends.server_stage(port, dst_tool), cmdline.join(mbuffer_argv("-o", "/dev/null")))
    sender = (private.key_scope(dirs[0]) + cmdline.join(mbuffer_argv("-i", "/dev/zero"))
              + " | " + tls_ends.client_stage(address_port(connect, port), src_tool))
    try:
        return doctor.measurer.measure("tls", title, in_path,
                                       [(doctor.dst, receiver), (doctor.src, sender)], 0,
                                       listen_port=port,
                                       details={"port": port, "connect": connect,
                                                "tools": [src_tool, dst_tool]})
    finally:
        try:
            private.CARRIER.forget_keys(doctor.src, doctor.dst, dirs)
        except ZmigrateError:
            pass  # gone with the host; the next step's keys have other names


def wire_between(doctor: StageContext) -> Wire | None:
    """Both hosts' sides of the path between them (wire/), None on one machine or where the
    addresses cannot be told."""
    if doctor.dst is doctor.src:
        return None
    try:
        connect, allow = doctor.job().addresses()
    except ZmigrateError:
        return None
    connect = doctor.options.connect_address or connect
    allow = doctor.options.allow_address or allow
    try:
        return read_wire(doctor.src, doctor.dst, connect, allow)
    except ZmigrateError:  # an address that is no address: unknown, not a failed doctor
        return None


def start_wire(doctor: StageContext) -> Callable[[], Wire | None]:
    """`wire_between` in a thread of its own; call the result for its reading."""
    box: list[Wire | None] = []
    thread = threading.Thread(target=lambda: box.append(wire_between(doctor)),
                              name="zmigrate-doctor-wire", daemon=True)
    thread.start()

    def result() -> Wire | None:
        thread.join()
        return box[0] if box else None

    return result


def _ssh_route(doctor: StageContext) -> tuple[str, tuple[str, ...], SshRoute | None]:
    """(target, options, the route they were made from: None when the caller gave them)."""
    if doctor.options.ssh_target:
        return doctor.options.ssh_target, doctor.options.ssh_options, doctor.options.ssh_route
    route = doctor.job().ssh_route()
    target, opts = route.target_and_options()
    return target, opts, route


def ssh_stages(doctor: StageContext) -> Iterator[StageResult]:
    """/dev/zero through ssh from the source into `cat` on the destination: ssh's default
    cipher and the fast ones, each a row."""
    in_path_default = carrier(doctor.transport).source_ssh
    target, opts, route = _ssh_route(doctor)
    base = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", *opts]
    probe = doctor.src.run(cmdline.join([*base, target, "true"]) + " </dev/null",
                         timeout=SSH_PROBE_TIMEOUT)
    if not probe.ok:
        lines = [x for x in probe.stderr.strip().splitlines() if x.strip()]
        reason = lines[-1] if lines else f"exit {probe.status}"
        # Through jump hosts the last line is the outer ssh's; which hop failed, and why,
        # takes a login to each in turn.
        failure = diagnose(doctor.src, route) if route is not None else None
        if failure is not None:
            reason = failure.cause
        yield StageResult("ssh", "ssh from source to destination", None, 0.0, 0,
                          in_path_default, skipped=True,
                          notes=(Note(NoteKind.SSH_UNREACHABLE, {"reason": reason}),),
                          details={"target": target})
        return
    remote = cmdline.join(["env", f"{DOCTOR_ENV}={doctor.run_id}", "cat"]) + " > /dev/null"
    for cipher in (None, *doctor.ciphers):
        if doctor.cancelled:
            break
        cipher_args = ["-c", cipher] if cipher else []
        line = cmdline.pipe(cmdline.join(mbuffer_argv("-i", "/dev/zero")),
                          cmdline.join([*base[:1], *cipher_args, *base[1:], target, remote]))
        name = f"ssh_{cipher or 'default'}"
        title = f"ssh, {cipher or 'default cipher'}"
        yield doctor.measurer.measure(name, title, in_path_default and cipher is None,
                            [(doctor.src, line)], 0, details={"cipher": cipher, "target": target})
