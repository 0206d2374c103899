"""Open one SSH control session to a host: ~/.ssh/config, keys and agent, host key checks."""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import paramiko

from . import shell
from .errors import AuthError, ConnectError, HostKeyError
from .hosts import Host, LocalHost, SshHost

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
            shell.username(user)
        if host.lower() not in LOCAL_NAMES:
            shell.hostname(host)
        return cls(host=host, user=user, sudo=sudo)


def ssh_config_path() -> Path:
    return Path(os.environ.get("ZMIGRATE_SSH_CONFIG", "~/.ssh/config")).expanduser()


def known_hosts_path() -> Path:
    return Path(os.environ.get("ZMIGRATE_KNOWN_HOSTS", "~/.ssh/known_hosts")).expanduser()


def load_ssh_config() -> paramiko.SSHConfig:
    path = ssh_config_path()
    if path.is_file():
        return paramiko.SSHConfig.from_path(str(path))
    return paramiko.SSHConfig()


def config_aliases() -> list[str]:
    """Concrete host aliases in the SSH config (no wildcards), for pickers."""
    return sorted(h for h in load_ssh_config().get_hostnames() if not set(h) & set("*?!"))


@dataclass(frozen=True, slots=True)
class Resolved:
    """A HostSpec with the SSH config applied."""

    hostname: str
    port: int
    user: str
    identities: tuple[str, ...]
    proxy_command: str | None


def resolve(spec: HostSpec) -> Resolved:
    """Apply ~/.ssh/config (HostName, User, Port, IdentityFile, ProxyCommand) to `spec`."""
    cfg = load_ssh_config().lookup(spec.host)
    hostname = cfg.get("hostname", spec.host)
    port = spec.port or int(cfg.get("port", 22))
    user = spec.user or cfg.get("user") or os.environ.get("USER") or "root"
    identities: tuple[str, ...]
    if spec.identity:
        identities = (os.path.expanduser(spec.identity),)
    else:
        identities = tuple(os.path.expanduser(p) for p in cfg.get("identityfile", []))
    return Resolved(hostname, port, user, identities, cfg.get("proxycommand"))


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


def connect(spec: HostSpec, prompts: Prompts | None = None, *, timeout: float = 15.0) -> Host:
    """Open the control session for `spec` (or return a LocalHost for this machine).

    Raises:
        HostKeyError: unknown key rejected, or a changed key (the file and line are named).
        AuthError: every credential was refused.
        ConnectError: the host could not be reached.
    """
    if spec.is_local:
        return LocalHost(sudo=spec.sudo)
    prompts = prompts or Prompts()
    r = resolve(spec)
    kh = known_hosts_path()
    entry = known_hosts_entry(r.hostname, r.port)
    client = paramiko.SSHClient()
    if kh.is_file():
        client.load_host_keys(str(kh))
    client.set_missing_host_key_policy(_AskPolicy(prompts, kh, entry))

    def attempt(password: str | None, passphrase: str | None) -> None:
        # A failed attempt leaves its transport (and a proxy command's socket) open: close it
        # before the next one, or every retry leaks a connection.
        client.close()
        sock = paramiko.ProxyCommand(r.proxy_command) if r.proxy_command else None
        client.connect(
            r.hostname,
            port=r.port,
            username=r.user,
            password=password,
            passphrase=passphrase,
            key_filename=list(r.identities) or None,  # type: ignore[arg-type]
            timeout=timeout,
            banner_timeout=timeout,
            auth_timeout=timeout,
            allow_agent=True,
            look_for_keys=not r.identities,
            sock=sock,
        )

    label = spec.label
    try:
        try:
            attempt(spec.password, None)
        except paramiko.PasswordRequiredException:
            passphrase = prompts.secret(f"Passphrase for the key of {label}")
            if passphrase is None:
                raise AuthError("the key needs a passphrase and none was given",
                                host=label) from None
            attempt(spec.password, passphrase)
        except paramiko.AuthenticationException:
            if spec.password is not None:
                raise
            password = prompts.secret(f"Password for {r.user}@{r.hostname}")
            if password is None:
                raise
            attempt(password, None)
    except paramiko.BadHostKeyException as exc:
        line = find_known_hosts_line(kh, entry)
        where = f"{kh} line {line}" if line else str(kh)
        client.close()
        raise HostKeyError(
            f"the host key changed: it is now {fingerprint(exc.key)}, "
            f"{where} says {fingerprint(exc.expected_key)}. "
            "This may be an attack; the connection was refused",
            host=entry,
            fix=f"if the host was reinstalled, remove the old key: ssh-keygen -R '{entry}'"
            + (f" -f {kh}" if kh != Path("~/.ssh/known_hosts").expanduser() else ""),
        ) from exc
    except (HostKeyError, AuthError):
        client.close()
        raise
    except paramiko.AuthenticationException as exc:
        client.close()
        raise AuthError(
            f"authentication failed for {r.user}: {exc}",
            host=label,
            fix="check the user name and key (ssh-copy-id), or use a password",
        ) from exc
    except (TimeoutError, OSError, paramiko.SSHException) as exc:
        client.close()
        raise ConnectError(
            f"cannot reach {r.hostname} port {r.port}: {exc}",
            host=label,
            fix="check the host name, the port and that sshd runs there",
        ) from exc
    transport = client.get_transport()
    if transport is not None:
        transport.set_keepalive(15)
    return SshHost(label, client, sudo=spec.sudo)

