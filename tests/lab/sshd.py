"""Two throwaway sshd "hosts" on 127.0.0.1, with their keys, ssh_config and known_hosts."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .util import (
    SETUP_HINT,
    Run,
    free_port,
    parent_pid,
    proc_cmdlines,
    run,
    tcp_accepts,
    zmigrate,
)
from .zfsfuse import LabUnavailableError, require_programs, require_root

SSHD = "/usr/sbin/sshd"
SSH_KEYGEN = "/usr/bin/ssh-keygen"
ADDRESS = "127.0.0.1"
USER = "root"
# What the "bare" host's PATH lacks (FreeBSD has none of them).
BARE_WITHOUT = frozenset({"setsid", "ss", "flock"})


@dataclass(frozen=True, slots=True)
class LabHost:
    """One lab "host": an sshd on 127.0.0.1 reachable as `alias` through the lab ssh_config.

    `host_key_fingerprint` is "SHA256:..." exactly as `ssh-keygen -lf` prints it; `public_key` is
    the host key as "ssh-ed25519 AAAA..." and `host_key` its private key file.
    """

    alias: str
    address: str
    port: int
    user: str
    host_key_fingerprint: str
    sshd_pid: int
    public_key: str = ""
    host_key: Path = field(default_factory=Path)
    config: Path = field(default_factory=Path)
    log: Path = field(default_factory=Path)

    @property
    def known_hosts_entry(self) -> str:
        """The known_hosts name of this host: "[127.0.0.1]:PORT"."""
        return f"[{self.address}]:{self.port}"

    @property
    def known_hosts_line(self) -> str:
        return f"{self.known_hosts_entry} {self.public_key}"


@dataclass(frozen=True, slots=True)
class Lab:
    """The two lab hosts and the client-side files that reach them."""

    ssh_config: Path
    known_hosts: Path
    identity: Path
    src: LabHost
    dst: LabHost

    @property
    def hosts(self) -> tuple[LabHost, LabHost]:
        return (self.src, self.dst)

    @property
    def home(self) -> Path:
        """The HOME of every lab host's root sessions (sessions_home)."""
        return sessions_home(self.identity.parent)

    def env(self) -> dict[str, str]:
        """os.environ for a subprocess (the CLI) that must use the lab's ssh_config/known_hosts."""
        env = dict(os.environ)
        env["ZMIGRATE_SSH_CONFIG"] = str(self.ssh_config)
        env["ZMIGRATE_KNOWN_HOSTS"] = str(self.known_hosts)
        env.pop("SSH_AUTH_SOCK", None)
        return env

    def zmigrate(self, *args: str, timeout: float = 300, input: str | None = None) -> Run:
        """The CLI run against this lab (its ssh_config and known_hosts), stdin closed."""
        return zmigrate(self.env(), *args, timeout=timeout, input=input)

    def ssh_options(self) -> list[str]:
        """OpenSSH `-o` options with which a lab host's own `ssh` reaches the other sshd.

        The port and user are not included: add `-p PORT root@127.0.0.1`.
        """
        return [
            "-o", f"IdentityFile={self.identity}",
            "-o", f"UserKnownHostsFile={self.known_hosts}",
            "-o", "IdentitiesOnly=yes",
            "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=yes",
        ]


def sessions_home(root: Path) -> Path:
    """The lab hosts' root sessions' HOME under the lab's `root`, made empty here: this
    machine's root's start-up files (its .bashrc runs pyenv's init, 0.1-0.3 s of CPU for every
    session, seconds under a CPU quota) are no part of a host's session start. One for all the
    lab's hosts, as they are one machine: a lease one host's run writes is where another's
    `ps` finds its group (hosts/leftovers.py)."""
    home = root / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    return home


def preflight_sshd() -> None:
    require_root("the sshd lab")
    require_programs("the sshd lab", SSHD, SSH_KEYGEN, "/usr/bin/ssh", "/usr/bin/ss")


def _keygen(path: Path, comment: str) -> str:
    """Make an ed25519 key pair without passphrase at `path`; return "ssh-ed25519 AAAA..."."""
    run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)])
    kind, b64 = Path(f"{path}.pub").read_text().split()[:2]
    return f"{kind} {b64}"


def keygen_fingerprint(pub: Path) -> str:
    """The "SHA256:..." fingerprint of a public key file, as `ssh-keygen -lf` prints it."""
    return run([SSH_KEYGEN, "-lf", str(pub)]).stdout.split()[1]


def _sshd_config(root: Path, name: str, port: int, host_key: Path,
                 authorized_keys: Path, extra: tuple[str, ...] = (),
                 address: str = ADDRESS, env: Mapping[str, str] | None = None,
                 home: Path | None = None) -> Path:
    """An sshd's config: its sessions see `env` and, given one, `home` as their HOME (sshd
    takes the first SetEnv line only, so both go into one)."""
    setenv = {**(env or {}), **({"HOME": str(home)} if home is not None else {})}
    cfg = root / f"sshd_{name}.conf"
    cfg.write_text(
        "\n".join([
            # first: sshd takes the first value of a keyword
            *([" ".join(["SetEnv", *(f"{k}={v}" for k, v in setenv.items())])] if setenv
              else []),
            *extra,
            f"ListenAddress {address}",
            f"Port {port}",
            f"HostKey {host_key}",
            f"PidFile {root / f'sshd_{name}.pid'}",
            f"AuthorizedKeysFile {authorized_keys}",
            "PermitRootLogin prohibit-password",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "StrictModes no",
            "MaxSessions 64",
            "MaxStartups 64",
            "PrintMotd no",
            "LogLevel ERROR",
            "",
        ])
    )
    return cfg


def _listening_pid(port: int, pid: int) -> bool:
    """Whether `pid` is the process listening on 127.0.0.1:`port`."""
    out = run(["ss", "-Hltnp", f"( sport = :{port} )"], check=False, timeout=10).stdout
    return f"pid={pid}," in out


@dataclass
class SshdLab:
    """Starts the lab sshd pair under `root` and stops it again."""

    root: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def _start_one(self, name: str, host_key: Path, authorized_keys: Path,
                   attempts: int = 5, extra: tuple[str, ...] = (),
                   env: Mapping[str, str] | None = None, home: Path | None = None,
                   ) -> tuple[int, subprocess.Popen[bytes], Path, Path]:
        log = self.root / f"sshd_{name}.log"
        last = ""
        for _ in range(attempts):
            port = free_port()
            cfg = _sshd_config(self.root, name, port, host_key, authorized_keys, extra,
                               env=env, home=home)
            check = run([SSHD, "-t", "-f", str(cfg)], check=False, timeout=30)
            if check.returncode != 0:
                raise LabUnavailableError(f"sshd rejects the lab config {cfg}: "
                                     f"{check.stderr.strip()}; {SETUP_HINT}")
            with log.open("ab") as logf:
                proc = subprocess.Popen(
                    [SSHD, "-D", "-e", "-f", str(cfg)],
                    stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, start_new_session=True,
                )
            self.procs.append(proc)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and proc.poll() is None:
                if tcp_accepts(port) and _listening_pid(port, proc.pid):
                    return port, proc, cfg, log
                time.sleep(0.05)
            self._stop(proc)
            last = log.read_text(errors="replace").strip()
            if "Address already in use" not in last:
                break
        raise LabUnavailableError(f"lab sshd {name} did not come up: {last}; {SETUP_HINT}")

    def start(self) -> Lab:
        preflight_sshd()
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation directory
        root = self.root
        root.mkdir(parents=True, exist_ok=True)
        identity = root / "id_ed25519"
        user_pub = _keygen(identity, "zmigrate-lab-user")
        authorized_keys = root / "authorized_keys"
        authorized_keys.write_text(user_pub + " zmigrate-lab-user\n")
        home = sessions_home(root)
        hosts: list[LabHost] = []
        for name in ("src", "dst"):
            host_key = root / f"ssh_host_{name}_ed25519_key"
            pub = _keygen(host_key, f"zmigrate-lab-{name}")
            port, proc, cfg, log = self._start_one(name, host_key, authorized_keys, home=home)
            hosts.append(LabHost(
                alias=f"lab-{name}",
                address=ADDRESS,
                port=port,
                user=USER,
                host_key_fingerprint=keygen_fingerprint(Path(f"{host_key}.pub")),
                sshd_pid=proc.pid,
                public_key=pub,
                host_key=host_key,
                config=cfg,
                log=log,
            ))
        src, dst = hosts
        known_hosts = root / "known_hosts"
        known_hosts.write_text("".join(h.known_hosts_line + "\n" for h in hosts))
        ssh_config = root / "ssh_config"
        blocks = []
        for h in hosts:
            blocks.append(
                f"Host {h.alias}\n"
                f"    HostName {h.address}\n"
                f"    Port {h.port}\n"
                f"    User {h.user}\n"
                f"    IdentityFile {identity}\n"
                f"    IdentitiesOnly yes\n"
                f"    UserKnownHostsFile {known_hosts}\n"
                f"    StrictHostKeyChecking yes\n"
                f"    BatchMode yes\n"
            )
        ssh_config.write_text("\n".join(blocks))
        return Lab(ssh_config, known_hosts, identity, src, dst)

    def start_bare(self, lab: Lab, alias: str = "lab-bare", sh: str = "/bin/bash",
                   without: frozenset[str] = BARE_WITHOUT) -> LabHost:
        """Another lab host, `alias`, whose sessions' PATH holds no setsid, ss or flock (or
        none of the programs `without` names).

        Like a FreeBSD or TrueNAS CORE host: its PATH is a directory of links to every program of
        /usr/sbin, /usr/bin, /sbin and /bin but those three, and its `sh` is `sh`: by default one
        with job control without a tty (bash, as FreeBSD's sh); /bin/dash has none. The alias is
        added to the lab's ssh_config and its host key to the lab's known_hosts.
        """
        bindir = self.root / f"{alias}-bin"
        bindir.mkdir(parents=True, exist_ok=True)
        for d in ("/usr/sbin", "/usr/bin", "/sbin", "/bin"):
            for entry in sorted(Path(d).iterdir()):
                link = bindir / entry.name
                if entry.name in without or link.is_symlink() or link.exists():
                    continue
                if entry.is_file() and os.access(entry, os.X_OK):
                    link.symlink_to(entry.resolve())
        (bindir / "sh").unlink(missing_ok=True)
        (bindir / "sh").symlink_to(sh)
        return self._start_with_path(lab, alias, str(bindir))

    def start_wrapped(self, lab: Lab, alias: str, wrappers: dict[str, str]) -> LabHost:
        """Another lab host, `alias`, whose sessions find the programs named in `wrappers`
        first as those shell scripts (e.g. a `zfs` that is slow to start a send)."""
        bindir = self.root / f"{alias}-bin"
        bindir.mkdir(parents=True, exist_ok=True)
        for name, script in wrappers.items():
            (bindir / name).write_text(script)
            (bindir / name).chmod(0o755)
        return self._start_with_path(lab, alias, f"{bindir}:/usr/sbin:/usr/bin:/sbin:/bin")

    def start_for_user(self, lab: Lab, alias: str, user: str, home: Path) -> LabHost:
        """Another lab host, `alias`, that `user` (not root) logs in to with the lab's key
        (sshd reads it as that user: from `home`/.ssh); its sessions' PATH holds /usr/sbin
        (where zfs is), as a Debian root's does."""
        keys = home / ".ssh" / "authorized_keys"
        keys.parent.mkdir(mode=0o700, exist_ok=True)
        shutil.copyfile(lab.identity.parent / "authorized_keys", keys)
        shutil.chown(keys.parent, user, user)
        shutil.chown(keys, user, user)
        return self._start_with_path(lab, alias, "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                                     user, keys)

    def _start_with_path(self, lab: Lab, alias: str, path: str, user: str = USER,
                         authorized_keys: Path | None = None) -> LabHost:
        """An sshd whose sessions' PATH is `path`, added to the lab's ssh_config and
        known_hosts as `alias` (logging in as `user`)."""
        host_key = self.root / f"ssh_host_{alias}_ed25519_key"
        pub = _keygen(host_key, f"zmigrate-{alias}")
        port, proc, cfg, log = self._start_one(
            alias, host_key, authorized_keys or lab.identity.parent / "authorized_keys",
            env={"PATH": path}, home=lab.home if user == USER else None)
        host = LabHost(
            alias=alias, address=ADDRESS, port=port, user=user,
            host_key_fingerprint=keygen_fingerprint(Path(f"{host_key}.pub")), sshd_pid=proc.pid,
            public_key=pub, host_key=host_key, config=cfg, log=log,
        )
        with lab.known_hosts.open("a") as f:
            f.write(host.known_hosts_line + "\n")
        with lab.ssh_config.open("a") as f:
            f.write(
                f"\nHost {host.alias}\n"
                f"    HostName {host.address}\n"
                f"    Port {host.port}\n"
                f"    User {host.user}\n"
                f"    IdentityFile {lab.identity}\n"
                f"    IdentitiesOnly yes\n"
                f"    UserKnownHostsFile {lab.known_hosts}\n"
            )
        return host

    def start_password(self, lab: Lab, password: str) -> LabHost:
        """A lab host, "lab-pw", that takes root's password `password` (and no key).

        The machine's root password is not touched: the sshd runs in a mount namespace of its
        own in which a copy of /etc/shadow, with root's hash for `password`, is bound over the
        real one. Its host key goes into the lab's known_hosts, its alias (no IdentityFile) into
        the lab's ssh_config.
        """
        digest = run(["openssl", "passwd", "-6", "-stdin"], input=password + "\n").stdout.strip()
        shadow = self.root / "shadow"
        lines = Path("/etc/shadow").read_text().splitlines()
        shadow.write_text("".join(
            (f"root:{digest}:" + line.split(":", 2)[2] if line.startswith("root:") else line)
            + "\n" for line in lines))
        shadow.chmod(0o640)
        host_key = self.root / "ssh_host_pw_ed25519_key"
        pub = _keygen(host_key, "zmigrate-lab-pw")
        port = free_port()
        cfg = _sshd_config(self.root, "pw", port, host_key, self.root / "no_keys", extra=(
            "PermitRootLogin yes", "PasswordAuthentication yes", "PubkeyAuthentication no"),
            home=lab.home)
        log = self.root / "sshd_pw.log"
        with log.open("ab") as logf:
            proc = subprocess.Popen(
                # Its mount namespace holds copies of the lab's zfs-fuse mounts, and a copy keeps
                # a dataset "busy" for zfs destroy: it must die with this test run, also a
                # killed one (setpriv: SIGKILL when its parent goes).
                ["setpriv", "--pdeathsig", "KILL",
                 "unshare", "--mount", "--propagation", "private", "sh", "-c",
                 'mount --bind "$1" /etc/shadow && exec "$2" -D -e -f "$3"', "zmh",
                 str(shadow), SSHD, str(cfg)],
                stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, start_new_session=True)
        self.procs.append(proc)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and proc.poll() is None and not tcp_accepts(port):
            time.sleep(0.05)
        if proc.poll() is not None or not tcp_accepts(port):
            raise LabUnavailableError(f"the password sshd did not come up: "
                                      f"{log.read_text(errors='replace')}")
        host = LabHost(alias="lab-pw", address=ADDRESS, port=port, user=USER,
                       host_key_fingerprint=keygen_fingerprint(Path(f"{host_key}.pub")),
                       sshd_pid=proc.pid, public_key=pub, host_key=host_key, config=cfg, log=log)
        with lab.known_hosts.open("a") as f:
            f.write(host.known_hosts_line + "\n")
        with lab.ssh_config.open("a") as f:
            f.write(f"\nHost lab-pw\n    HostName {ADDRESS}\n    Port {port}\n    User root\n")
        return host

    @staticmethod
    def _stop(proc: subprocess.Popen[bytes]) -> None:
        """Stop a listening sshd and the per-connection sshd processes it forked."""
        children = [pid for pid in proc_cmdlines() if parent_pid(pid) == proc.pid]
        for pid in [proc.pid, *children]:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)

    def stop(self) -> None:
        """Stop every sshd started here, then delete the keys, configs and logs."""
        for proc in self.procs:
            if proc.poll() is None:
                self._stop(proc)
        self.procs.clear()
        shutil.rmtree(self.root, ignore_errors=True)
