"""Pytest fixtures of the real lab.

Fixtures:
    zfs_daemon (session) -> ZfsDaemon: zfs-fuse runs and `zpool list` answers; stopped at the
        end only if this session started it.
    make_pool (function) -> PoolFactory: `make_pool(tag="p", size_mb=768) -> Pool` makes a
        file-backed pool `zmt<6 hex><tag>` mounted at `<tmp>/mnt/<name>`; all are destroyed and
        their images deleted at teardown.
    pools (function) -> (Pool, Pool): a source ("src") and a destination ("dst") pool.
    lab (session) -> Lab: two sshd on 127.0.0.1 (aliases lab-src, lab-dst in `lab.ssh_config`).
    bare_host (session, two params) -> LabHost: another sshd, alias lab-bare (its sh has job
        control, FreeBSD-like) or lab-bare-dash (dash), in the lab's ssh_config, whose sessions'
        PATH holds no setsid, ss or flock.
    nozstd_host (session) -> LabHost: lab-nozstd, an sshd whose sessions' PATH lacks zstd.
    jump_lab (session) -> JumpLab: network namespaces with lab-jump (reachable) and lab-behind
        (reachable only from lab-jump); its own ssh_config and known_hosts (lab hosts included).
    shaped_lab (session) -> ShapedLab: lab-far, an sshd in a network namespace behind a veth
        pair with MTU 1500 whose direction from here is shaped by tbf (400 Mbit/s to start;
        `shape(rate)` changes it); its own ssh_config and known_hosts (lab hosts included).
    password_host (session) -> LabHost: lab-pw, an sshd taking root's password PASSWORD only.
    sudo_host (session) -> (LabHost, SudoUser): lab-sudo, an sshd that a real non-root user
        (made for the session, removed after) logs in to with the lab's key; sudoers grants it
        exactly the line of docs/permissions.md (zfs, pkill, pgrep).
    lab_env (function) -> Lab: os.environ points zmigrate at the lab ssh_config and known_hosts,
        SSH_AUTH_SOCK removed.
    lab_hosts (function) -> (Host, Host): engine hosts connected to lab-src and lab-dst.
    loss_watch (function) -> LossWatch class: `w = loss_watch(ROOT); w.start()` before an
        operation, `w.check(plan.destroys)` / `w.check_json(stdout)` after: what disappeared or
        became hidden under ROOT on the destination must be on the plan's list (lab.losses).

When the lab cannot come up (not root, no /dev/fuse, programs missing) the tests that need it
fail - never skip - with a message naming the set-up command.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from zmigrate.engine.hosts import Host, key_dirs
from zmigrate.engine.hosts.login import HostSpec, connect

from .bring_up import running, started
from .losses import LossWatch
from .netns import JumpLab
from .shaped import ShapedLab
from .sshd import Lab, LabHost, SshdLab
from .sudo_user import SudoUser, make_sudo_user, remove_sudo_user
from .util import LabCommandError
from .zfsfuse import (
    LabUnavailableError,
    Pool,
    PoolFactory,
    ZfsDaemon,
    clear_stale_pools,
    ensure_daemon,
    stop_daemon,
)

__all__ = ["Lab", "LabHost", "Pool", "PoolFactory", "ZfsDaemon"]


@pytest.fixture(scope="session")
def zfs_daemon() -> Iterator[ZfsDaemon]:
    try:
        daemon = ensure_daemon()
        clear_stale_pools()
    except (LabUnavailableError, LabCommandError) as exc:
        problem = str(exc)
    else:
        problem = ""
    if problem:
        pytest.fail(problem, pytrace=False)
    try:
        yield daemon
    finally:
        stop_daemon(daemon)


@pytest.fixture
def make_pool(zfs_daemon: ZfsDaemon, tmp_path: Path) -> Iterator[PoolFactory]:
    factory = PoolFactory(tmp_path / "lab-pools")
    try:
        yield factory
    finally:
        factory.cleanup()


@pytest.fixture
def pools(make_pool: PoolFactory) -> tuple[Pool, Pool]:
    return make_pool("src"), make_pool("dst")


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    runner = SshdLab(tmp_path_factory.mktemp("lab"))
    with started(runner.start, runner.stop) as the_lab:
        yield the_lab


@pytest.fixture(scope="session", params=["bash", "dash"])
def bare_host(request: pytest.FixtureRequest, lab: Lab,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabHost]:
    """lab-bare (sh with job control, like FreeBSD's) or lab-bare-dash (dash: no job control
    without a tty, so a pipeline's group is the one sshd made for the session)."""
    runner = SshdLab(tmp_path_factory.mktemp("bare"))
    alias = "lab-bare" if request.param == "bash" else "lab-bare-dash"
    with started(lambda: runner.start_bare(lab, alias, f"/bin/{request.param}"),
                 runner.stop) as host:
        yield host


@pytest.fixture(scope="session")
def nozstd_host(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabHost]:
    """lab-nozstd: a lab host whose sessions' PATH has everything but zstd (like a host where
    nobody installed it)."""
    runner = SshdLab(tmp_path_factory.mktemp("nozstd"))
    with started(lambda: runner.start_bare(lab, "lab-nozstd", "/bin/bash",
                                           without=frozenset({"zstd"})),
                 runner.stop) as host:
        yield host


@pytest.fixture(scope="session")
def shaped_lab(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ShapedLab]:
    with running(ShapedLab(tmp_path_factory.mktemp("shaped"), lab)) as runner:
        yield runner


@pytest.fixture(scope="session")
def jump_lab(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JumpLab]:
    with running(JumpLab(tmp_path_factory.mktemp("jump"), lab)) as runner:
        yield runner


PASSWORD = "zmh-lab-password"


@pytest.fixture(scope="session")
def password_host(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabHost]:
    """lab-pw: an sshd that takes root's password PASSWORD only (its own /etc/shadow view)."""
    runner = SshdLab(tmp_path_factory.mktemp("pw"))
    with started(lambda: runner.start_password(lab, PASSWORD), runner.stop) as host:
        yield host


@pytest.fixture(scope="session")
def sudo_host(lab: Lab, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[tuple[LabHost, SudoUser]]:
    runner = SshdLab(tmp_path_factory.mktemp("sudo"))
    user: SudoUser | None = None
    problem = ""
    try:
        try:
            user = make_sudo_user()
            host = runner.start_for_user(lab, "lab-sudo", user.name, user.home)
        except (LabUnavailableError, LabCommandError) as exc:
            problem = str(exc)
        if problem:
            pytest.fail(problem, pytrace=False)
        assert user is not None
        yield host, user
    finally:
        runner.stop()
        if user is not None:
            remove_sudo_user(user)


@pytest.fixture
def lab_env(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> Lab:
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(lab.ssh_config))
    monkeypatch.setenv("ZMIGRATE_KNOWN_HOSTS", str(lab.known_hosts))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return lab


@pytest.fixture
def lab_hosts(lab_env: Lab) -> Iterator[tuple[Host, Host]]:
    """Connected engine hosts for lab-src and lab-dst (one SSH control session each)."""
    src = connect(HostSpec("lab-src"))
    dst = connect(HostSpec("lab-dst"))
    try:
        yield src, dst
    finally:
        src.close()
        dst.close()


@pytest.fixture
def loss_watch() -> type[LossWatch]:
    """The invariant "nothing lost unseen" (lab.losses.LossWatch), to wrap an operation."""
    return LossWatch


def _key_dirs() -> set[str]:
    return {p.name for p in Path("/tmp").glob(f"{key_dirs.KEY_PREFIX}*")}


@pytest.fixture
def keys_left() -> Callable[[], list[str]]:
    """The private transport's key directories the test's jobs made and left: other tests'
    jobs (private is the lab's default) cut off from their host may have left theirs before
    (the next private step's sweep takes them, hosts/key_dirs.stale_sweep)."""
    before = _key_dirs()
    return lambda: sorted(_key_dirs() - before)
