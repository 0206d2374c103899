"""private: the direct TCP way of `tcp`, encrypted and authenticated with keys made for one step.

Each end runs its host's TLS tool (tls_ends.py: socat's OPENSSL address where the host has
socat, else `openssl s_server` / `s_client`), TLS 1.3 only (AEAD: AES-GCM, AES-NI accelerated
where the CPU has it, or ChaCha20-Poly1305). Each end has a self-signed certificate made here
for this step (`secrets`-random keys, never written on this computer) and trusts only the
other's: a connection that does not prove the step's client key completes no handshake, so it
gets nothing and gives nothing to `zfs receive`; a squatter on the port cannot prove the server
key, so the source sends it nothing. The keys travel over each host's SSH control session on
stdin into a private directory (mkdir 0700, unguessable name) that the ends remove when they
end - never on a command line (`ps` shows those).

The listener takes one authenticated session: a stranger's failed handshake makes it listen
again, and the sender retries a connection that never completed its handshake (it has read
none of its input then).
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from .. import cmdline
from ..errors import PreflightError, PreflightReason, ZmigrateError
from ..findings import Advice, AdviceKind
from ..hosts import tools as capabilities
from ..hosts.at_once import both
from ..hosts.key_dirs import key_dirs, removal, removal_of, stale_sweep
from ..hosts.tools import HostTools
from ..readings import mbuffer
from .base import Ends, StreamSpec, Transport
from .tcp import WIRE_BLOCKS, Tcp, address_port
from .tls_ends import (
    KEYS,
    MIN_OPENSSL,
    MIN_SOCAT,
    OPENSSL,
    SOCAT,
    client_stage,
    keys_at,
    server_stage,
    tool_for,
)

if TYPE_CHECKING:
    from ..hosts import Host
    from ..zfs import Capabilities
    from .base import PlanFacts


def key_scope(d: str) -> str:
    """An end's line start: its key directory `d` named once (keys_at), and its removal on
    the way out."""
    # TERM/HUP/INT end the shell through EXIT, which removes the keys (a KILL leaves them to
    # the step's own clean-up, StepRunner's `forget_keys`, or a later run's leftover stop). PIPE
    # too: where the session that started it is gone, the shell's own notice that a job was
    # Terminated goes to a closed stderr, and an untrapped PIPE would end it before its EXIT.
    return (f"{keys_at(d)}trap {cmdline.join([removal_of(KEYS)])} EXIT; "
            "trap 'exit 143' HUP INT TERM PIPE; ")


@dataclass(frozen=True, slots=True)
class StepKeys:
    """One step's PEM files: each end's own certificate and key and the peer's certificate."""

    source: dict[str, bytes]
    destination: dict[str, bytes]


def _pair(name: str) -> tuple[bytes, bytes]:
    """A P-256 key and its self-signed certificate (PEM), valid a week either side of now
    (the hosts' clocks may differ from this computer's)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"zmigrate {name}")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=7))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def make_keys() -> StepKeys:
    """Fresh keys for one step: nothing of them outlives it."""
    s_crt, s_key = _pair("receiver")
    c_crt, c_key = _pair("sender")
    return StepKeys({"own.crt": c_crt, "own.key": c_key, "peer.crt": s_crt},
                    {"own.crt": s_crt, "own.key": s_key, "peer.crt": c_crt})


def bundle(files: dict[str, bytes]) -> bytes:
    """The files as one stream for `unpack_line`: a `#zm-file NAME` line before each."""
    return b"".join(b"#zm-file " + n.encode() + b"\n" + data for n, data in files.items())


def unpack_line(d: str) -> str:
    """The remote line that makes `d` (mode 0700, failing if it exists) and writes the bundle
    read on stdin into it, and the FIFO the listener reads; nothing on its command line. Stale
    key directories are swept first (stale_sweep)."""
    q = cmdline.join([d])
    return (f"{stale_sweep()}umask 077; mkdir -m 700 {q} || exit 1; cd {q} || exit 1; "
            "awk '/^#zm-file /{f=$2; next} {print > f}' && mkfifo idle")


class Private(Tcp):
    """tcp's listener, port and stall words, with TLS 1.3 around the wire."""

    transport: ClassVar[Transport] = Transport.PRIVATE
    listens: ClassVar[bool] = True
    guarded_by_address: ClassVar[bool] = False  # the handshake proves the sender's key
    doctor_stage: ClassVar[str] = "tls"
    link_words: ClassVar[str] = "the network (TLS)"
    # The port stops listening for a stranger's connection too (the handshake refuses it
    # after): the ends say when the sender proved its key (tls_ends), the probe does not.
    port_closed_is_sender: ClassVar[bool] = False
    cpu_ends: ClassVar[tuple[str, ...]] = (SOCAT, OPENSSL)

    def cpu_advice(self) -> tuple[Advice, ...]:
        return (Advice(AdviceKind.TLS_SPARED),)

    def network_advice(self) -> tuple[Advice, ...]:
        # The wire's own advice, with the ends' CPU where ssh's and mbuffer's would be: it is
        # what this way adds to the wire.
        return tuple(Advice(AdviceKind.TLS_CPU) if a.kind is AdviceKind.TRANSPORT_CPU else a
                     for a in super().network_advice())

    def check(self, dst: Host, dst_caps: Capabilities) -> None:
        _need_tls(dst, dst_caps)
        if not dst_caps.tools.can_see_listener():
            raise PreflightError(
                "neither ss, netstat nor sockstat is there, so zmigrate cannot tell when the "
                "private listener is up", host=dst.label,
                fix=capabilities.install_hint(dst_caps.system, "sockets"),
                reason=PreflightReason.MISSING_TOOL,
                figures={"tool": "ss", "install": capabilities.install_hint(dst_caps.system,
                                                                            "sockets")})

    def check_source(self, src: Host, src_caps: Capabilities) -> None:
        _need_tls(src, src_caps)

    def describe(self, plan: PlanFacts) -> str:
        return (f"directly over TCP port {plan.port}, private: TLS 1.3 with keys made for "
                "this job, each end proving its own")

    def ends(self, spec: StreamSpec) -> Ends:
        assert spec.connect_address is not None and spec.port is not None
        src_dir, dst_dir = key_dirs()
        src_tool, dst_tool = self.end_tools(spec)
        src_mb = mbuffer.command(spec.block, spec.source_buffer, hash_=spec.hash,
                                 rate=spec.rate_limit)
        tls_out = client_stage(address_port(spec.connect_address, spec.port), src_tool)
        tls_in = server_stage(spec.port, dst_tool)
        if spec.compress is None:
            dst_mb = mbuffer.command(spec.block, spec.destination_buffer, hash_=spec.hash)
            receive = spec.receive_side(dst_mb, tls_in)
        else:
            # As tcp: a small quiet buffer takes the wire before the decompressor.
            wire = mbuffer.command(spec.block, spec.block * WIRE_BLOCKS, hash_=False,
                                   quiet=True)
            dst_mb = mbuffer.command(spec.block, spec.destination_buffer, hash_=spec.hash)
            receive = spec.receive_side(dst_mb, tls_in, cmdline.join(wire))
        return Ends(key_scope(src_dir) + spec.source_side(src_mb, tls_out),
                    key_scope(dst_dir) + receive, keys=(src_dir, dst_dir))

    def end_tools(self, spec: StreamSpec) -> tuple[str, str]:
        """The TLS tool of each end (source's, destination's): its host's best, openssl where
        it was not probed (the check refused a host with neither)."""
        if spec.tools is None:
            return OPENSSL, OPENSSL
        return tool_for(spec.tools[0]) or OPENSSL, tool_for(spec.tools[1]) or OPENSSL

    def hand_keys(self, src: Host, dst: Host, dirs: tuple[str, str]) -> None:
        keys = make_keys()

        def hand(host: Host, d: str, files: dict[str, bytes]) -> None:
            host.run(unpack_line(d), stdin=bundle(files), timeout=60).check(
                "handing over the private transport's keys")

        # Both at once: one round trip before the step's first byte, not two. All or nothing:
        # a host that got its keys when the other refused them gives them back.
        try:
            both(lambda: hand(src, dirs[0], keys.source),
                 lambda: hand(dst, dirs[1], keys.destination))
        except ZmigrateError:
            with contextlib.suppress(ZmigrateError):
                self.forget_keys(src, dst, dirs)
            raise

    def forget_keys(self, src: Host, dst: Host, dirs: tuple[str, str]) -> None:
        both(lambda: src.run(removal(dirs[0]), timeout=15),
             lambda: dst.run(removal(dirs[1]), timeout=15))



def able(tools: HostTools | None) -> bool:
    """Whether a host's probe found socat (with OpenSSL) or OpenSSL 3: the private transport
    is then the default (a host not probed, or probed without these sections, is not)."""
    return tools is not None and tools.probed and tool_for(tools) is not None


def how_to_get(caps: Capabilities) -> str:
    """How the user gets the private transport's tools on a host, in that host's terms."""
    return capabilities.install_hint(caps.system, "tls", truenas=caps.tools.truenas)


def lacking(hosts: Sequence[tuple[str, Capabilities | None]]) -> list[tuple[str, str]]:
    """The hosts whose probe found neither socat (with OpenSSL) nor OpenSSL 3 (the private
    transport's needs), each with how to get them there; a host not probed yet is not
    counted."""
    return [(label, how_to_get(caps)) for label, caps in hosts
            if caps is not None and tool_for(caps.tools) is None]


def cleartext_why(asked: Transport | None, transport: Transport,
                  hosts: Sequence[tuple[str, Capabilities]]) -> str | None:
    """Why a transfer left to its default (`asked` None) goes in cleartext (`transport` tcp),
    naming the hosts that cannot take the private transport; else None."""
    missing = lacking(hosts) if asked is None and transport is Transport.TCP else []
    if not missing:
        return None
    return ("the private transport is the default only where both hosts have socat or OpenSSL "
            "3; " + "; ".join(f"{label} has neither ({hint})" for label, hint in missing))


def not_chosen(asked: Transport | None, transport: Transport,
               hosts: Sequence[tuple[str, Capabilities]]) -> str | None:
    """The plan's note where a transfer left to its default goes in cleartext (cleartext_why);
    else None."""
    why = cleartext_why(asked, transport, hosts)
    return None if why is None else "cleartext (tcp): " + why


def _have(tools: HostTools) -> str:
    """What a host has of the private transport's tools, for the refusal."""
    if tools.openssl is not None:
        return "OpenSSL " + ".".join(map(str, tools.openssl)) + " and no socat"
    return "neither socat nor openssl"


def _need_tls(host: Host, caps: Capabilities) -> None:
    """Refuse a host with neither socat (with OpenSSL) nor OpenSSL 3 (s_client -nocommands)."""
    if tool_for(caps.tools) is not None:
        return
    install = how_to_get(caps)
    need = ".".join(map(str, MIN_SOCAT))
    raise PreflightError(
        f"the private transport needs socat {need} or later (built with OpenSSL) or OpenSSL "
        f"{'.'.join(map(str, MIN_OPENSSL))} or later; {host.label} has {_have(caps.tools)}",
        host=host.label, fix=install + "; or use --transport ssh (encrypted) or tcp (cleartext)",
        reason=PreflightReason.MISSING_TOOL,
        figures={"tool": "socat", "instead": "transport", "install": install})


CARRIER = Private()
