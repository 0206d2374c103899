"""How the source host's own ssh reaches the destination (the ssh transport), jump hosts included.

OpenSSH applies `-o` options given on its command line to the destination only, never to the
hosts of a `-J`/ProxyJump: the source's ssh would reach a jump host with nothing but its own
config. So a route through jump hosts is written as nested `ProxyCommand=ssh ... -W host:port`
lines, each carrying the same options, BatchMode and a connect timeout.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .. import cmdline
from ..errors import CommandError, InvalidNameError, TransferError, ZmigrateError
from ..hosts import Host
from ..remedies import Remedy, fix_words

# Seconds each hop's ssh may take to connect and exchange banners: a hop whose packets are
# dropped would otherwise hold the transfer for TCP's minutes of retries.
CONNECT_TIMEOUT = 10
# ssh options that say themselves how to get there: given by the user, the route is theirs.
_ROUTING_KEYS = frozenset({"proxycommand", "proxyjump"})


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One ssh login: user, host name or address (as the previous hop sees it) and port."""

    user: str
    host: str
    port: int = 22

    def __post_init__(self) -> None:
        cmdline.username(self.user)
        cmdline.hostname(self.host)
        if not 0 < self.port < 65536:
            raise InvalidNameError(f"port {self.port} of {self.host} is out of range")

    @property
    def login(self) -> str:
        return f"{self.user}@{self.host}"

    @property
    def label(self) -> str:
        """`user@host`, with `:port` unless it is 22 (for messages)."""
        return self.login if self.port == 22 else f"{self.login}:{self.port}"

    @property
    def forward(self) -> str:
        """The `host:port` an `ssh -W` connects to (an IPv6 address in brackets)."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def option_key(option: str) -> str:
    """The lower-case key of an `-oKey=Value` word ('' for anything else)."""
    if not option.startswith("-o"):
        return ""
    return re.split(r"[=\s]", option[2:].strip(), maxsplit=1)[0].lower()


def _escape_tokens(command: str) -> str:
    """`command` as a ProxyCommand value: ssh expands %-tokens in it, so a literal % doubles."""
    return command.replace("%", "%%")


@dataclass(frozen=True, slots=True)
class SshRoute:
    """The destination, the jump hosts before it (first first), and the user's `-oKey=Value`
    options, which every hop's ssh gets."""

    target: Endpoint
    jumps: tuple[Endpoint, ...] = ()
    options: tuple[str, ...] = ()
    # This computer reaches the destination through a ProxyCommand of its own config: that
    # runs here and cannot be carried to the source, whose ssh then connects directly.
    proxied: bool = False

    @property
    def hops(self) -> tuple[Endpoint, ...]:
        """Every login on the way, the destination last."""
        return (*self.jumps, self.target)

    @property
    def user_routed(self) -> bool:
        """The user's options name a ProxyCommand or ProxyJump: theirs is the way, not ours."""
        return any(option_key(o) in _ROUTING_KEYS for o in self.options)

    def _ssh(self, index: int) -> list[str]:
        """ssh's options (no host, no command) for a login to hop `index`, through the hops
        before it. The user's options come first: ssh takes the first value of each."""
        hop = self.hops[index]
        argv = ["-o", "BatchMode=yes", *self.options,
                "-o", f"ConnectTimeout={CONNECT_TIMEOUT}"]
        if hop.port != 22:
            argv += ["-p", str(hop.port)]
        if index > 0 and not self.user_routed:
            argv += ["-o", "ProxyCommand=" + _escape_tokens(self._proxy(index))]
        return argv

    def _proxy(self, index: int) -> str:
        """The shell line that gives a stream to hop `index`: `ssh -W` on the hop before it."""
        before = self.hops[index - 1]
        return cmdline.join(["ssh", *self._ssh(index - 1), "-W", self.hops[index].forward,
                           before.login])

    def argv(self, index: int | None = None) -> list[str]:
        """`ssh ... user@host` for hop `index` (the destination when None), without a command."""
        i = len(self.hops) - 1 if index is None else index
        if self.user_routed:
            i = len(self.hops) - 1  # the user's ProxyCommand/ProxyJump reaches the destination
        return ["ssh", *self._ssh(i), self.hops[i].login]

    def target_and_options(self) -> tuple[str, tuple[str, ...]]:
        """(`user@host`, ssh's options) as Options.ssh_target and Options.ssh_options hold them
        (the plan puts `ssh -o BatchMode=yes` before them)."""
        words = self.argv()
        # Without "ssh -o BatchMode=yes" (the plan writes it) and the login (the target).
        return words[-1], tuple(words[3:-1])

    def describe(self) -> str:
        """`root@b via root@a` for messages."""
        text = self.target.label
        return f"{text} via {', '.join(j.label for j in self.jumps)}" if self.jumps else text


@dataclass(frozen=True, slots=True)
class HopFailure:
    """Why the source's ssh could not log in to a hop: the cause, the fix in words for every
    face (`said_fix`) and its ways out each face words (`remedies`, going through this computer
    by default); `fix` is the command line's."""

    hop: Endpoint
    cause: str
    said_fix: str
    remedies: tuple[Remedy, ...] = (Remedy.USE_RELAY,)
    figures: Mapping[str, str] = field(default_factory=dict)

    @property
    def fix(self) -> str:
        return fix_words(self.said_fix, self.remedies, self.figures) or ""


def explain(route: SshRoute, index: int, stderr: str, source: str) -> HopFailure:
    """What the stderr of `ssh ... hop true` run on `source` says about hop `index`."""
    hop = route.hops[index]
    what = "the destination" if index == len(route.hops) - 1 else "the jump host"
    name = f"{what} {hop.label}"
    lines = [x.strip() for x in stderr.splitlines() if x.strip()]
    # The lines a ProxyCommand's failure adds in the outer ssh say nothing of the cause.
    useful = [x for x in lines if not x.startswith(("kex_exchange_identification",
                                                     "Connection closed by UNKNOWN"))]
    detail = "; ".join(useful[-2:]) or (lines[-1] if lines else "no error message")
    low = detail.lower()
    every_hop = "yes" if route.jumps else ""
    before = route.hops[index - 1].label if index > 0 else source
    if "open failed" in low or "stdio forwarding failed" in low:
        if "administratively prohibited" in low:
            return HopFailure(hop, f"the jump host {before} refuses to forward to {hop.label} "
                              f"({detail})", "allow forwarding there (AllowTcpForwarding yes "
                              "in its sshd_config)")
        return HopFailure(hop, f"the jump host {before} cannot reach {hop.label} ({detail})",
                          f"check the HostName and Port of {name} as the jump host sees them "
                          "(they come from this computer's SSH config)")
    if "permission denied" in low or "too many authentication failures" in low:
        return HopFailure(hop, f"{name} refused the login from {source} ({detail})",
                          f"the source logs in with its own keys, not this computer's: add "
                          f"the source's public key to {hop.login}'s authorized_keys, or name "
                          "a key the source holds in the source's ~/.ssh/config",
                          (Remedy.SSH_OPTION, Remedy.USE_RELAY),
                          {"option": "IdentityFile=PATH", "every_hop": every_hop})
    if "host key verification failed" in low or "host key is known" in low \
            or "identification has changed" in low:
        if "identification has changed" in low:
            return HopFailure(hop, f"the host key of {name} CHANGED for {source}: this may be an "
                              f"attack ({detail})", f"if {hop.host} was reinstalled, remove its "
                              f"old key on the source (ssh-keygen -R {hop.host})")
        login = cmdline.join(route.argv(index)[1:]).replace("-o BatchMode=yes ", "", 1)
        return HopFailure(hop, f"{source} does not know the host key of {name} ({detail})",
                          f"accept it once on the source (ssh {login} true), or give the "
                          "source a known_hosts that has it",
                          (Remedy.SSH_OPTION, Remedy.USE_RELAY),
                          {"option": "UserKnownHostsFile=PATH", "every_hop": every_hop})
    if "could not resolve hostname" in low or "name or service not known" in low:
        return HopFailure(hop, f"{source} cannot resolve the name of {name} ({detail})",
                          "write its address as HostName in this computer's SSH config, or "
                          "make the name known on the source")
    if any(x in low for x in ("connection refused", "no route to host", "timed out",
                              "network is unreachable", "connection reset")):
        return HopFailure(hop, f"{source} cannot reach {name} ({detail})",
                          f"check that the source can reach {hop.host} port {hop.port} (a "
                          "firewall, another network)")
    return HopFailure(hop, f"{source}'s ssh could not log in to {name} ({detail})",
                      f"try `ssh {cmdline.join(route.argv(index)[1:])} true` on the source")


def diagnose(host: Host, route: SshRoute, *, timeout: float = 3.0 * CONNECT_TIMEOUT
             ) -> HopFailure | None:
    """Log in from `host` (the source) to each hop of `route` in turn, with `true`: the first
    that fails and why, or None when every hop answers (the failure was elsewhere)."""
    count = 1 if route.user_routed else len(route.hops)
    for index in range(len(route.hops) - count, len(route.hops)):
        line = cmdline.join([*route.argv(index), "true"]) + " </dev/null"
        try:
            r = host.run(line, timeout=timeout)
        except CommandError as exc:  # it did not end in time
            return HopFailure(route.hops[index], f"ssh from {host.label} to "
                              f"{route.hops[index].label} did not answer within {timeout:.0f} s "
                              f"({exc.message})", "check the network between them", ())
        except ZmigrateError:
            return None  # the source's own session is gone: the transfer's error says so
        if not r.ok:
            return explain(route, index, r.stderr, host.label)
    return None


def route_error(failure: HopFailure, route: SshRoute, source: str) -> TransferError:
    """The error a transfer reports when the source's ssh could not get through."""
    return TransferError(f"the source's ssh cannot get to the destination "
                         f"{route.describe()}: {failure.cause}", host=source,
                         fix=failure.said_fix, remedies=failure.remedies,
                         figures=failure.figures)


def hop_named(error: ZmigrateError, host: Host, route: SshRoute) -> ZmigrateError:
    """`error`, of a transfer whose source's ssh failed before any byte arrived; or, where a
    hop of `route` does not let `host` through (`diagnose`), the error naming that hop."""
    failure = diagnose(host, route)
    if failure is None:
        return error
    named = route_error(failure, route, host.label)
    named.__cause__ = error
    return named
