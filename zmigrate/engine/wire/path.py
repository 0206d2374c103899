"""Both hosts' sides of the path, read at once, and the ceiling they make (`Wire`): the doctor
reads it beside its stages, a job in its preflight, `list` for its host lines."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from .. import cmdline
from ..errors import ZmigrateError
from ..events import Observer, Wire
from ..hosts import Host
from .ceiling import ceiling
from .parse import parse_link
from .reading import LinkReading
from .script import wire_script

READ_TIMEOUT = 60.0  # a bisected path MTU over a lossy path takes a dozen seconds


class WireSeen:
    """An observer that keeps the last `Wire` a job emitted, for observers that come later."""

    def __init__(self) -> None:
        self.wire: Wire | None = None

    def __call__(self, event: object) -> None:
        if isinstance(event, Wire):
            self.wire = event

    def feed(self, observer: Observer) -> None:
        if self.wire is not None:
            observer(self.wire)


def read_side(host: Host, peer: str, *, probe_mtu: bool = True) -> LinkReading:
    """`host`'s side of the path to `peer` (an address, validated): one remote script. What
    it cannot read (the host is unreachable too) is unknown, never an error."""
    line = cmdline.join(["sh", "-c", wire_script(peer, probe_mtu=probe_mtu)])
    try:
        r = host.run(line + " </dev/null", timeout=READ_TIMEOUT)
    except ZmigrateError:
        return LinkReading(host.label, peer)
    return parse_link(r.stdout, host.label, peer)


def toward_us(host: Host, ssh_client_ip: str | None) -> LinkReading | None:
    """`host`'s side of the path toward this computer (where zmigrate's ssh comes from), read
    without probing the path MTU: for a host line (`list`, the Hosts page). None for this
    computer itself, or where the host could not say where we come from."""
    if host.is_local or not ssh_client_ip:
        return None
    side = read_side(host, ssh_client_ip, probe_mtu=False)
    return side if side.iface and not side.local else None


def read_wire(src: Host, dst: Host, dst_address: str, src_address: str | None, *,
              probe_mtu: bool = True) -> Wire:
    """Both sides at once: the source's route to `dst_address` (where it connects), the
    destination's to `src_address` (the source as it sees it; None: the destination's side
    is unknown)."""
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="zmigrate-wire") as pool:
        a = pool.submit(read_side, src, dst_address, probe_mtu=probe_mtu)
        b = pool.submit(read_side, dst, src_address, probe_mtu=probe_mtu) \
            if src_address else None
        source = a.result()
        destination = b.result() if b is not None else LinkReading(dst.label, "")
    return Wire(source, destination, ceiling(source, destination))
