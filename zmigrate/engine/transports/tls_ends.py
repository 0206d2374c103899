"""The private transport's two TLS ends, by the tool each host has: socat, else openssl.

socat's OPENSSL addresses read the stream 128 KiB at a time (`-b`) and hand OpenSSL whole
16 KiB records; `openssl s_client` reads 8 KiB a time and asks select() twice for each: the wire
with socat's ends took about a fifth less CPU on the lab (0.79 against 0.94 s for 200 MiB,
mbuffers included; tcp's 0.27), which counts where that CPU is the one zfs uses (loopback:
0.83x tcp's rate, openssl's 0.56-0.76x; bench/bench_private.py). Both speak TLS 1.3 only (its
suites are all AEAD: AES-GCM, AES-NI accelerated, or ChaCha20-Poly1305), each end proves its
own key and trusts only the other's certificate, so the ends of two tools work together.

Each end's line names its step's key directory once, in `$keys` (keys_at), so the line a review
shows stays readable. It is a loop that starts its tool again only when no session ever carried
a byte: the listener after a stranger's failed handshake (up to `STRANGERS` times; a port taken in
that instant ends it, and the step names the taker), the sender after a connection that never
completed its handshake (it has read none of its input then).
"""

from __future__ import annotations

from .. import cmdline
from ..hosts.tools import HostTools
from .listener import CONNECTED_MARK

OPENSSL = "openssl"
SOCAT = "socat"
# AEAD suites only, AES-GCM first (AES-NI), ChaCha20-Poly1305 for CPUs without it.
SUITES = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
STRANGERS = 50  # failed handshakes the listener sits through before it gives up
CONNECT_TRIES = 100  # the sender's connections that did not complete a handshake, 0.1 s apart
MIN_OPENSSL = (3, 0)  # s_client -nocommands (a stream byte 'Q' must not quit it)
MIN_SOCAT = (1, 7, 4)  # openssl-min-proto-version
SOCAT_BLOCK = 128 * 1024  # socat's -b: one read of its input, eight TLS records
SERVER_NAME = "zmigrate receiver"  # the receiver's certificate's common name
_TLS = ["-tls1_3", "-ciphersuites", SUITES, "-verify_return_error"]
# socat -d -d says so once a session carries bytes: before it, nothing was read or written.
_FLOWING = "starting data transfer loop"
_ACCEPTED = "accepting connection from"
# s_server -state's lines once it accepted a connection (a failed bind, which s_server ends
# with status 0, has none: that ends the listener at once).
_ACCEPTED_SSL = "SSL_accept:"
# s_server -state's line once it has read (and checked) the client's Finished: the handshake
# is complete, so the peer proved the step's client key.
_PROVED = "read finished"
# The step's key directory in an end's line; keys_at sets it at the line's start.
KEYS = '"$keys"'


def tool_for(tools: HostTools) -> str | None:
    """The TLS tool of a host: socat (with OpenSSL) where it has one, else openssl 3; None
    where it has neither. A host probed without these sections gets openssl (older probes)."""
    if tools.socat is not None and tools.socat >= MIN_SOCAT:
        return SOCAT
    if not tools.probed or (tools.openssl is not None and tools.openssl >= MIN_OPENSSL):
        return OPENSSL
    return None


def keys_at(d: str) -> str:
    """The start of an end's line: `keys=D; `, the step's key directory `d` for KEYS."""
    return f"keys={cmdline.join([d])}; "


def _files() -> str:
    return f"-cert {KEYS}/own.crt -key {KEYS}/own.key -CAfile {KEYS}/peer.crt"


def _socat_keys() -> str:
    # verify=1 on the listener: a client without the job's certificate fails the handshake.
    return (f"cert={KEYS}/own.crt,key={KEYS}/own.key,cafile={KEYS}/peer.crt,verify=1,"
            "openssl-min-proto-version=TLS1.3")


def _said() -> str:
    """socat's error lines in the key directory's err, as `openssl: ...` on stderr (its date
    and pid cut)."""
    return f"sed -n 's/^.* E /openssl: /p' {KEYS}/err >&2"


def _announced(tool: str, proved: str) -> str:
    """`tool` with its stdout on the stream and its stderr into the key directory's err, saying
    CONNECTED_MARK on stderr once a line shows its peer `proved` the step's key: the readiness
    probe's "the port no longer listens" cannot tell the sender from a stranger the handshake
    will refuse (Private.port_closed_is_sender). Its exit status in $s."""
    awk = (f"awk -v f={KEYS}/err '{{ print > f; fflush(f) }} "
           f"!m && /{proved}/ {{ print \"{CONNECTED_MARK}\" > \"/dev/stderr\"; m = 1 }}'")
    return (f"{{ {{ {tool} 2>&1 >&3 3>&-; echo $? >{KEYS}/rc; }} | {awk} >/dev/null; }} 3>&1; "
            f"s=$(cat {KEYS}/rc)")


def _gave_up() -> str:
    """The listener's last word once STRANGERS connections in a row failed their handshake."""
    said = (f"the listener stopped after {STRANGERS} connections in a row that did not prove "
            "the job's key (strangers, or a scan of the port)")
    return f"echo {cmdline.join([said])} >&2"


def server_stage(port: int, tool: str = OPENSSL) -> str:
    """The destination's first stage: one authenticated TLS session's bytes on stdout (after
    keys_at)."""
    if tool == SOCAT:
        socat = (cmdline.join(["socat", "-d", "-d", "-b", str(SOCAT_BLOCK), "-u"])
                 + f" OPENSSL-LISTEN:{int(port)},reuseaddr,{_socat_keys()} STDOUT")
        # Started again only after an accepted connection that never carried a byte (a
        # stranger's failed handshake); a failed bind or a broken session ends it.
        return (f"( n=0; while :; do {_announced(socat, _FLOWING)}; [ $s -eq 0 ] && exit 0; "
                f"{_said()}; if grep -q '{_ACCEPTED}' {KEYS}/err && "
                f"! grep -q '{_FLOWING}' {KEYS}/err; then n=$((n+1)); "
                f"[ $n -lt {STRANGERS} ] && continue; {_gave_up()}; fi; exit $s; done )")
    # s_server ends a session at EOF on stdin: its stdin is a FIFO nobody writes.
    s_server = (cmdline.join(["openssl", "s_server", "-quiet", "-state", "-naccept", "1",
                              "-accept", str(port)]) + f" {_files()} "
                + cmdline.join(["-Verify", "1", *_TLS]))
    return (f"( n=0; exec 5<>{KEYS}/idle; while :; do {_announced(s_server + ' <&5', _PROVED)}; "
            f"if grep -q ':error:' {KEYS}/err; then grep ':error:' {KEYS}/err | "
            f"sed 's/^/openssl: /' >&2; if grep -q '{_ACCEPTED_SSL}' {KEYS}/err; then "
            f"n=$((n+1)); [ $n -lt {STRANGERS} ] && continue; {_gave_up()}; fi; exit 1; fi; "
            "exit $s; done )")


def client_stage(address: str, tool: str = OPENSSL) -> str:
    """The source's last stage (after keys_at): its stdin to the listener, once that proves
    the step's server key; a connection that never completed its handshake is tried again."""
    if tool == SOCAT:
        socat = (cmdline.join(["socat", "-d", "-d", "-b", str(SOCAT_BLOCK), "-u", "STDIN"])
                 + " OPENSSL:" + cmdline.join([address]) + f",{_socat_keys()},commonname="
                 + cmdline.join([SERVER_NAME]) + ",no-sni=1")
        return (f"{{ n=0; while :; do {socat} 2>{KEYS}/err; s=$?; [ $s -eq 0 ] && exit 0; "
                f"if ! grep -q '{_FLOWING}' {KEYS}/err && [ $n -lt {CONNECT_TRIES} ]; then "
                "n=$((n+1)); sleep 0.1 2>/dev/null || sleep 1; continue; fi; "
                f"{_said()}; exit $s; done; }}")
    s_client = (cmdline.join(["openssl", "s_client", "-quiet", "-nocommands", "-no_ign_eof",
                              "-connect", address]) + f" {_files()} " + cmdline.join(_TLS))
    noise = "'^(depth=|verify return:|DONE$)|SSL_get_servername'"
    return (f"{{ n=0; while :; do {s_client} 2>{KEYS}/err; s=$?; [ $s -eq 0 ] && exit 0; "
            f"if ! grep -q '^verify return:1' {KEYS}/err && [ $n -lt {CONNECT_TRIES} ]; then "
            "n=$((n+1)); sleep 0.1 2>/dev/null || sleep 1; continue; fi; "
            f"grep -Ev {noise} {KEYS}/err | sed 's/^/openssl: /' >&2; exit $s; done; }}")


__all__ = ["KEYS", "MIN_OPENSSL", "MIN_SOCAT", "OPENSSL", "SOCAT", "client_stage", "keys_at",
           "server_stage", "tool_for"]
