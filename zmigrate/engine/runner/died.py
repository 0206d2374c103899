"""What a job whose runner died left on its hosts, by the existing leftover scan
(hosts/leftovers.py): the tagged process groups that name the job's destination."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ZmigrateError
from ..hosts import leftovers
from ..hosts.login import HostSpec, Prompts, connect
from .state import Status


@dataclass(frozen=True, slots=True)
class Left:
    """On `host`: the leftover groups found (empty: none), or why it could not look."""

    host: str
    found: tuple[leftovers.Leftover, ...] = ()
    error: str = ""


def left_on_hosts(s: Status) -> list[Left]:
    """Each of the job's hosts, what the runner left there that names its destination."""
    req = s.request
    destination = str(req.get("destination", ""))
    if not destination:
        return []
    out = []
    seen = set()
    for key, sudo in (("destination_host", "sudo_destination"), ("source_host", "sudo_source")):
        host_text = str(req.get(key, "local"))
        if host_text in seen:
            continue
        seen.add(host_text)
        out.append(_scan(host_text, bool(req.get(sudo)), destination))
    return out


def _scan(host_text: str, sudo: bool, destination: str) -> Left:
    try:
        host = connect(HostSpec.parse(host_text, sudo=sudo), Prompts())
    except ZmigrateError as exc:
        return Left(host_text, error=exc.message)
    try:
        return Left(host.label, leftovers.read(host, destination, ports=False).leftovers)
    except ZmigrateError as exc:
        return Left(host.label, error=exc.message)
    finally:
        host.close()
