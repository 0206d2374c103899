"""A jump-host lab in network namespaces: "lab-jump" reachable from this machine, "lab-behind"
reachable only from the jump host's namespace.

    root ns  10.213.K.1/30 --veth-- 10.213.K.2/30  zmhj* (sshd lab-jump on :22)
                                    10.214.K.1/30 --veth-- 10.214.K.2/30  zmht* (sshd lab-behind)

The root namespace has an `unreachable` route for 10.214.K.0/30 and the jump namespace does not
forward, so only a connection made from the jump host reaches lab-behind. Both sshd take the lab's
user key; their host keys are in the jump lab's own known_hosts, and its ssh_config has the lab's
hosts too.
"""

from __future__ import annotations

import secrets
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .sshd import SSHD, USER, Lab, SshdLab, _keygen, _sshd_config, keygen_fingerprint
from .util import Run, free_octet, run, wait_until, zmigrate
from .zfsfuse import LabUnavailableError

IP = "/usr/sbin/ip"
NSENTER = "/usr/bin/nsenter"


@dataclass(frozen=True, slots=True)
class NsHost:
    alias: str
    address: str
    namespace: str
    public_key: str
    fingerprint: str

    @property
    def known_hosts_line(self) -> str:
        return f"{self.address} {self.public_key}"


def start_ns_sshd(root: Path, lab: Lab, procs: list[subprocess.Popen[bytes]], alias: str,
                  ns: str, address: str, env: Mapping[str, str] | None = None) -> NsHost:
    """An sshd for `alias` in network namespace `ns` on `address`:22, taking the lab's user key
    (`env`: what its sessions see, e.g. their PATH); its process joins `procs` (for the caller
    to stop)."""
    host_key = root / f"ssh_host_{alias}_ed25519_key"
    pub = _keygen(host_key, f"zmigrate-{alias}")
    cfg = _sshd_config(root, alias, 22, host_key, lab.identity.parent / "authorized_keys",
                       address=address, env=env, home=lab.home)
    log_path = root / f"sshd_{alias}.log"
    with log_path.open("ab") as log:
        # nsenter --net, not `ip netns exec`: that one also makes a mount namespace, in which
        # zfs-fuse cannot mount what a receive creates.
        proc = subprocess.Popen([NSENTER, f"--net=/run/netns/{ns}", SSHD, "-D", "-e", "-f",
                                 str(cfg)],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True)
    procs.append(proc)

    def listening() -> bool:
        out = run([IP, "netns", "exec", ns, "ss", "-Hltn"], check=False, timeout=10).stdout
        return f"{address}:22 " in out + " "

    if not wait_until(listening, 15) or proc.poll() is not None:
        raise LabUnavailableError(f"sshd {alias} in {ns} did not come up: "
                                  f"{log_path.read_text()}")
    return NsHost(alias, address, ns, pub, keygen_fingerprint(Path(f"{host_key}.pub")))


class NamespaceLab:
    """What a lab of sshd in network namespaces shares: `ip` here or in a namespace, the env
    that points zmigrate at its own ssh_config and known_hosts, and stopping its sshd."""

    lab: Lab
    procs: list[subprocess.Popen[bytes]]
    ssh_config: Path
    known_hosts: Path

    def _ip(self, *args: str, ns: str | None = None) -> None:
        run([IP, *(["-n", ns] if ns else []), *args], timeout=30)

    def env(self) -> dict[str, str]:
        env = self.lab.env()
        env["ZMIGRATE_SSH_CONFIG"] = str(self.ssh_config)
        env["ZMIGRATE_KNOWN_HOSTS"] = str(self.known_hosts)
        return env

    def zmigrate(self, *args: str, timeout: float = 300, input: str | None = None) -> Run:
        """The CLI run against this namespace lab's hosts (and the lab's), stdin closed."""
        return zmigrate(self.env(), *args, timeout=timeout, input=input)

    def _stop_sshds(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                SshdLab._stop(proc)
        self.procs.clear()


@dataclass
class JumpLab(NamespaceLab):
    """Starts the two namespaces, veth pairs and sshd; `stop()` removes all of it."""

    root: Path
    lab: Lab
    suffix: str = field(default_factory=lambda: secrets.token_hex(3))
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    routes: list[str] = field(default_factory=list)
    outer: str = ""  # "10.213.K": the network this machine shares with lab-jump (.1 here, .2 jump)
    inner: str = ""  # "10.214.K": lab-jump (.1) and lab-behind (.2)
    jump: NsHost | None = None
    behind: NsHost | None = None
    ssh_config: Path = field(default_factory=Path)
    known_hosts: Path = field(default_factory=Path)

    def start(self) -> JumpLab:
        self.root.mkdir(parents=True, exist_ok=True)
        k = free_octet("10.213", "10.214")
        ns_jump, ns_behind = f"zmhj{self.suffix}", f"zmht{self.suffix}"
        outer, inner = f"10.213.{k}", f"10.214.{k}"
        self.outer, self.inner = outer, inner
        try:
            # The inner network is unreachable from here, as behind a real jump host - and no
            # packet for it may leave by the default route.
            self._ip("route", "add", "unreachable", f"{inner}.0/30")
            self.routes.append(f"{inner}.0/30")
            for ns in (ns_jump, ns_behind):
                self._ip("netns", "add", ns)
                self.namespaces.append(ns)
                self._ip("link", "set", "lo", "up", ns=ns)
            a, b = f"zmha{self.suffix}", f"zmhb{self.suffix}"
            self._ip("link", "add", a, "type", "veth", "peer", "name", b)
            self._ip("link", "set", b, "netns", ns_jump)
            self._ip("addr", "add", f"{outer}.1/30", "dev", a)
            self._ip("link", "set", a, "up")
            self._ip("addr", "add", f"{outer}.2/30", "dev", b, ns=ns_jump)
            self._ip("link", "set", b, "up", ns=ns_jump)
            c, d = f"zmhc{self.suffix}", f"zmhd{self.suffix}"
            self._ip("link", "add", c, "type", "veth", "peer", "name", d, ns=ns_jump)
            self._ip("link", "set", d, "netns", ns_behind, ns=ns_jump)
            self._ip("addr", "add", f"{inner}.1/30", "dev", c, ns=ns_jump)
            self._ip("link", "set", c, "up", ns=ns_jump)
            self._ip("addr", "add", f"{inner}.2/30", "dev", d, ns=ns_behind)
            self._ip("link", "set", d, "up", ns=ns_behind)
            self.jump = self._sshd("lab-jump", ns_jump, f"{outer}.2")
            self.behind = self._sshd("lab-behind", ns_behind, f"{inner}.2")
        except BaseException:
            self.stop()
            raise
        self.known_hosts = self.root / "known_hosts"
        self.known_hosts.write_text(self.lab.known_hosts.read_text()
                                    + self.jump.known_hosts_line + "\n"
                                    + self.behind.known_hosts_line + "\n")
        self.ssh_config = self.root / "ssh_config"
        self.ssh_config.write_text(self.config_text())
        return self

    def config_text(self, *, jump_line: str = "ProxyJump lab-jump") -> str:
        """The ssh_config: the lab's hosts, lab-jump, lab-jump-b (the same host under another
        alias, for two-hop chains), lab-behind through `jump_line`, lab-behind-direct without."""
        assert self.jump is not None and self.behind is not None
        common = (f"    User {USER}\n    IdentityFile {self.lab.identity}\n"
                  "    IdentitiesOnly yes\n")
        return (self.lab.ssh_config.read_text() + "\n"
                f"Host lab-jump lab-jump-b\n    HostName {self.jump.address}\n{common}\n"
                f"Host lab-behind\n    HostName {self.behind.address}\n    {jump_line}\n{common}\n"
                f"Host lab-behind-direct\n    HostName {self.behind.address}\n"
                f"    ConnectTimeout 3\n{common}")

    def _sshd(self, alias: str, ns: str, address: str) -> NsHost:
        return start_ns_sshd(self.root, self.lab, self.procs, alias, ns, address)

    def drop_silently(self, on: bool) -> None:
        """Route lab-behind's network to lab-jump, which does not forward: a connection from
        here then gets no answer at all (like a firewall dropping it) instead of "no route"."""
        if on:
            self._ip("route", "replace", f"{self.inner}.0/30", "via", f"{self.outer}.2")
        else:
            self._ip("route", "replace", "unreachable", f"{self.inner}.0/30")

    def stop(self) -> None:
        self._stop_sshds()
        for ns in reversed(self.namespaces):
            run([IP, "netns", "del", ns], check=False, timeout=30)
        self.namespaces.clear()
        # The root side of the first veth pair goes with its peer; make sure.
        run([IP, "link", "del", f"zmha{self.suffix}"], check=False, timeout=30)
        for route in self.routes:
            run([IP, "route", "del", route], check=False, timeout=30)
        self.routes.clear()
