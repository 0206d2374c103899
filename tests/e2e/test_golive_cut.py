"""A go-live cut off after each step in turn (Ctrl-C at a step, or the CLI killed after one)
is finished by running go-live again, or undone by --back, the datasets ending as before;
a way back that failed is repeated; the live copy's writes carried back or, asked, left."""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab.gate import gate_host, go_live_cut_at, mount_state
from lab.losses import LossWatch, shown_in_json
from lab.sshd import Lab, LabHost
from lab.util import write_random_files, zfs, zmigrate
from lab.zfsfuse import Pool

pytestmark = [pytest.mark.lab, pytest.mark.timeout(300)]



@pytest.fixture(scope="module")
def gate(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LabHost, Path]]:
    with gate_host(lab, tmp_path_factory) as found:
        yield found




@pytest.fixture
def final_synced(lab: Lab, pools: tuple[Pool, Pool],
                 tmp_path: Path) -> tuple[Pool, Pool, dict[str, str]]:
    """OLD/t (with t/a) copied to NEW/t on one host by a final sync."""
    old, new = pools
    zfs("create", f"{old.name}/t")
    zfs("create", f"{old.name}/t/a")
    write_random_files(old.mountpoint / "t" / "a" / "files", 1, files=2)
    env = {**lab.env(), "ZMIGRATE_DATA_DIR": str(tmp_path / "data")}
    r = zmigrate(env, "send", "-r", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t",
                 "--snapshot", "--buffer", "16M", "--final")
    assert r.returncode == 0, r.stderr + r.stdout
    return old, new, env


def _go_live_cut_at(env: dict[str, str], gate: tuple[LabHost, Path], old: Pool, new: Pool,
                    k: int) -> str:
    """go-live through lab-gate cut off at its k-th step (lab/gate.py); its stderr."""
    status, err = go_live_cut_at(env, gate, f"{old.name}/t", f"{new.name}/t", k)
    if k % 2:  # Ctrl-C
        assert status == 130 and "go-live --back` undoes exactly that" in err, err
    else:
        assert status == -signal.SIGKILL
    return err


def _args(gate: tuple[LabHost, Path], old: Pool, new: Pool) -> tuple[str, str, str]:
    alias = gate[0].alias
    return "go-live", f"{alias}:{old.name}/t", f"{alias}:{new.name}/t"


def _row(env: dict[str, str]) -> tuple[str, int, int, int]:
    conn = sqlite3.connect(Path(env["ZMIGRATE_DATA_DIR"]) / "history.sqlite3")
    try:
        state, done, pending, steps = conn.execute(
            "SELECT state, done, pending, json_array_length(steps) FROM go_live "
            "ORDER BY id DESC LIMIT 1").fetchone()
    finally:
        conn.close()
    return state, done, pending, steps


def _steps(env: dict[str, str], old: Pool, new: Pool) -> int:
    r = zmigrate(env, "go-live", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t", "--dry-run")
    assert r.returncode == 0, r.stderr
    return r.stdout.count("# on the ")


STEPS = 11  # same host, t and t/a: readonly kept x2, unmount x2, canmount x2, copy x5


def test_the_same_host_plan_has_the_steps_the_cut_tests_walk(
        final_synced: tuple[Pool, Pool, dict[str, str]]) -> None:
    old, new, env = final_synced
    assert _steps(env, old, new) == STEPS


@pytest.mark.parametrize("k", range(1, STEPS + 1))
def test_a_go_live_cut_off_at_step_k_is_finished_by_going_live_again(
        gate: tuple[LabHost, Path], final_synced: tuple[Pool, Pool, dict[str, str]],
        k: int) -> None:
    old, new, env = final_synced
    _, d = gate
    _go_live_cut_at(env, gate, old, new, k)
    state, done, pending, steps = _row(env)
    assert (state, steps) == ("going live", STEPS)
    # Held before it ran: step k begun, not done. Killed after it ran: k done or begun.
    assert (done, pending) == (k - 1, 1) if k % 2 else done + pending >= k, (done, pending)
    r = zmigrate(env, *_args(gate, old, new), "--yes")
    assert r.returncode == 0, r.stderr + r.stdout
    assert f"continuing the go-live cut off after {done} of {STEPS} steps" in r.stdout
    path = old.mountpoint / "t" / "a"
    assert mount_state(f"{new.name}/t")[(f"{new.name}/t/a", "mounted")] == "yes"
    assert mount_state(f"{new.name}/t")[(f"{new.name}/t/a", "mountpoint")] == str(path)
    assert mount_state(f"{old.name}/t")[(f"{old.name}/t/a", "mounted")] == "no"
    assert mount_state(f"{old.name}/t")[(f"{old.name}/t/a", "canmount")] == "noauto"
    (path / "written-live").write_text("live\n")  # the copy, in service, writable
    assert _row(env)[:3] == ("live", STEPS, 0)


@pytest.mark.parametrize("k", range(1, STEPS + 1))
def test_a_go_live_cut_off_at_step_k_is_undone_by_going_back(
        gate: tuple[LabHost, Path], final_synced: tuple[Pool, Pool, dict[str, str]],
        k: int) -> None:
    old, new, env = final_synced
    _, d = gate
    before = mount_state(f"{old.name}/t", f"{new.name}/t")
    _go_live_cut_at(env, gate, old, new, k)
    r = zmigrate(env, *_args(gate, old, new), "--back", "--yes")
    assert r.returncode == 0, r.stderr + r.stdout
    after = mount_state(f"{old.name}/t", f"{new.name}/t")
    assert after == before
    assert _row(env)[:3] == ("back", 0, 0)
    names = os.listdir(old.mountpoint / "t" / "a" / "files")
    assert len(names) == 2  # the source, served again
    r = zmigrate(env, *_args(gate, old, new), "--back", "--yes")
    assert r.returncode != 0 and "no go-live of" in r.stderr


def test_a_way_back_that_failed_partway_is_repeated_and_finishes(
        gate: tuple[LabHost, Path], final_synced: tuple[Pool, Pool, dict[str, str]],
        loss_watch: type[LossWatch]) -> None:
    # Going back fails at remounting the source's child (after the copy's writes were carried
    # back): it stops, saying so, not "nothing was left changed"; run again, it continues
    # from there and ends as before going live.
    old, new, env = final_synced
    _, d = gate
    (d / "stop").write_text("0\n")
    before = mount_state(f"{old.name}/t", f"{new.name}/t")
    args = ("go-live", f"{gate[0].alias}:{old.name}/t", f"{gate[0].alias}:{new.name}/t")
    # Nothing lost unseen on either pool, going live, going back cut off and going back again
    # (each against the list its plan showed: go-live's own, the way back's dry run).
    watches = [loss_watch(old.name), loss_watch(new.name)]
    for w in watches:
        w.start()
    r = zmigrate(env, *args, "--yes", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    for w in watches:
        w.check_json(r.stdout)
    path = old.mountpoint / "t" / "a"
    (path / "written-live").write_text("live\n")
    (d / "fail").write_text(f"mount {old.name}/t/a")
    shown = shown_in_json(zmigrate(env, *args, "--back", "--dry-run", "--json").stdout)
    assert [(x["kind"], x["name"]) for x in shown] == [("unmounted", f"{new.name}/t/a"),
                                                       ("unmounted", f"{new.name}/t")]
    for w in watches:
        w.start()
    r = zmigrate(env, *args, "--back", "--yes")
    for w in watches:
        w.check(shown)
    assert r.returncode != 0
    assert "going back stopped, 3 of 11 steps still to undo" in r.stderr, r.stderr
    assert f"undoing unmount {old.name}/t/a failed" in r.stderr and "refused by the test" in \
        r.stderr, r.stderr
    assert "nothing was left changed" not in r.stderr
    assert _row(env)[:3] == ("going back", 3, 0)
    assert "cut off going back (3 of 11 steps done)" in zmigrate(env, "history").stdout
    for w in watches:
        w.start()
    r = zmigrate(env, *args, "--back", "--yes")
    assert r.returncode == 0, r.stderr + r.stdout
    for w in watches:
        w.check(shown)
    assert mount_state(f"{old.name}/t", f"{new.name}/t") == before
    assert (path / "written-live").read_text() == "live\n"  # carried back the first time
    assert _row(env)[:3] == ("back", 0, 0)
