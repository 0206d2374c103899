"""A host at the far end of a real-looking link: "lab-far", an sshd in a network namespace joined
to this machine by a veth pair with a real MTU, its egress from here shaped by `tc ... tbf`; and,
on request, "lab-near": a source on this machine whose `ssh` and `socat` run under a CPU quota (a
cgroup v1 `cpu.cfs_quota_us`), like an old NAS whose one weak core encrypts the stream, and
"lab-tight": a destination on this machine whose sshd (decrypting an ssh transport's stream)
runs under one.

    root ns  10.215.K.1/30 --veth (MTU 1500, tbf RATE one way)-- 10.215.K.2/30  zmsf* (lab-far)

Loopback's 64 KiB MTU and free bandwidth hide what users see; this link does not. A transfer
from lab-src (this machine) to lab-far crosses the shaped direction; its ssh control session
does too, as on a real link. Both hosts share this machine's zfs-fuse, so pools are visible from
both; the namespace is a network namespace only (nsenter --net), so mounts are shared too.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .netns import IP, NamespaceLab, NsHost, start_ns_sshd
from .sshd import SSHD, USER, Lab, _keygen, _sshd_config
from .util import free_octet, free_port, run, tcp_accepts, wait_until
from .zfsfuse import LabUnavailableError

TC = "/usr/sbin/tc"
TASKSET = "/usr/bin/taskset"
CHRT = "/usr/bin/chrt"
CGROUP_CPU = Path("/sys/fs/cgroup/cpu")
PERIOD_US = 20000  # the quota's period: short pauses, as a weak core's own are
# The one core a starved program runs on, and every core (what leaves the quota runs on).
# A program that moves between cores reads a slice (kernel.sched_cfs_bandwidth_slice_us, 5 ms)
# of the quota on one and is left the rest on the next; and over the pauses of a 100 ms period
# an idle virtual core is put away and comes back cold: a doctor's stage on an idle machine
# then read 20-39 MiB/s by turns while a transfer (the cores busy) carried a steady 36-41.
# On one core, every 20 ms, both read 24-30 (the weak NAS core this models is one core).
ONE_CORE = str((os.cpu_count() or 1) - 1)
ALL_CORES = f"0-{ONE_CORE}"


@contextlib.contextmanager
def awake_cores() -> Iterator[None]:
    """Every core kept from idling meanwhile (a spinner of idle priority on each: it runs only
    where nothing else would), as a transfer's own work keeps them: an idle virtual core is put
    away between a starved program's quota slices and gives it less per slice (side by side,
    the doctor's ssh stage read 20-39 MiB/s on idle cores, 33-38 with these, a transfer 35-41).
    """
    spinners = [subprocess.Popen([TASKSET, "-c", str(core), CHRT, "-i", "0", "sh", "-c",
                                  "while :; do :; done"])
                for core in range(os.cpu_count() or 1)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


@dataclass
class ShapedLab(NamespaceLab):
    """`start()` makes the namespace, the veth pair, the shaping and lab-far's sshd; `stop()`
    removes all of it. `rate` is tc's notation (e.g. "400mbit"); None leaves the link free."""

    root: Path
    lab: Lab
    rate: str | None = "400mbit"
    mtu: int = 1500
    suffix: str = field(default_factory=lambda: secrets.token_hex(3))
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    namespace: str = ""
    net: str = ""  # "10.215.K": .1 is this machine, .2 is lab-far
    far: NsHost | None = None
    ssh_config: Path = field(default_factory=Path)
    known_hosts: Path = field(default_factory=Path)
    cgroups: list[Path] = field(default_factory=list)
    near_port: int | None = None
    tight_port: int | None = None

    @property
    def near_link(self) -> str:
        return f"zmsa{self.suffix}"

    def start(self) -> ShapedLab:
        self.root.mkdir(parents=True, exist_ok=True)
        k = free_octet("10.215")
        self.net = f"10.215.{k}"
        ns = self.namespace = f"zmsf{self.suffix}"
        a, b = self.near_link, f"zmsb{self.suffix}"
        try:
            self._ip("netns", "add", ns)
            self._ip("link", "set", "lo", "up", ns=ns)
            self._ip("link", "add", a, "type", "veth", "peer", "name", b)
            self._ip("link", "set", b, "netns", ns)
            self._ip("addr", "add", f"{self.net}.1/30", "dev", a)
            self._ip("link", "set", a, "mtu", str(self.mtu), "up")
            self._ip("addr", "add", f"{self.net}.2/30", "dev", b, ns=ns)
            self._ip("link", "set", b, "mtu", str(self.mtu), "up", ns=ns)
            self.shape(self.rate)
            self.far = start_ns_sshd(self.root, self.lab, self.procs, "lab-far", ns,
                                     f"{self.net}.2")
        except BaseException:
            self.stop()
            raise
        self.known_hosts = self.root / "known_hosts"
        self.known_hosts.write_text(self.lab.known_hosts.read_text()
                                    + self.far.known_hosts_line + "\n")
        self.ssh_config = self.root / "ssh_config"
        self.ssh_config.write_text(
            self.lab.ssh_config.read_text() + "\n"
            f"Host lab-far\n    HostName {self.far.address}\n    User {USER}\n"
            f"    IdentityFile {self.lab.identity}\n    IdentitiesOnly yes\n")
        return self

    def shape(self, rate: str | None, *, burst: str = "256kb", latency: str = "50ms") -> None:
        """Shape what leaves this machine for lab-far to `rate` (by default a token bucket of
        256 KiB, up to 50 ms of queue, as a switch port would; a queue too short to hold a
        burst drops packets, as a lossy link does); None: the link runs free."""
        run([TC, "qdisc", "del", "dev", self.near_link, "root"], check=False, timeout=30)
        if rate is not None:
            run([TC, "qdisc", "add", "dev", self.near_link, "root", "tbf", "rate", rate,
                 "burst", burst, "latency", latency], timeout=30)
        self.rate = rate

    def starve_port(self, port: int) -> None:
        """Starve what goes to `port` on lab-far while all else passes (its ssh sessions stay
        up): an htb class of 8 bit/s that a u32 filter sends that port's packets to, as a
        firewall that silently stops one flow would. `restore()` frees it. (This kernel has
        no netem and no tc actions to drop with; a 1500-byte packet takes 25 min here.)"""
        dev = self.near_link
        run([TC, "qdisc", "del", "dev", dev, "root"], check=False, timeout=30)
        run([TC, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10"],
            timeout=30)
        run([TC, "class", "add", "dev", dev, "parent", "1:", "classid", "1:10", "htb", "rate",
             self.rate or "10gbit"], timeout=30)
        run([TC, "class", "add", "dev", dev, "parent", "1:", "classid", "1:20", "htb", "rate",
             "8bit", "ceil", "8bit"], timeout=30)
        run([TC, "filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1",
             "u32", "match", "ip", "dport", str(port), "0xffff", "flowid", "1:20"], timeout=30)

    def restore(self) -> None:
        """The link as `shape` left it: the starved port flows again."""
        self.shape(self.rate)

    def start_near(self, cpu_percent: int) -> None:
        """lab-near: an sshd on 127.0.0.1 whose sessions' `ssh` and `socat` (wrappers first in
        their PATH) join a cgroup of `cpu_percent` of one core before they run; nothing else is
        held back."""
        group = self._cpu_group("zmsn", cpu_percent)
        bindir = self._wrappers("lab-near", ("ssh", "socat"), group, ONE_CORE)
        self.near_port = self._loopback_sshd("lab-near", bindir)

    def start_tight(self, cpu_percent: int) -> None:
        """lab-tight: an sshd on 127.0.0.1 that runs in a cgroup of `cpu_percent` of one core,
        whose sessions' `mbuffer` and `zfs` (wrappers first in their PATH) leave it before they
        run: the sshd that decrypts an ssh transport's stream is held back, as on a NAS whose
        one weak core receives, and the pool is not."""
        group = self._cpu_group("zmst", cpu_percent)
        bindir = self._wrappers("lab-tight", ("mbuffer", "zfs"), CGROUP_CPU, ALL_CORES)
        self.tight_port = self._loopback_sshd("lab-tight", bindir, group)

    def _cpu_group(self, prefix: str, cpu_percent: int) -> Path:
        group = CGROUP_CPU / f"{prefix}{self.suffix}"
        group.mkdir()
        self.cgroups.append(group)
        (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (group / "cpu.cfs_quota_us").write_text(str(cpu_percent * PERIOD_US // 100))
        return group

    def _wrappers(self, name: str, programs: tuple[str, ...], group: Path, cores: str) -> Path:
        """A directory of wrappers that move `programs` into cgroup `group`, on `cores`, before
        they run."""
        bindir = self.root / f"{name}-bin"
        bindir.mkdir()
        for program in programs:
            real = shutil.which(program, path="/usr/sbin:/usr/bin:/sbin:/bin")
            assert real is not None, program
            wrapper = bindir / program
            wrapper.write_text(f"#!/bin/sh\necho $$ > {group / 'cgroup.procs'}\n"
                               f"exec {TASKSET} -c {cores} {real} \"$@\"\n")
            wrapper.chmod(0o755)
        return bindir

    def _loopback_sshd(self, name: str, bindir: Path, group: Path | None = None) -> int:
        """An sshd `name` on 127.0.0.1 (in cgroup `group`, if given) whose sessions have
        `bindir` first in their PATH; in this lab's known_hosts and ssh_config."""
        assert self.far is not None
        host_key = self.root / f"ssh_host_{name}_ed25519_key"
        pub = _keygen(host_key, f"zmigrate-{name}")
        port = free_port()
        cfg = _sshd_config(self.root, name, port, host_key,
                           self.lab.identity.parent / "authorized_keys",
                           env={"PATH": f"{bindir}:/usr/sbin:/usr/bin:/sbin:/bin"},
                           home=self.lab.home)
        argv = [SSHD, "-D", "-e", "-f", str(cfg)]
        if group is not None:
            argv = ["sh", "-c", f'echo $$ > {group / "cgroup.procs"} && exec "$@"', "sh",
                    TASKSET, "-c", ONE_CORE, *argv]
        log_path = self.root / f"sshd_{name}.log"
        with log_path.open("ab") as log:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    start_new_session=True)
        self.procs.append(proc)
        if not wait_until(lambda: tcp_accepts(port), 15) or proc.poll() is not None:
            raise LabUnavailableError(f"sshd {name} did not come up: " + log_path.read_text())
        with self.known_hosts.open("a") as f:
            f.write(f"[127.0.0.1]:{port} {pub}\n")
        with self.ssh_config.open("a") as f:
            f.write(f"\nHost {name}\n    HostName 127.0.0.1\n    Port {port}\n"
                    f"    User {USER}\n    IdentityFile {self.lab.identity}\n"
                    "    IdentitiesOnly yes\n")
        return port

    def ssh_options(self) -> list[str]:
        """`--ssh-option`s with which a lab host's own ssh reaches lab-far (ssh transport)."""
        return [f"--ssh-option=IdentityFile={self.lab.identity}",
                f"--ssh-option=UserKnownHostsFile={self.known_hosts}",
                "--ssh-option=IdentitiesOnly=yes"]

    def stop(self) -> None:
        self._stop_sshds()
        if self.namespace:
            run([IP, "netns", "del", self.namespace], check=False, timeout=30)
        run([IP, "link", "del", self.near_link], check=False, timeout=30)
        for group in self.cgroups:
            procs = group / "cgroup.procs"
            # Empty once its processes are gone (sessions end with their sshd).
            wait_until(lambda p=procs: not p.read_text().strip(), 10, 0.1)
            group.rmdir()
        self.cgroups.clear()
