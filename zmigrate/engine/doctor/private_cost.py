"""What the private transport costs on this path: the doctor's prediction, beside tcp's.

The tls and network stages each carry /dev/zero between the same hosts, mbuffer at both ends;
their own processes' CPU (`own_cpu`, a stage's process groups only) over the bytes they
carried is each end's CPU a byte, and the difference is what TLS adds on each host. A transfer
over tcp runs at the slowest of the source's read, the network and the destination's write
(and what the cores allow with all of them at once); over private, each byte also costs that
extra CPU on its machine - spread over its cores, one machine counted once where both hosts
are one - and it runs no faster than the tls stage alone.
"""

from __future__ import annotations

from ..units import GiB
from .compress import Machines, cpu_limit
from .results import PrivateCost, StageResult

TCP_PATH = ("source_read", "network", "destination_write")


def _per_byte(stage: StageResult, host: str) -> float | None:
    """The stage's own CPU seconds a byte on `host`."""
    own = stage.details.get("own_cpu")
    used = own.get(host) if isinstance(own, dict) else None
    return used / stage.bytes if isinstance(used, float) and stage.bytes > 0 else None


def _cores(stage: StageResult, host: str) -> int | None:
    return next((h.cores for h in stage.cpu if h.host == host and h.cores), None)


def private_cost(stages: list[StageResult], machines: Machines) -> PrivateCost | None:
    """The prediction; None unless both the tls and the network stage ran with their CPU."""
    by = {s.name: s for s in stages if s.rate}
    tls, net = by.get("tls"), by.get("network")
    if tls is None or net is None or tls.rate is None:
        return None
    extra: dict[str, float] = {}
    for host in dict.fromkeys((machines.source, machines.destination)):
        with_tls, without = _per_byte(tls, host), _per_byte(net, host)
        if with_tls is None or without is None:
            return None
        extra[host] = max(0.0, with_tls - without)
    path = [by[n] for n in TCP_PATH if n in by]
    tcp = min(s.rate or 0.0 for s in path)
    limit = cpu_limit(path, machines, False)
    if limit is not None:
        tcp = min(tcp, limit)
    # Seconds a byte the extra CPU takes where it binds: on the machine's cores.
    if machines.shared:
        cores = _cores(tls, machines.source) or 1
        added = sum(extra.values()) / cores
    else:
        added = max(extra[h] / (_cores(tls, h) or 1) for h in extra)
    private = min(1.0 / (1.0 / tcp + added), tls.rate) if tcp > 0 else 0.0
    return PrivateCost(tcp, private, {h: round(x * GiB, 2) for h, x in extra.items()})


__all__ = ["PrivateCost", "private_cost"]
