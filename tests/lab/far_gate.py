"""lab-far-gate: the gate host of lab/gate.py (its `zfs` held at a chosen changing command) at
the far end of a link: an sshd in a network namespace of its own, so a test holds a go-live's
k-th step there, cuts the link, and lets the step end into the void.

    root ns  10.218.K.1/30 --veth-- 10.218.K.2/30  zmgf* (sshd lab-far-gate)

`cut()` takes this machine's end of the veth down (as lab/cut.py's `dead()`: no route to the
host any more, and the host's packets vanish; it keeps its sessions and finishes what it runs);
`back()` brings it up: the connections open across the cut get their reset then, as when a
link comes back. The host shares this machine's zfs-fuse and mounts (nsenter --net only).

Its ssh_config entry says `ServerAliveInterval 1` and `ServerAliveCountMax LOST_AFTER`: the
product's control session then counts the host lost after LOST_AFTER s without an answer
(hosts/ssh_host.alive_deadline), so a test cuts the link many times in a few minutes.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .gate import arm, gate_script
from .netns import IP, NamespaceLab, NsHost, start_ns_sshd
from .sshd import USER, Lab
from .util import Run, finish, free_octet, run, start, wait_until

ALIAS = "lab-far-gate"
LOST_AFTER = 2  # seconds: ServerAliveInterval 1 x ServerAliveCountMax 2


@dataclass
class FarGate(NamespaceLab):
    """`start()` makes the namespace, the veth pair and the gated sshd; `stop()` removes them."""

    root: Path
    lab: Lab
    suffix: str = field(default_factory=lambda: secrets.token_hex(3))
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    namespace: str = ""
    net: str = ""  # "10.218.K": .1 is this machine, .2 is lab-far-gate
    host: NsHost | None = None
    control: Path = field(default_factory=Path)  # the gate's folder (lab/gate.py)
    ssh_config: Path = field(default_factory=Path)
    known_hosts: Path = field(default_factory=Path)

    @property
    def near_link(self) -> str:
        return f"zmga{self.suffix}"

    def start(self) -> FarGate:
        real = shutil.which("zfs")
        assert real, "zfs is not installed"
        self.root.mkdir(parents=True, exist_ok=True)
        self.control = self.root / "gate"
        self.control.mkdir()
        bindir = self.root / "bin"
        bindir.mkdir()
        (bindir / "zfs").write_text(gate_script(real, self.control))
        (bindir / "zfs").chmod(0o755)
        self.net = f"10.218.{free_octet('10.218')}"
        ns = self.namespace = f"zmgf{self.suffix}"
        a, b = self.near_link, f"zmgb{self.suffix}"
        try:
            self._ip("netns", "add", ns)
            self._ip("link", "set", "lo", "up", ns=ns)
            self._ip("link", "add", a, "type", "veth", "peer", "name", b)
            self._ip("link", "set", b, "netns", ns)
            self._ip("addr", "add", f"{self.net}.1/30", "dev", a)
            self._ip("link", "set", a, "up")
            self._ip("addr", "add", f"{self.net}.2/30", "dev", b, ns=ns)
            self._ip("link", "set", b, "up", ns=ns)
            self.host = start_ns_sshd(
                self.root, self.lab, self.procs, ALIAS, ns, f"{self.net}.2",
                env={"PATH": f"{bindir}:/usr/sbin:/usr/bin:/sbin:/bin"})
        except BaseException:
            self.stop()
            raise
        self.known_hosts = self.root / "known_hosts"
        self.known_hosts.write_text(self.lab.known_hosts.read_text()
                                    + self.host.known_hosts_line + "\n")
        self.ssh_config = self.root / "ssh_config"
        self.ssh_config.write_text(
            self.lab.ssh_config.read_text() + "\n"
            f"Host {ALIAS}\n    HostName {self.host.address}\n    User {USER}\n"
            f"    IdentityFile {self.lab.identity}\n    IdentitiesOnly yes\n"
            f"    ServerAliveInterval 1\n    ServerAliveCountMax {LOST_AFTER}\n")
        return self

    def cut(self) -> None:
        """This machine's end of the link goes down."""
        self._ip("link", "set", self.near_link, "down")

    def back(self) -> None:
        self._ip("link", "set", self.near_link, "up")

    def go_live_cut_at(self, source: str, destination: str, k: int, env: dict[str, str],
                       mode: str, *extra: str) -> tuple[Run, float]:
        """`go-live ALIAS:SOURCE ALIAS:DESTINATION --yes --json EXTRA` with the link cut while
        its k-th step is held on the host, `mode` "before" it ran (it then never runs) or
        "after" (it ran, its answer is lost). The step is let go once the link is down, and the
        link comes back once the run has ended. The run and the seconds from the cut to its
        end."""
        d = self.control
        arm(d, k, mode)
        proc = start(env, "go-live", f"{ALIAS}:{source}", f"{ALIAS}:{destination}", "--yes",
                     "--json", *extra)
        try:
            if not wait_until(lambda: (d / "reached").exists(), 60):
                raise AssertionError(f"step {k} never came: {finish(proc, 5)}, "
                                     f"{(d / 'log').read_text() if (d / 'log').exists() else ''}")
            self.cut()
            cut_at = time.monotonic()
            (d / "release").touch()
            r = finish(proc, 60)
            took = time.monotonic() - cut_at
        finally:
            (d / "release").touch()
            self.back()
        (d / "stop").write_text("0\n")
        return r, took

    def stop(self) -> None:
        self._stop_sshds()
        if self.namespace:
            run([IP, "netns", "del", self.namespace], check=False, timeout=30)
        run([IP, "link", "del", self.near_link], check=False, timeout=30)
