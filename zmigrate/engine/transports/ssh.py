"""ssh: the source host's own ssh carries the stream to the destination (encrypted).

Works wherever the source can log in to the destination (jump hosts included, the way this
computer's ~/.ssh/config takes); the cipher costs a core at high rates. Only the source's
pipeline is watched: the receiving mbuffer's status lines come back on its ssh's stdout (the
remote shell's stdout as fd 3, while the mbuffer's own stdout feeds `zfs receive`), so no file
is written on the destination for them (a fixed-name log in /tmp was a symlink target).
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, ClassVar

from .. import cmdline
from ..findings import Advice, AdviceKind, Figure, Finding
from ..readings import mbuffer
from ..readings.end_cpu import SSHD
from ..remedies import Caveat, PlanWarning, Remedy
from .base import CIPHER, Carrier, Ends, StreamSpec, Transport

if TYPE_CHECKING:
    from .base import PlanFacts, RouteOptions


RECEIVE_MARK = "zmigrate-receive-"


class Ssh(Carrier):
    transport: ClassVar[Transport] = Transport.SSH
    source_ssh: ClassVar[bool] = True
    doctor_stage: ClassVar[str] = "ssh"
    link_words: ClassVar[str] = "SSH"
    # The source's ssh encrypts the stream, the destination's sshd decrypts it (found above
    # the receive's mark: it is not in a group of ours).
    cpu_ends: ClassVar[tuple[str, ...]] = ("ssh", *SSHD)

    def notes(self, options: RouteOptions, dst_label: str) -> list[PlanWarning]:
        route = options.ssh_route
        if route is not None and route.proxied and not route.user_routed:
            return [Caveat(f"this computer reaches {dst_label} through a ProxyCommand, which "
                           "runs here and cannot be carried to the source: the source's ssh "
                           f"connects to {route.target.label} directly", (Remedy.RELAY,))]
        return []

    def describe(self, plan: PlanFacts) -> str:
        route = plan.options.ssh_route
        via = (" via the jump host(s) " + ", ".join(j.label for j in route.jumps)
               if route and route.jumps else "")
        return "through the source host's ssh to the destination" + via

    def ends(self, spec: StreamSpec) -> Ends:
        mark = f"{RECEIVE_MARK}{secrets.token_hex(6)}"
        # Only the source's pipeline is watched: a dead ssh or a failed receive must end
        # both mbuffers at once (-e), not after the rest of the stream.
        dst_mb = mbuffer.command(spec.block, spec.destination_buffer, hash_=spec.hash,
                                 stop_on_error=True)
        # In sh whatever the login shell (csh has no fd 3); the mark names its processes.
        inner = f": {mark}; exec 3>&1; " + spec.receive_side(dst_mb, status_to="2>&3")
        ssh_argv = ["ssh", "-o", "BatchMode=yes", *spec.ssh_options, spec.ssh_target,
                    cmdline.join(["sh", "-c", inner])]
        src_mb = mbuffer.command(spec.block, spec.source_buffer, hash_=spec.hash,
                                 rate=spec.rate_limit, stop_on_error=True)
        return Ends(spec.source_side(src_mb, cmdline.join(ssh_argv)), None, mark)

    def sender_label(self, plan: PlanFacts, dst_label: str) -> str:
        # Its exit status is the ssh's: a killed ssh or a lost connection shows here.
        return f"the sender (through ssh to {plan.options.ssh_target or dst_label})"

    def stall_path(self, plan: PlanFacts, src: str, dst: str) -> dict[str, Figure]:
        # The source's own ssh session to the destination (through its jump hosts, if any).
        return {"path": self.transport.value, "source": src,
                "destination": plan.options.ssh_target or dst}

    def stalled_words(self, f: Finding) -> str:
        return (f"the source's ssh to {f.word('destination')} carries nothing from "
                f"{f.word('source')} — the link, a firewall, or that ssh connection hangs")

    def cpu_advice(self) -> tuple[Advice, ...]:
        return (Advice(AdviceKind.USE_TCP), Advice(AdviceKind.TRY_CIPHER, {"cipher": CIPHER}))

    def network_advice(self) -> tuple[Advice, ...]:
        return (*self.cpu_advice(), *super().network_advice())


CARRIER = Ssh()
