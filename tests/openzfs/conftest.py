"""The OpenZFS lane: a real OpenZFS 2.3 host in a QEMU guest (../shared/openzfs-vm).

Collected only when asked for (env ZMIGRATE_OPENZFS=1, or `-m openzfs`), so the default
`pytest` run stays fast. The session fixture builds the image if needed, boots the guest (or
reuses a running one), points zmigrate at its ssh_config/known_hosts, and stops the guest at the
end only if this session started it. If the guest cannot come up, the tests FAIL, never skip.

Both pools live in one guest; two "hosts" are two control sessions with different labels: the
alias `openzfs-vm` (source) and `root@127.0.0.1` with the forwarded port (destination).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lane_gate import lane_gate

from zmigrate.engine import zfs

from .vm import Pair, Vm, connect_dst, connect_src

VM_DIR = Path(os.environ.get("ZMIGRATE_OPENZFS_VM_DIR",
                             Path(__file__).resolve().parents[3] / "shared" / "openzfs-vm"))
WORK = Path(os.environ.get("WORK", "/var/tmp/openzfs-vm"))
BUILD_TIMEOUT = 3600
START_TIMEOUT = 900


def _requested(config: pytest.Config) -> bool:
    markexpr = str(config.getoption("markexpr", "") or "")
    return os.environ.get("ZMIGRATE_OPENZFS") == "1" or (
        "openzfs" in markexpr and "not openzfs" not in markexpr)


# This directory is left out unless the VM lane was requested, and the end of the run says so.
pytest_ignore_collect, pytest_terminal_summary = lane_gate(
    "OpenZFS lane", _requested,
    lambda files: f"{len(files)} file(s) in tests/openzfs were not collected ({', '.join(files)})"
    ": they need the OpenZFS QEMU guest. Run them with packaging/openzfs-lane.sh "
    "(or ZMIGRATE_OPENZFS=1 / -m openzfs).")


# The lane's core, which CI runs (`packaging/openzfs-lane.sh --core`): on the emulated guest the
# whole lane takes about an hour on a slow machine, more than CI has beside the main suite. One
# test per path only OpenZFS has: its probe, exact estimates, a resume token, a raw encrypted
# send, a tree into a new pool's root, the private transport's tree, a forced send's losses,
# the ends' CPU read from its /proc.
CORE = (
    "test_openzfs.py::test_probe_finds_openzfs_features",
    "test_openzfs.py::test_full_then_incremental_with_exact_estimates",
    "test_openzfs.py::test_cancelled_transfer_resumes_with_only_the_rest",
    "test_openzfs.py::test_encrypted_dataset_is_sent_raw_and_stays_encrypted",
    "test_tree_openzfs.py::test_a_tree_goes_into_a_new_pools_root_as_the_pool_itself",
    "test_private_openzfs.py::test_a_tree_over_private_arrives_verified",
    "test_losses_openzfs.py::test_send_force_loses_only_what_its_plan_names",
    "test_end_cpu_openzfs.py::test_the_guest_tells_a_spinning_group_from_a_sleeping_one",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    files, found = set(), set()
    for item in items:
        path = Path(str(item.fspath))
        if here in path.parents:
            item.add_marker(pytest.mark.openzfs)
            files.add(path.name)
            key = f"{path.name}::{getattr(item, 'originalname', item.name)}"
            if key in CORE:
                item.add_marker(pytest.mark.openzfs_core)
                found.add(key)
    # A renamed test must not leave the core silently smaller.
    if missing := {k for k in CORE if k.split("::")[0] in files} - found:
        raise pytest.UsageError(f"the lane's core names tests that do not exist: {missing}")


def _alive() -> bool:
    if not (VM_DIR / "ssh.sh").exists():
        return False
    try:
        return _script_args("ssh.sh", "true", timeout=60).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def _script_args(name: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WORK": str(WORK)}
    return subprocess.run([str(VM_DIR / name), *args], capture_output=True, text=True, env=env,
                          timeout=timeout, stdin=subprocess.DEVNULL, cwd=VM_DIR)


def _qemu_runs() -> bool:
    """Whether the guest's QEMU (its pidfile's process) runs: booted, however slow to answer."""
    try:
        os.kill(int((WORK / "qemu.pid").read_text().strip()), 0)
    except (OSError, ValueError):
        return False
    return True


def _answers(within: float) -> bool:
    """ssh reaches the guest within `within` s: a running guest under TCG on a loaded machine
    can take minutes per login (ssh's own 10 s banner timeout expires), never a reason to
    build or boot another."""
    deadline = time.monotonic() + within
    while True:
        if _alive():
            return True
        if time.monotonic() > deadline or not _qemu_runs():
            return False
        time.sleep(2)


def _bring_up() -> tuple[bool, str]:
    """(started by us, problem): build if needed and boot, or reuse a running guest."""
    if not VM_DIR.is_dir():
        return False, f"the OpenZFS VM scripts are missing: {VM_DIR} (../shared/openzfs-vm)"
    running = _qemu_runs()
    if running and not _answers(START_TIMEOUT):
        return False, (f"the guest runs (QEMU pid in {WORK}/qemu.pid) but ssh did not answer "
                       f"within {START_TIMEOUT} s; console log {WORK}/console.log")
    if running or _alive():
        # start.sh rewrites ssh_config/known_hosts for the running guest
        r = _script_args("start.sh", timeout=START_TIMEOUT)
        return False, "" if r.returncode == 0 else f"start.sh failed:\n{r.stderr[-2000:]}"
    if os.geteuid() != 0:
        return False, "the OpenZFS VM needs root (build.sh/start.sh): run the lane as root"
    try:
        r = _script_args("build.sh", timeout=BUILD_TIMEOUT)
        if r.returncode != 0:
            return False, (f"build.sh failed (logs in {WORK}/logs):\n{r.stdout[-1500:]}"
                           f"\n{r.stderr[-1500:]}")
        r = _script_args("start.sh", timeout=START_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        return False, f"{exc.cmd} did not finish within {exc.timeout:.0f} s"
    if r.returncode != 0:
        return True, (f"start.sh failed (console log {WORK}/console.log):\n{r.stdout[-1500:]}"
                      f"\n{r.stderr[-1500:]}")
    return True, ""


@pytest.fixture(scope="session")
def vm() -> Iterator[Vm]:
    started, problem = _bring_up()
    try:
        if problem:
            pytest.fail(f"OpenZFS lab is not available: {problem}", pytrace=False)
        the_vm = Vm(VM_DIR, WORK, int((WORK / "ssh.port").read_text().strip()),
                    WORK / "ssh_config", WORK / "known_hosts", WORK / "id_ed25519")
        with pytest.MonkeyPatch.context() as mp:  # restores the three variables at the end
            mp.setenv("ZMIGRATE_SSH_CONFIG", str(the_vm.ssh_config))
            mp.setenv("ZMIGRATE_KNOWN_HOSTS", str(the_vm.known_hosts))
            mp.delenv("SSH_AUTH_SOCK", raising=False)
            yield the_vm
    finally:
        if started:
            _script_args("stop.sh", timeout=120)


@pytest.fixture(scope="session")
def pair(vm: Vm) -> Iterator[Pair]:
    src = connect_src()
    dst = connect_dst(vm)
    try:
        caps = zfs.probe(src)
        yield Pair(src, dst, caps, zfs.probe(dst))
    finally:
        src.close()
        dst.close()


@pytest.fixture
def tag(vm: Vm) -> Iterator[str]:
    """A unique dataset name for one test; srcpool/TAG and dstpool/TAG* are removed after it."""
    name = "zt" + secrets.token_hex(3)
    yield name
    vm.ssh(f"for d in $(zfs list -H -o name -d 1 srcpool dstpool | grep '/{name}'); do "
           f"zfs destroy -R \"$d\"; done; zfs destroy -r dstpool/hog-{name} 2>/dev/null; true",
           check=False)


@pytest.fixture
def tree(vm: Vm, tag: str) -> Iterator[str]:
    """srcpool/TAG for one test. Afterwards: readonly set back on the source (a --final run
    leaves it on), srcpool/TAG and dstpool/TAG destroyed with everything under them (`tag`
    then sweeps any other dstpool/TAG*), the key file and mount directories removed."""
    yield tag
    vm.ssh(f"if zfs list srcpool/{tag} >/dev/null 2>&1; then "
           f"zfs inherit -r readonly srcpool/{tag}; zfs destroy -R srcpool/{tag}; fi; "
           f"if zfs list dstpool/{tag} >/dev/null 2>&1; then zfs destroy -R dstpool/{tag}; fi; "
           f"rm -f /root/{tag}.pass; rm -rf /mnt/{tag}; true", check=False)


@contextlib.contextmanager
def _file_pool(vm: Vm, prefix: str, options: str) -> Iterator[str]:
    """A pool of its own on the guest (a 256 MiB file), made with `options`; destroyed after."""
    name = f"{prefix}{secrets.token_hex(3)}"
    image = f"/var/tmp/{name}.img"
    vm.ssh(f"truncate -s 256M {image} && zpool create {options} {name} {image}")
    try:
        yield name
    finally:
        vm.ssh(f"zpool destroy -f {name}; rm -f {image}", check=False)


@pytest.fixture
def grub_pool(vm: Vm) -> Iterator[str]:
    """A pool on the guest kept compatible with GRUB (`compatibility=grub2`, as Ubuntu's boot
    pool is): lz4, embedded data and large blocks, but neither zstd nor encryption."""
    with _file_pool(vm, "grub", "-o compatibility=grub2") as name:
        yield name


@pytest.fixture
def encrypting_pool(vm: Vm) -> Iterator[str]:
    """A pool on the guest with encryption, lz4, embedded data and large blocks, but no zstd
    (as one made before OpenZFS 2.0 and upgraded only for encryption)."""
    with _file_pool(vm, "encz", "-d -o feature@encryption=enabled -o feature@lz4_compress="
                    "enabled -o feature@large_blocks=enabled -o feature@embedded_data=enabled"
                    ) as name:
        yield name


@pytest.fixture
def small_pool(vm: Vm) -> Iterator[str]:
    """A pool on the guest with every feature and about 120 MiB free."""
    with _file_pool(vm, "small", "") as name:
        yield name
