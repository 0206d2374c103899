"""Cutting lab-far's link the way a pulled cable or a dead uplink does, and bringing it back.

- `dead()`: this machine's end of the veth pair goes down (`ip link set ... down`). This machine
  has no route to lab-far any more; lab-far only loses carrier, so its packets vanish as on a
  real cut (its kernel neither fails them nor tells anyone): its sessions and processes keep
  running, retransmitting into the void.
- `back()`: the link comes up again, and new connections pass. The connections that were open
  across the cut stay dropped on this machine's side (`htb` + `u32` into a class whose
  `pfifo limit 0` drops every packet; `tc netem` and tc actions do not exist here), as behind a
  NAT or a stateful firewall that has forgotten them - the usual way a long outage ends. Their
  far ends then never get a reset, so what they left running stays running until something
  stops it: the case a later run must handle, and no race with lab-far's retransmissions.

Drops are only ever made on this machine's side: a packet dropped by lab-far's own qdisc is
reported to its TCP, which then gives up within seconds - no real cut does that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .netns import IP
from .shaped import TC, ShapedLab
from .util import run


@dataclass
class LinkCut:
    far: ShapedLab
    flows: list[tuple[int, int]] = field(default_factory=list)  # (far port, near port) dropped

    def install(self) -> None:
        """The htb on this machine's end, passing everything (lab-far's shaping is replaced)."""
        dev = self.far.near_link
        run([TC, "qdisc", "del", "dev", dev, "root"], check=False, timeout=30)
        run([TC, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10"],
            timeout=30)
        for cls in ("1:10", "1:20"):
            run([TC, "class", "add", "dev", dev, "parent", "1:", "classid", cls, "htb", "rate",
                 "10gbit"], timeout=30)
        run([TC, "qdisc", "add", "dev", dev, "parent", "1:20", "handle", "20:", "pfifo",
             "limit", "0"], timeout=30)

    def dead(self) -> None:
        """This machine's end of the link goes down."""
        run([IP, "link", "set", self.far.near_link, "down"], timeout=30)

    def open_flows(self) -> list[tuple[int, int]]:
        """(lab-far's port, this machine's port) of every TCP connection lab-far still has
        with this machine."""
        near = f"{self.far.net}.1"
        out = run([IP, "netns", "exec", self.far.namespace, "ss", "-Htn"], timeout=30).stdout
        flows = []
        for line in out.splitlines():
            fields = line.split()
            if len(fields) >= 5 and fields[4].startswith(near + ":"):
                local = re.search(r":(\d+)$", fields[3])
                peer = re.search(r":(\d+)$", fields[4])
                if local and peer:
                    flows.append((int(local.group(1)), int(peer.group(1))))
        return flows

    def back(self) -> None:
        """The link comes up; what this machine sends on the connections open across the cut
        (their retransmissions, the resets for them) stays dropped."""
        self.flows = self.open_flows()
        for far_port, near_port in self.flows:
            run([TC, "filter", "add", "dev", self.far.near_link, "parent", "1:", "protocol",
                 "ip", "prio", "1", "u32", "match", "ip", "sport", str(near_port), "0xffff",
                 "match", "ip", "dport", str(far_port), "0xffff", "flowid", "1:20"],
                timeout=30)
        run([IP, "link", "set", self.far.near_link, "up"], timeout=30)

    def remove(self) -> None:
        """Everything passes again; lab-far's shaping is the caller's to restore."""
        run([IP, "link", "set", self.far.near_link, "up"], check=False, timeout=30)
        run([TC, "qdisc", "del", "dev", self.far.near_link, "root"], check=False, timeout=30)
        self.flows.clear()
