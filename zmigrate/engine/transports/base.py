"""The interface every transport implements, and what a step gives it to build its ends.

A `Carrier` says how one way of carrying the stream differs from the others: which host
receives, the commands of each end, whether the destination listens on a port, whether this
computer relays the bytes, how the way is described and advised on. The planner, the step
runner, the job, the verdict and the doctor ask the carrier; none of them branches on which
transport it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, ClassVar, Protocol

from .. import cmdline
from ..findings import Advice, AdviceKind, Figure, Finding
from ..remedies import PlanWarning
from .compress import Compressor

if TYPE_CHECKING:
    from ..hosts import Host
    from ..hosts.tools import HostTools
    from ..zfs import Capabilities
    from .route import SshRoute


class RouteOptions(Protocol):
    """What a carrier reads of a plan's options (`plan.Options`): where the source's own ssh
    goes. A protocol, so this room needs nothing of the planner that uses it."""

    @property
    def ssh_target(self) -> str | None: ...

    @property
    def ssh_route(self) -> SshRoute | None: ...


class PlanFacts(Protocol):
    """What a carrier reads of a plan (`plan.Plan`): its port and its options."""

    @property
    def port(self) -> int | None: ...

    @property
    def options(self) -> RouteOptions: ...


class Transport(str, Enum):
    """How the stream travels from the source to the destination."""

    TCP = "tcp"  # mbuffer -O on the source to mbuffer -I on the destination (cleartext)
    SSH = "ssh"  # the source host's own ssh to the destination
    LOCAL = "local"  # both ends on one host, no network
    # Through this computer: the source's stream comes up its control session and goes down
    # the destination's, so hosts that cannot reach each other still migrate (encrypted twice).
    RELAY = "relay"
    # tcp's direct way, encrypted and authenticated with keys made for the job (TLS 1.3).
    PRIVATE = "private"


@dataclass(frozen=True, slots=True)
class StreamSpec:
    """What one step's ends are made of: the zfs commands and the buffers around the wire."""

    send: list[str]  # zfs send argv, run on the source
    receive: list[str]  # zfs receive argv, built for the carrier's receiving host
    block: int
    source_buffer: int
    destination_buffer: int
    hash: bool  # both mbuffers compute the stream's md5
    rate_limit: int | None = None
    connect_address: str | None = None  # tcp: where the source connects
    allow_address: str | None = None  # tcp: the only sender the listener accepts
    port: int | None = None  # tcp: the listener's port
    ssh_target: str = ""  # ssh: the destination as the source's ssh names it
    ssh_options: tuple[str, ...] = ()
    # Compression in transit (transports/compress.py): None sends the stream as it is.
    compress: Compressor | None = None
    # (source's, destination's) tools as probed: a carrier picks each end's tool by them.
    tools: tuple[HostTools, HostTools] | None = None

    def source_side(self, source_mbuffer: list[str], *after: str) -> str:
        """`zfs send [| compressor] | mbuffer [| after...]`: the source's mbuffer buffers what
        crosses the wire, compressed or not."""
        stages = [cmdline.join(self.send)]
        if self.compress is not None:
            stages.append(cmdline.join(self.compress.compress))
        return cmdline.pipe(*stages, cmdline.join(source_mbuffer), *after)

    def receive_side(self, destination_mbuffer: list[str], *before: str,
                     status_to: str = "") -> str:
        """`[before... |] [decompressor |] mbuffer | zfs receive`: the destination's mbuffer
        feeds `zfs receive` the stream as sent, and counts its bytes (progress); `status_to`
        redirects the mbuffer's stderr (its status lines)."""
        stages = list(before)
        if self.compress is not None:
            stages.append(cmdline.join(self.compress.decompress))
        mb = cmdline.join(destination_mbuffer) + (f" {status_to}" if status_to else "")
        return cmdline.pipe(*stages, mb, cmdline.join(self.receive))


@dataclass(frozen=True, slots=True)
class Ends:
    """The shell line each host runs for a step."""

    source: str
    destination: str | None  # None where the source's pipeline carries the receive
    # ssh: a word of the receive's shell line that names its processes on the destination
    # (their process group is not ours); its mbuffer reports on the sender's stdout.
    receive_mark: str | None = None
    # (source's, destination's) directory of the step's keys, handed over before it runs.
    keys: tuple[str, str] | None = None


class Carrier:
    """One transport. Subclasses set the class attributes and build `ends`."""

    transport: ClassVar[Transport]
    # Two hosts, an mbuffer on each; False: one pipeline on the source reports for both sides.
    two_ends: ClassVar[bool] = True
    # The destination listens on a TCP port that the source connects to.
    listens: ClassVar[bool] = False
    # The listener's only guard is the source's address (--allow-address): without it any
    # host that reaches the port feeds `zfs receive` (a TLS listener proves its peer instead).
    guarded_by_address: ClassVar[bool] = False
    # The source's own ssh logs in to the destination (a route of jump hosts, options).
    source_ssh: ClassVar[bool] = False
    # This computer writes the sender's stdout into the receiver's stdin.
    relays: ClassVar[bool] = False
    # The doctor's stage that measures this way of carrying the stream ("" for none).
    doctor_stage: ClassVar[str] = ""
    # The stream crosses a link between two hosts, so compressing it in transit can pay.
    crosses_link: ClassVar[bool] = True
    # How a verdict names what carries the stream between the two buffers.
    link_words: ClassVar[str] = "the network"
    # The programs of this way's own ends whose CPU can set the stream's pace: their share of
    # their host's CPU is read while a step streams (job/step/end_cpu.py); none for a bare wire.
    cpu_ends: ClassVar[tuple[str, ...]] = ()

    def receiving_host(self, src: Host, dst: Host) -> Host:
        """The host that runs `zfs receive`."""
        return dst if self.two_ends else src

    def check(self, dst: Host, dst_caps: Capabilities) -> None:
        """Refuse (PreflightError) what this transport cannot do with these hosts."""

    def check_source(self, src: Host, src_caps: Capabilities) -> None:
        """Refuse (PreflightError) what this transport cannot do with this source."""

    def hand_keys(self, src: Host, dst: Host, dirs: tuple[str, str]) -> None:
        """Before a step whose ends name key directories (`Ends.keys`): make its keys and
        hand each end its own over the host's control session."""

    def forget_keys(self, src: Host, dst: Host, dirs: tuple[str, str]) -> None:
        """After such a step whose ends did not all run to their end (those that did removed
        their own): remove what is left of its keys on both hosts."""

    def notes(self, options: RouteOptions, dst_label: str) -> list[PlanWarning]:
        """What the plan should say about this transport's choices (warnings)."""
        return []

    def describe(self, plan: PlanFacts) -> str:
        """How the stream goes, as the plan's paragraph says it."""
        raise NotImplementedError

    def ends(self, spec: StreamSpec) -> Ends:
        """The commands of both ends for one step."""
        raise NotImplementedError

    def sender_label(self, plan: PlanFacts, dst_label: str) -> str:
        """How errors name the sending end."""
        return "the sender"

    def listener_line(self, line: str, port: int | None) -> str:
        """The destination's line as started (tcp adds its readiness probe)."""
        return line

    def stall_path(self, plan: PlanFacts, src: str, dst: str) -> dict[str, Figure]:
        """How a stall verdict names the way between the hosts when it carries nothing: the
        figures `path` (this transport's name) and what that way is made of; {} for none."""
        return {}

    def stalled_words(self, f: Finding) -> str:
        """Where the stream stopped when this way carries nothing (a `stalled` finding with
        the figures of `stall_path`)."""
        return "nothing crosses the way between the hosts"

    def network_advice(self) -> tuple[Advice, ...]:
        """What to try when the verdict finds the way between the hosts slow."""
        return tuple(Advice(k) for k in WIRE_ADVICE)

    def cpu_advice(self) -> tuple[Advice, ...]:
        """What to try when one of `cpu_ends` is held by its CPU, not by its link."""
        return (Advice(AdviceKind.TRANSPORT_CPU),)


WIRE_ADVICE = (AdviceKind.JUMBO_FRAMES, AdviceKind.NIC_RINGS, AdviceKind.TRANSPORT_CPU,
               AdviceKind.RUN_DOCTOR)
CIPHER = "aes128-gcm@openssh.com"  # the fast cipher the live verdict suggests (field notes)
