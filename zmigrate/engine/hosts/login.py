"""Open one SSH control session to a host: ~/.ssh/config, keys and agent, host key checks."""

from __future__ import annotations

import base64
import getpass
import glob
import hashlib
import os
import pwd
import re
import shutil
import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import paramiko

from .. import cmdline
from ..errors import AuthError, ConnectError, HostKeyError, ZmigrateError
from ..remedies import Remedy
from .base import Host
from .local import LocalHost
from .ssh_host import ALIVE_EVERY, LOST_AFTER, SshHost, alive_deadline

LOCAL_NAMES = frozenset({"", "local", "localhost-direct", "this computer"})


class HostKeyDecision(Enum):
    """What the user said about a host key nobody has seen before."""

    REJECT = "reject"
    ACCEPT_ONCE = "once"
    ACCEPT_AND_REMEMBER = "remember"


@dataclass(frozen=True, slots=True)
class HostKeyInfo:
    """An unknown host key, described the way OpenSSH describes it."""

    host: str
    entry: str  # known_hosts name: "host" or "[host]:port"
    key_type: str  # e.g. "ssh-ed25519"
    fingerprint: str  # "SHA256:..." exactly as ssh prints it
    known_hosts: Path

    @property
    def openssh_text(self) -> str:
        """The sentence ssh prints for an unknown key."""
        kind = self.key_type.removeprefix("ssh-").removeprefix("ecdsa-sha2-").upper()
        return (
            f"The authenticity of host '{self.entry}' can't be established.\n"
            f"{kind} key fingerprint is {self.fingerprint}."
        )


def fingerprint(key: paramiko.PKey) -> str:
    """SHA256 fingerprint of a public key as OpenSSH prints it (`SHA256:` + unpadded base64)."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


class Prompts:
    """How the engine asks the user something. The default answers no to everything.

    Faces override these: the CLI asks on the terminal, the GUI opens dialogs.
    """

    def unknown_host_key(self, info: HostKeyInfo) -> HostKeyDecision:
        return HostKeyDecision.REJECT

    def secret(self, prompt: str) -> str | None:
        """A password or key passphrase, or None to give up."""
        return None


@dataclass
class HostSpec:
    """Where and how to connect; unset fields come from the SSH config file.

    Args:
        host: alias from the SSH config, a host name or address; "local" for this machine.
        user: login name; default from the config, then the local user.
        port: default from the config, then 22.
        identity: a private key file; default from the config, then agent and ~/.ssh/id_*.
        password: used only when keys fail; never stored.
        sudo: run zfs through `sudo -n` on that host.
    """

    host: str
    user: str | None = None
    port: int | None = None
    identity: str | None = None
    password: str | None = field(default=None, repr=False)
    sudo: bool = False

    @property
    def is_local(self) -> bool:
        return self.host.lower() in LOCAL_NAMES

    @property
    def label(self) -> str:
        if self.is_local:
            return "local"
        return f"{self.user}@{self.host}" if self.user else self.host

    @classmethod
    def parse(cls, text: str, *, sudo: bool = False) -> HostSpec:
        """Parse `[user@]host[:port]`-less host text as written on the command line."""
        user: str | None = None
        host = text
        if "@" in text:
            user, host = text.split("@", 1)
            cmdline.username(user)
        if host.lower() not in LOCAL_NAMES:
            cmdline.hostname(host)
        return cls(host=host, user=user, sudo=sudo)


def ssh_config_path() -> Path:
    return Path(os.environ.get("ZMIGRATE_SSH_CONFIG", "~/.ssh/config")).expanduser()


def known_hosts_path() -> Path:
    return Path(os.environ.get("ZMIGRATE_KNOWN_HOSTS", "~/.ssh/known_hosts")).expanduser()


def _home() -> str:
    """The login's home as OpenSSH sees it (the password database, not $HOME)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return os.path.expanduser("~")


def _config_files() -> list[tuple[Path, Path]]:
    """The config files OpenSSH reads, each with the directory its relative Includes are in:
    ZMIGRATE_SSH_CONFIG alone (as `ssh -F`), else ~/.ssh/config then /etc/ssh/ssh_config."""
    user_dir = Path(_home()) / ".ssh"
    if "ZMIGRATE_SSH_CONFIG" in os.environ:
        return [(ssh_config_path(), user_dir)]
    return [(user_dir / "config", user_dir), (Path("/etc/ssh/ssh_config"), Path("/etc/ssh"))]


def _inline_includes(path: Path, include_dir: Path, depth: int = 0) -> str:
    """The text of `path` with every `Include` replaced by the files it names (sorted glob
    matches; relative names are in `include_dir`, as ssh_config(5) says) - paramiko's parser
    has no Include."""
    if depth > 16:  # OpenSSH's READCONF_MAX_DEPTH
        raise ConnectError(f"{path}: Include nested too deep")
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    out = []
    for line in text.splitlines():
        words = line.strip().replace("=", " ", 1).split()
        if words and words[0].lower() == "include":
            for pattern in words[1:]:
                pattern = pattern.replace("~", _home(), 1) if pattern.startswith("~") else pattern
                full = pattern if os.path.isabs(pattern) else str(include_dir / pattern)
                for match in sorted(glob.glob(full)):
                    out.append(_inline_includes(Path(match), include_dir, depth + 1))
            continue
        out.append(line)
    return "\n".join(out)


def load_ssh_config() -> paramiko.SSHConfig:
    """The SSH config as paramiko parses it, Includes inlined (the fallback parser)."""
    text = "\n".join(_inline_includes(path, base) for path, base in _config_files())
    return paramiko.SSHConfig.from_text(text)


def config_aliases() -> list[str]:
    """Concrete host aliases in the SSH config (no wildcards), for pickers."""
    return sorted(h for h in load_ssh_config().get_hostnames() if not set(h) & set("*?!"))


# The identities OpenSSH tries when no IdentityFile is set (ssh -G lists them; paramiko's
# look_for_keys tries the same files).
_DEFAULT_IDENTITIES = frozenset(f"~/.ssh/id_{kind}" for kind in (
    "rsa", "ecdsa", "ecdsa_sk", "ed25519", "ed25519_sk", "xmss", "dsa"))


@dataclass(frozen=True, slots=True)
class Resolved:
    """A HostSpec with the SSH config applied.

    `identities` are the configured IdentityFiles with `~` and %-tokens expanded (empty when
    none is configured: then the agent and the default keys are tried); `known_hosts` the
    UserKnownHostsFile list; `alive` how often the control session asks for a keepalive and
    after how long without an answer it is lost (ServerAliveInterval x ServerAliveCountMax
    where that is shorter: ssh_host.alive_deadline); `source` says which parser resolved it.
    """

    hostname: str
    port: int
    user: str
    identities: tuple[str, ...]
    proxy_command: str | None
    proxy_jump: str | None = None
    identities_only: bool = False
    host_key_alias: str | None = None
    known_hosts: tuple[str, ...] = ()
    source: str = "ssh -G"
    alive: tuple[float, float] = (ALIVE_EVERY, LOST_AFTER)


def openssh_client() -> str | None:
    """The OpenSSH client zmigrate asks (`ssh -G`), or None when there is none."""
    return shutil.which("ssh")


def resolve(spec: HostSpec) -> Resolved:
    """Apply the SSH config to `spec` the way OpenSSH does: `ssh -G` where an OpenSSH client is
    installed (Include, Match, patterns, tokens exactly as ssh), else paramiko's parser."""
    ssh = openssh_client()
    if ssh is not None:
        return resolve_openssh(spec, ssh)
    return resolve_paramiko(spec)


def expand_tokens(value: str, *, host: str, original: str, port: int, user: str) -> str:
    """OpenSSH's `~` and %-tokens in IdentityFile and ProxyCommand (ssh_config(5) TOKENS)."""
    local = getpass.getuser()
    long_host = socket.gethostname()
    short_host = long_host.split(".")[0]
    table = {
        "%": "%", "h": host, "n": original, "p": str(port), "r": user, "u": local,
        "d": _home(), "l": long_host, "L": short_host, "i": str(os.getuid()),
        "C": hashlib.sha1(f"{long_host}{host}{port}{user}".encode()).hexdigest(),  # noqa: S324
    }
    if value.startswith("~/") or value == "~":
        value = _home() + value[1:]

    def one(m: re.Match[str]) -> str:
        return table.get(m.group(1), m.group(0))

    return re.sub(r"%(.)", one, value)


def parse_ssh_g(text: str) -> dict[str, list[str]]:
    """`ssh -G` output (`key value` lines, keys lower case) into {key: [values...]}."""
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key:
            out.setdefault(key, []).append(value.strip())
    return out


def resolve_openssh(spec: HostSpec, ssh: str = "ssh") -> Resolved:
    """Resolve `spec` with `ssh -G` (the user and port given count in `Match user` and tokens,
    as on ssh's own command line)."""
    argv = [ssh, "-G"]
    if "ZMIGRATE_SSH_CONFIG" in os.environ:
        argv += ["-F", str(ssh_config_path())]
    if spec.user:
        argv += ["-l", spec.user]
    if spec.port:
        argv += ["-p", str(spec.port)]
    argv.append(spec.host)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=20,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConnectError(f"ssh -G {spec.host} failed: {exc}", host=spec.label) from exc
    if proc.returncode != 0:
        lines = [x for x in proc.stderr.splitlines() if "Pseudo-terminal" not in x]
        raise ConnectError(
            f"OpenSSH cannot read the SSH config for {spec.host}: "
            + ("; ".join(lines[-2:]) or f"exit status {proc.returncode}"),
            host=spec.label, fix="fix the config file named above (ssh would refuse it too)",
        )
    g = parse_ssh_g(proc.stdout)

    def first(key: str) -> str | None:
        values = g.get(key)
        return values[0] if values else None

    hostname = first("hostname") or spec.host
    port = int(first("port") or 22)
    user = first("user") or getpass.getuser()
    files = g.get("identityfile", [])
    if len(files) >= 4 and set(files) <= _DEFAULT_IDENTITIES:
        files = []  # OpenSSH's defaults: nothing was configured

    def expand(value: str) -> str:
        return expand_tokens(value, host=hostname, original=spec.host, port=port, user=user)

    identities = tuple(expand(f) for f in files)
    if spec.identity:
        identities = (os.path.expanduser(spec.identity),)
    command = first("proxycommand")
    jump = first("proxyjump")
    return Resolved(
        hostname=hostname, port=port, user=user, identities=identities,
        proxy_command=expand(command) if command and command != "none" else None,
        proxy_jump=jump if jump and jump != "none" else None,
        identities_only=first("identitiesonly") == "yes",
        host_key_alias=first("hostkeyalias"),
        known_hosts=tuple(expand(f) for f in " ".join(g.get("userknownhostsfile", [])).split()),
        source="ssh -G",
        alive=_alive(first("serveraliveinterval"), first("serveralivecountmax")),
    )


def _alive(interval: str | None, count: str | None) -> tuple[float, float]:
    """The keepalive deadline of ServerAliveInterval and ServerAliveCountMax as the config
    gives them (OpenSSH's defaults: 0, 3; a value that is no number says nothing)."""
    try:
        return alive_deadline(int(interval or 0), int(count or 3))
    except ValueError:
        return ALIVE_EVERY, LOST_AFTER


def _lookup_one_pass(config: paramiko.SSHConfig, host: str) -> paramiko.SSHConfigDict:
    """`config.lookup(host)` in one pass, as OpenSSH reads a config without `Match final` or
    CanonicalizeHostname: paramiko's lookup always reads it twice, so a `Match host` written
    before the `HostName` that would satisfy it applies there and not in ssh."""
    one_pass = getattr(config, "_lookup", None)
    expand = getattr(config, "_expand_variables", None)
    if one_pass is None or expand is None:  # another paramiko: its own semantics
        return config.lookup(host)
    options = one_pass(host, canonical=False, final=False)
    options.setdefault("hostname", host)
    result: paramiko.SSHConfigDict = expand(options, host)
    return result


def resolve_paramiko(spec: HostSpec) -> Resolved:
    """Resolve `spec` with paramiko's parser (Includes inlined first): the fallback where no
    OpenSSH client is installed. It does not see the user or port given here in `Match user`."""
    cfg = _lookup_one_pass(load_ssh_config(), spec.host)
    hostname = cfg.get("hostname", spec.host)
    port = spec.port or int(cfg.get("port", 22))
    user = spec.user or cfg.get("user") or getpass.getuser()
    identities: tuple[str, ...]
    if spec.identity:
        identities = (os.path.expanduser(spec.identity),)
    else:
        identities = tuple(os.path.expanduser(p) for p in cfg.get("identityfile", []))
    jump = cfg.get("proxyjump")
    known = cfg.get("userknownhostsfile")
    home = _home()
    return Resolved(
        hostname=hostname, port=port, user=user, identities=identities,
        proxy_command=cfg.get("proxycommand") if cfg.get("proxycommand") != "none" else None,
        proxy_jump=jump if jump and jump != "none" else None,
        identities_only=str(cfg.get("identitiesonly", "no")).lower() == "yes",
        host_key_alias=cfg.get("hostkeyalias"),
        known_hosts=tuple(os.path.expanduser(f) for f in known.split()) if known
        else (f"{home}/.ssh/known_hosts", f"{home}/.ssh/known_hosts2"),
        source="paramiko's parser (no OpenSSH client installed: Match user ignores -l)",
        alive=_alive(cfg.get("serveraliveinterval"), cfg.get("serveralivecountmax")),
    )


def parse_proxy_jump(value: str) -> list[HostSpec]:
    """`ProxyJump` hops (`[user@]host[:port]` or `ssh://[user@]host[:port]`, comma-separated),
    first hop first."""
    hops = []
    for item in value.split(","):
        text = item.strip().removeprefix("ssh://")
        user: str | None = None
        if "@" in text:
            user, text = text.rsplit("@", 1)
            cmdline.username(user)
        port: int | None = None
        m = re.fullmatch(r"\[([^\]]+)\](?::(\d+))?|([^:]+)(?::(\d+))?", text)
        if not m:
            raise ConnectError(f"ProxyJump hop {item!r} is not [user@]host[:port]")
        host = m.group(1) or m.group(3)
        port_text = m.group(2) or m.group(4)
        if port_text:
            port = int(port_text)
        hops.append(HostSpec(host=cmdline.hostname(host), user=user, port=port))
    return hops


def known_hosts_entry(hostname: str, port: int) -> str:
    return hostname if port == 22 else f"[{hostname}]:{port}"


def find_known_hosts_line(path: Path, entry: str) -> int | None:
    """Line number (1-based) of `entry` in a known_hosts file, hashed names included."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if len(fields) < 3 or line.lstrip().startswith("#"):
            continue
        names = fields[0]
        for name in names.split(","):
            if name == entry:
                return number
            if name.startswith("|1|"):
                salt = name.split("|")[2]
                if paramiko.HostKeys.hash_host(entry, salt) == name:
                    return number
    return None


class _AskPolicy(paramiko.MissingHostKeyPolicy):
    def __init__(self, prompts: Prompts, known_hosts: Path, entry: str) -> None:
        self.prompts = prompts
        self.known_hosts = known_hosts
        self.entry = entry

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str,
                         key: paramiko.PKey) -> None:
        info = HostKeyInfo(hostname, self.entry, key.get_name(), fingerprint(key), self.known_hosts)
        decision = self.prompts.unknown_host_key(info)
        if decision is HostKeyDecision.REJECT:
            raise HostKeyError(
                f"unknown host key {info.fingerprint} was not accepted",
                host=self.entry,
                fix=f"check the fingerprint with the host's admin, then accept it "
                f"(or add it to {self.known_hosts})",
            )
        if decision is HostKeyDecision.ACCEPT_AND_REMEMBER:
            self.known_hosts.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with self.known_hosts.open("a") as f:
                f.write(f"{self.entry} {key.get_name()} {key.get_base64()}\n")


def _known_hosts_files(r: Resolved) -> list[Path]:
    """Where host keys are looked up (all) and remembered (the first): ZMIGRATE_KNOWN_HOSTS,
    else the host's UserKnownHostsFile list."""
    if "ZMIGRATE_KNOWN_HOSTS" in os.environ or not r.known_hosts:
        return [known_hosts_path()]
    return [Path(f) for f in r.known_hosts]


Opener = Callable[[], "socket.socket | paramiko.Channel | paramiko.ProxyCommand"]


def _open_client(r: Resolved, label: str, spec: HostSpec, prompts: Prompts, timeout: float,
                 opener: Opener) -> paramiko.SSHClient:
    """Log in to one host (a jump host or the target) over the stream `opener` makes, checking
    its key against known_hosts: unknown -> ask, changed -> refuse."""
    files = _known_hosts_files(r)
    kh = files[0]
    # The known_hosts name: HostKeyAlias as is (OpenSSH adds no port to it), else [host]:port.
    entry = r.host_key_alias or known_hosts_entry(r.hostname, r.port)
    key_host, key_port = (r.host_key_alias, 22) if r.host_key_alias else (r.hostname, r.port)
    client = paramiko.SSHClient()
    for f in files:
        if f.is_file():
            client.load_host_keys(str(f))
    client.set_missing_host_key_policy(_AskPolicy(prompts, kh, entry))
    only = r.identities_only and bool(r.identities)

    def attempt(password: str | None, passphrase: str | None) -> None:
        # A failed attempt leaves its transport (and a proxy command's socket) open: close it
        # before the next one, or every retry leaks a connection.
        client.close()
        # The stream is ours (direct, proxy command or jump channel), so paramiko's host name
        # and port only name the key: the known_hosts entry.
        client.connect(
            key_host,
            port=key_port,
            username=r.user,
            password=password,
            passphrase=passphrase,
            key_filename=list(r.identities) or None,  # type: ignore[arg-type]
            timeout=timeout,
            banner_timeout=timeout,
            auth_timeout=timeout,
            allow_agent=not only,
            look_for_keys=not r.identities,
            sock=opener(),
        )

    try:
        _log_in(attempt, spec, prompts, label, r)
    except (HostKeyError, AuthError, ConnectError):
        client.close()
        raise
    except (paramiko.SSHException, TimeoutError, OSError) as exc:
        client.close()
        raise _login_error(exc, r, label, kh, entry) from exc
    transport = client.get_transport()
    if transport is not None:
        transport.set_keepalive(15)
    return client


_WRONG_PASSPHRASE = ("Invalid key", "Bad password or corrupt private key file")


def _log_in(attempt: Callable[[str | None, str | None], None], spec: HostSpec,
            prompts: Prompts, label: str, r: Resolved) -> None:
    """`attempt` with what the user gave, then with a passphrase or a password asked for."""
    try:
        attempt(spec.password, None)
    except paramiko.PasswordRequiredException:
        passphrase = prompts.secret(f"Passphrase for the key of {label}")
        if passphrase is None:
            raise AuthError("the key needs a passphrase and none was given",
                            host=label) from None
        try:
            attempt(spec.password, passphrase)
        except paramiko.SSHException as exc:
            # paramiko's words for a key that the passphrase does not open: "Invalid key"
            # (OpenSSH format), "Bad password or corrupt private key file" (PEM). Not the
            # network's fault, whatever _login_error would make of it.
            if isinstance(exc, paramiko.AuthenticationException) or \
                    str(exc) not in _WRONG_PASSPHRASE:
                raise
            raise AuthError("the passphrase given does not open the key", host=label,
                            fix="type the key's passphrase again (`ssh-keygen -y -f KEY` on "
                            "this computer checks it)") from exc
    except (paramiko.AuthenticationException, paramiko.SSHException) as exc:
        # No key file, agent key or password at all is paramiko's SSHException "No
        # authentication methods available", not an AuthenticationException: the same case.
        if not _no_credentials(exc) or spec.password is not None:
            raise
        password = prompts.secret(f"Password for {r.user}@{r.hostname}")
        if password is None:
            raise
        attempt(password, None)


def _login_error(exc: Exception, r: Resolved, label: str, kh: Path,
                 entry: str) -> ZmigrateError:
    """What a failed login means, in the user's words, with the fix."""
    if isinstance(exc, paramiko.BadHostKeyException):
        line = find_known_hosts_line(kh, entry)
        where = f"{kh} line {line}" if line else str(kh)
        return HostKeyError(
            f"the host key changed: it is now {fingerprint(exc.key)}, "
            f"{where} says {fingerprint(exc.expected_key)}. "
            "This may be an attack; the connection was refused",
            host=entry,
            fix=f"if the host was reinstalled, remove the old key: ssh-keygen -R '{entry}'"
            + (f" -f {kh}" if kh != Path("~/.ssh/known_hosts").expanduser() else ""),
        )
    if isinstance(exc, paramiko.AuthenticationException):
        return AuthError(
            f"authentication failed for {r.user}: {exc}",
            host=label,
            fix="check the user name and key (ssh-copy-id), or use a password",
        )
    if isinstance(exc, paramiko.SSHException) and _no_credentials(exc):
        return AuthError(
            f"no key, agent key or password could be offered for {r.user}",
            host=label,
            remedies=(Remedy.NAME_KEY,),
        )
    return ConnectError(
        f"cannot reach {r.hostname} port {r.port}: {exc}",
        host=label,
        fix="check the host name, the port and that sshd runs there",
    )


def _no_credentials(exc: Exception) -> bool:
    """Whether a login failed for want of any credential (not a refused one, not the network)."""
    return isinstance(exc, paramiko.AuthenticationException) \
        or "No authentication methods available" in str(exc)


def _direct(r: Resolved, label: str, timeout: float) -> Opener:
    def open_stream() -> socket.socket | paramiko.ProxyCommand:
        if r.proxy_command:
            return paramiko.ProxyCommand(r.proxy_command)
        try:
            sock = socket.create_connection((r.hostname, r.port), timeout=timeout)
        except OSError as exc:
            raise ConnectError(f"cannot reach {r.hostname} port {r.port}: {exc}", host=label,
                               fix="check the host name, the port and that sshd runs there"
                               ) from exc
        # Every command is a few small packets each way (open, exec, exit status, close): with
        # Nagle's algorithm each waits for the peer's delayed ACK, 40 ms on Linux - OpenSSH's
        # client sets TCP_NODELAY too. The stream itself never goes through this socket.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
    return open_stream


def _through(jump: paramiko.SSHClient, jump_label: str, r: Resolved, label: str,
             timeout: float) -> Opener:
    def open_stream() -> paramiko.Channel:
        transport = jump.get_transport()
        if transport is None or not transport.is_active():
            raise ConnectError(f"the connection to the jump host {jump_label} was lost",
                               host=label)
        try:
            return transport.open_channel("direct-tcpip", (r.hostname, r.port),
                                          ("127.0.0.1", 0), timeout=timeout)
        except (paramiko.SSHException, OSError) as exc:
            raise ConnectError(
                f"the jump host {jump_label} cannot reach {r.hostname} port {r.port}: {exc}",
                host=label,
                fix="check the HostName and Port as the jump host sees them, and that it "
                "allows forwarding (AllowTcpForwarding)",
            ) from exc
    return open_stream


def jump_chain(r: Resolved, depth: int = 0) -> list[tuple[HostSpec, Resolved]]:
    """The hops of `r`'s ProxyJump, first first. The first hop's own ProxyJump is honoured (ssh
    runs it as `ssh -W`); later hops are reached through the earlier ones as the chain says."""
    if not r.proxy_jump:
        return []
    if depth > 8:
        raise ConnectError("ProxyJump chains loop or nest more than 8 deep")
    hops = [(spec, resolve(spec)) for spec in parse_proxy_jump(r.proxy_jump)]
    return jump_chain(hops[0][1], depth + 1) + hops


def connect(spec: HostSpec, prompts: Prompts | None = None, *, timeout: float = 15.0) -> Host:
    """Open the control session for `spec` (or return a LocalHost for this machine): directly,
    through its ProxyCommand, or through its ProxyJump hosts (one connection each, each key
    checked like the target's).

    Raises:
        HostKeyError: unknown key rejected, or a changed key (the file and line are named).
        AuthError: every credential was refused.
        ConnectError: the host could not be reached.
    """
    if spec.is_local:
        return LocalHost(sudo=spec.sudo)
    prompts = prompts or Prompts()
    r = resolve(spec)
    jumps: list[paramiko.SSHClient] = []
    via: list[str] = []
    try:
        for hop_spec, hop in jump_chain(r):
            hop_label = hop_spec.label
            hop_opener = _direct(hop, hop_label, timeout) if not jumps else \
                _through(jumps[-1], via[-1], hop, hop_label, timeout)
            jumps.append(_open_client(hop, hop_label, hop_spec, prompts, timeout, hop_opener))
            via.append(hop_label)
        opener = _through(jumps[-1], via[-1], r, spec.label, timeout) if jumps else \
            _direct(r, spec.label, timeout)
        client = _open_client(r, spec.label, spec, prompts, timeout, opener)
    except BaseException:
        for j in reversed(jumps):
            j.close()
        raise
    host = SshHost(spec.label, client, sudo=spec.sudo, jumps=jumps, via=tuple(via),
                   alive=r.alive)
    if r.source != "ssh -G":
        host.notes = (f"ssh config read by {r.source}",)
    return host
