"""A computer that starts a job and then loses its network: "the starter", a network namespace
joined to this machine by a veth pair, whose only way out is that veth; and runner hosts on
this machine that it reaches over it (`send --detach --runner lab-runner`).

    starter ns (zmst*) 10.217.K.2/30 --veth-- 10.217.K.1/30 root ns: sshd lab-runner (:22),
                                                           lab-runner-bare (:122),
                                                           lab-runner-lost (:222)

The runner hosts' sessions carry the runner's own setup (sshd SetEnv): lab-runner has zmigrate
(this venv) on its PATH and the lab's ssh config and known_hosts as its own, so it logs in to
lab-src and lab-dst; lab-runner-bare's PATH has no zmigrate (a host where nobody installed it);
lab-runner-lost has zmigrate but an empty known_hosts (it cannot log in to the lab's hosts).
The starter's ssh config knows only the runner hosts. `cut()` takes the starter's end of the
veth down (its packets vanish, as on a laptop that left the network); `back()` brings it up.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import zmigrate as zmigrate_package
from zmigrate.engine.runner import state as job_state

from .netns import IP, NSENTER, NamespaceLab
from .sshd import SSHD, USER, Lab, SshdLab, _keygen, _sshd_config
from .util import Run, free_octet, run, tcp_accepts, wait_until
from .zfsfuse import LabUnavailableError

SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
RUNNERS = {"lab-runner": 22, "lab-runner-bare": 122, "lab-runner-lost": 222}


@dataclass
class StarterLab(NamespaceLab):
    root: Path
    lab: Lab
    suffix: str = field(default_factory=lambda: secrets.token_hex(3))
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    namespace: str = ""
    net: str = ""  # "10.217.K": .1 this machine (the runner hosts), .2 the starter
    ssh_config: Path = field(default_factory=Path)
    known_hosts: Path = field(default_factory=Path)

    @property
    def starter_link(self) -> str:
        return f"zmsu{self.suffix}"

    @property
    def runner_jobs(self) -> Path:
        """lab-runner's own jobs directory (its records)."""
        return self.root / "runner-jobs"

    @property
    def starter_jobs(self) -> Path:
        """The starter's jobs directory (its pointers)."""
        return self.root / "starter-jobs"

    def start(self) -> StarterLab:
        self.root.mkdir(parents=True, exist_ok=True)
        self.net = f"10.217.{free_octet('10.217')}"
        ns = self.namespace = f"zmst{self.suffix}"
        near = f"zmsr{self.suffix}"
        try:
            self._ip("netns", "add", ns)
            self._ip("link", "set", "lo", "up", ns=ns)
            self._ip("link", "add", near, "type", "veth", "peer", "name", self.starter_link)
            self._ip("link", "set", self.starter_link, "netns", ns)
            self._ip("addr", "add", f"{self.net}.1/30", "dev", near)
            self._ip("link", "set", near, "up")
            self._ip("addr", "add", f"{self.net}.2/30", "dev", self.starter_link, ns=ns)
            self._ip("link", "set", self.starter_link, "up", ns=ns)
            lines = [self._runner(alias, port) for alias, port in RUNNERS.items()]
        except BaseException:
            self.stop()
            raise
        self.known_hosts = self.root / "known_hosts"
        address = f"{self.net}.1"
        self.known_hosts.write_text("".join(
            f"{address if port == 22 else f'[{address}]:{port}'} {pub}\n"
            for port, pub in zip(RUNNERS.values(), lines, strict=True)))
        self.ssh_config = self.root / "ssh_config"
        self.ssh_config.write_text("".join(
            f"Host {alias}\n    HostName {self.net}.1\n    Port {port}\n    User {USER}\n"
            f"    IdentityFile {self.lab.identity}\n    IdentitiesOnly yes\n"
            "    ConnectTimeout 5\n\n" for alias, port in RUNNERS.items()))
        return self

    def _runner_env(self, alias: str) -> dict[str, str]:
        """What the runner host's sessions see: its PATH, and its own ssh setup and records."""
        venv_bin = str(Path(sys.executable).parent)
        empty = self.root / "empty_known_hosts"
        empty.touch()
        return {
            "PATH": SYSTEM_PATH if alias == "lab-runner-bare" else f"{venv_bin}:{SYSTEM_PATH}",
            "PYTHONPATH": str(Path(zmigrate_package.__file__).parent.parent),
            "ZMIGRATE_SSH_CONFIG": str(self.lab.ssh_config),
            "ZMIGRATE_KNOWN_HOSTS": str(empty if alias == "lab-runner-lost"
                                        else self.lab.known_hosts),
            "ZMIGRATE_JOBS_DIR": str(self.runner_jobs),
            "ZMIGRATE_DATA_DIR": str(self.root / "runner-data"),
            "ZMIGRATE_RUNNER_LAUNCHER": "setsid",
        }

    def _runner(self, alias: str, port: int) -> str:
        """Start the runner host `alias`'s sshd on this machine's end of the veth; its host
        key's public line."""
        host_key = self.root / f"ssh_host_{alias}_ed25519_key"
        pub = _keygen(host_key, f"zmigrate-{alias}")
        cfg = _sshd_config(self.root, alias, port, host_key,
                           self.lab.identity.parent / "authorized_keys",
                           address=f"{self.net}.1", env=self._runner_env(alias),
                           home=self.lab.home)
        log_path = self.root / f"sshd_{alias}.log"
        with log_path.open("ab") as log:
            proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(cfg)], stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=log, start_new_session=True)
        self.procs.append(proc)
        if not wait_until(lambda: tcp_accepts(port, f"{self.net}.1"), 15) \
                or proc.poll() is not None:
            raise LabUnavailableError(f"sshd {alias} did not come up: {log_path.read_text()}")
        return pub

    def env(self) -> dict[str, str]:
        env = super().env()
        env["ZMIGRATE_JOBS_DIR"] = str(self.starter_jobs)
        env["ZMIGRATE_DATA_DIR"] = str(self.root / "starter-data")
        return env

    def _argv(self, *args: str) -> list[str]:
        return [NSENTER, f"--net=/run/netns/{self.namespace}", sys.executable, "-m",
                "zmigrate", *args]

    def zmigrate(self, *args: str, timeout: float = 300, input: str | None = None) -> Run:
        """The CLI run on the starter (in its namespace), stdin closed."""
        proc = subprocess.run(
            self._argv(*args), capture_output=True, text=True, timeout=timeout, env=self.env(),
            input=input, stdin=None if input is not None else subprocess.DEVNULL)
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        """The CLI started on the starter, its output in pipes (for the caller to read)."""
        return subprocess.Popen(self._argv(*args), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                env=self.env())

    def cut(self) -> None:
        """The starter's end of the veth goes down: it has no network at all."""
        self._ip("link", "set", self.starter_link, "down", ns=self.namespace)

    def back(self) -> None:
        self._ip("link", "set", self.starter_link, "up", ns=self.namespace)

    @contextlib.contextmanager
    def deaf(self, alias: str = "lab-runner") -> Iterator[None]:
        """Runner host `alias` drops every session it holds and answers no login until the
        block ends (its sshd stopped: the kernel still accepts the TCP connection, the banner
        never comes), as a host whose network went away and came back."""
        master = self.procs[list(RUNNERS).index(alias)]
        master.send_signal(signal.SIGSTOP)
        try:
            for pid in _sessions_of(master.pid):
                os.kill(pid, signal.SIGKILL)
            yield
        finally:
            master.send_signal(signal.SIGCONT)

    def stop_runners(self) -> None:
        """Stop the runner processes lab-runner left running (a failed test's)."""
        for path in self.runner_jobs.glob("*/state.json"):
            s = job_state.read(path)
            if s.state.final or not job_state.pid_alive(s.pid, s.id) or s.pid is None:
                continue
            os.kill(s.pid, signal.SIGTERM)
            wait_until(lambda pid=s.pid, job=s.id: not job_state.pid_alive(pid, job), 60, 0.2)

    def stop(self) -> None:
        self.stop_runners()
        for proc in self.procs:
            if proc.poll() is None:
                SshdLab._stop(proc)
        self.procs.clear()
        if self.namespace:
            run([IP, "netns", "del", self.namespace], check=False, timeout=30)
        run([IP, "link", "del", f"zmsr{self.suffix}"], check=False, timeout=30)



def _sessions_of(master: int) -> list[int]:
    """The per-connection sshd processes under sshd `master` (each holds one login)."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        comm, rest = text.split("(", 1)[1].rsplit(")", 1)
        if int(rest.split()[1]) == master and comm == "sshd":
            kids.append(int(stat.parent.name))
    return kids
