"""A go-live cut off by its link (issue 30): the old and the new pool on lab-far-gate, a host at
the far end of a veth pair in a network namespace (lab/far_gate.py). For each step in turn the
link goes down while the step is held there, before it ran (it never runs) or after (it ran,
its answer is lost): odd steps before and even ones after in one walk, the other way round in
the other, so each step is cut both ways. The run ends within the session-loss deadline,
naming the lost host and what is still to run; the history holds what ran. Once the link is
back, go-live again finishes it (then `--back` undoes the live copy), or `--back` undoes the
cut-off go-live itself; the datasets end as they should, the files intact. Every run is watched
by the invariant "nothing lost unseen" on both pools (lab/losses.py).

Figures: one dataset, t (6 steps: the tree's child adds five more of the same kinds, and
test_golive_cut.py walks those); the host is lost LOST_AFTER = 2 s after a keepalive went
unanswered (its ssh_config's ServerAliveInterval 1, ServerAliveCountMax 2)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lab.far_gate import ALIAS, LOST_AFTER, FarGate
from lab.gate import mount_state
from lab.losses import LossWatch, shown_in_json
from lab.sshd import Lab
from lab.util import Run, write_random_files, zfs, zmigrate
from lab.zfsfuse import Pool

pytestmark = [pytest.mark.lab, pytest.mark.timeout(400)]

# One host, t: readonly kept, unmount, canmount=noauto; the copy's readonly, mountpoint, mount.
STEPS = 6
# Lost LOST_AFTER s after a keepalive (asked every second) went unanswered, looked at every
# second: the run ends within this of the cut (a loaded two-core machine's margin).
ENDS_WITHIN = LOST_AFTER + 6.0
LOST = "the SSH control session was lost while a command ran"
CLOSED = "the SSH control session is closed"
# Going back changes the host 8 times: the copy's 3 undos and its unmount made sure of, the
# source's mountpoint after the writes were carried back, the source's 3 undos.
BACK_CHANGES = 8


@pytest.fixture(scope="module")
def far(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FarGate]:
    g = FarGate(tmp_path_factory.mktemp("far-gate"), lab)
    try:
        g.start()
        yield g
    finally:
        g.stop()


@dataclass
class Trees:
    """OLD/t and its copy NEW/t, both on lab-far-gate; the CLI's env and the two pools'
    watches."""

    far: FarGate
    old: Pool
    new: Pool
    env: dict[str, str]
    watches: tuple[LossWatch, LossWatch]

    @property
    def roots(self) -> tuple[str, str]:
        return f"{self.old.name}/t", f"{self.new.name}/t"

    def go_live(self, *extra: str) -> Run:
        src, dst = self.roots
        return zmigrate(self.env, "go-live", f"{ALIAS}:{src}", f"{ALIAS}:{dst}", "--yes",
                        "--json", *extra)

    def final_sync(self) -> dict[tuple[str, str], str]:
        """The source copied and left read-only (send -r --final, on this machine's lab-src);
        the state of both trees then."""
        src, dst = self.roots
        r = zmigrate(self.env, "send", "-r", f"lab-src:{src}", f"lab-src:{dst}", "--snapshot",
                     "--buffer", "16M", "--final")
        assert r.returncode == 0, r.stderr + r.stdout
        return mount_state(*self.roots)

    def watched(self, run: Run | None = None) -> None:
        """Start the watches (no run) or check them against the run's plan events."""
        for w in self.watches:
            if run is None:
                w.start()
            else:
                w.check_json(run.stdout)

    def files(self) -> list[str]:
        """The files served at the source's path of t (the source's, or the live copy's)."""
        return sorted(os.listdir(self.old.mountpoint / "t" / "files"))


@pytest.fixture
def trees(far: FarGate, pools: tuple[Pool, Pool], tmp_path: Path,
          loss_watch: type[LossWatch]) -> Trees:
    old, new = pools
    zfs("create", f"{old.name}/t")
    write_random_files(old.mountpoint / "t" / "files", 1, files=2)
    env = {**far.env(), "ZMIGRATE_DATA_DIR": str(tmp_path / "data")}
    return Trees(far, old, new, env, (loss_watch(old.name), loss_watch(new.name)))




def _row(env: dict[str, str]) -> tuple[str, int, int, int]:
    conn = sqlite3.connect(Path(env["ZMIGRATE_DATA_DIR"]) / "history.sqlite3")
    try:
        state, done, pending, steps = conn.execute(
            "SELECT state, done, pending, json_array_length(steps) FROM go_live "
            "ORDER BY id DESC LIMIT 1").fetchone()
    finally:
        conn.close()
    return state, done, pending, steps


def _events(r: Run, kind: str) -> list[dict[str, Any]]:
    return [e for e in map(json.loads, filter(str.strip, r.stdout.splitlines()))
            if e["event"] == kind]


def _cut_at(t: Trees, k: int, mode: str) -> list[str]:
    """go-live cut off by the link at step k, held on the host `mode` "before" or "after" it
    ran: it fails within ENDS_WITHIN of the cut, naming lab-far-gate, the steps done and still
    to run, and the step begun; the history says step k was begun, k - 1 done. The steps it
    began (what each does)."""
    t.watched()
    r, took = t.far.go_live_cut_at(*t.roots, k, t.env, mode)
    t.watched(r)
    assert r.returncode == 1, r.stderr + r.stdout
    (err,) = _events(r, "error")
    ran = [str(s["what"]) for s in _events(r, "go_live_step")]
    assert len(ran) == k, ran
    assert err["host"] == ALIAS, err
    assert err["message"] == (f"going live was cut off after {k - 1} of {STEPS} steps, "
                              f"{STEPS - k + 1} still to run; the step begun, {ran[-1]}, may "
                              f"have run: {LOST}"), err
    assert "run go-live again to finish it, or go-live --back to undo exactly what ran" in \
        str(err["fix"]), err
    assert took < ENDS_WITHIN, (k, took)
    assert _row(t.env) == ("going live", k - 1, 1, STEPS)
    # The step the link was cut at, as the host's zfs saw it (held there: run, or not).
    command = str(_events(r, "go_live_step")[-1]["command"])
    assert (t.far.control / "reached").read_text().strip() == command.removeprefix("zfs ")
    print(f"link cut at step {k} ({mode} it ran: {ran[-1]}): failed {took:.1f} s after the cut")
    return ran


def test_the_plan_has_the_steps_the_walk_cuts(trees: Trees) -> None:
    trees.final_sync()
    src, dst = trees.roots
    r = zmigrate(trees.env, "go-live", f"{ALIAS}:{src}", f"{ALIAS}:{dst}", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("# on the ") == STEPS


def _live(t: Trees) -> None:
    """The copy serves the source's path, writable; the source is out of the way (unmounted,
    canmount=noauto, still read-only)."""
    old, new = t.roots
    s = mount_state(old, new)
    assert [s[(new, p)] for p in ("mounted", "mountpoint", "readonly")] == [
        "yes", str(t.old.mountpoint / "t"), "off"]
    assert [s[(old, p)] for p in ("mounted", "canmount", "readonly")] == ["no", "noauto", "on"]
    assert len(t.files()) == 2  # the copy's, served where the source's were


def _gone_back(t: Trees, k: int, before: dict[tuple[str, str], str], files: list[str]) -> None:
    """`go-live --back` (watched) ends as before going live: the source served again, its
    files intact, and what was written to the live copy (written-live-K) carried back to it."""
    t.watched()
    r = t.go_live("--back")
    t.watched(r)
    assert r.returncode == 0, r.stderr + r.stdout
    assert _row(t.env) == ("back", 0, 0, STEPS)
    assert mount_state(*t.roots) == before
    assert t.files() == files
    assert (t.old.mountpoint / "t" / f"written-live-{k}").read_text() == "live\n"


def test_a_go_live_cut_off_by_the_link_at_each_step_is_finished_by_going_live_again(
        trees: Trees) -> None:
    files = trees.files()
    for k in range(1, STEPS + 1):
        before = trees.final_sync()
        _cut_at(trees, k, "before" if k % 2 else "after")
        trees.watched()
        r = trees.go_live()
        trees.watched(r)
        assert r.returncode == 0, r.stderr + r.stdout
        (plan,) = _events(r, "go_live_plan")  # the rest of the recorded plan, the step cut too
        assert (plan["done"], len(plan["steps"])) == (k - 1, STEPS - k + 1), plan
        assert _row(trees.env) == ("live", STEPS, 0, STEPS)
        _live(trees)
        (trees.old.mountpoint / "t" / f"written-live-{k}").write_text("live\n")
        _gone_back(trees, k, before, files)


def test_a_go_live_cut_off_by_the_link_at_each_step_is_undone_by_going_back(
        trees: Trees) -> None:
    files = trees.files()
    for k in range(1, STEPS + 1):
        before = trees.final_sync()
        _cut_at(trees, k, "after" if k % 2 else "before")
        copy = trees.roots[1]
        mounted = mount_state(copy)[(copy, "mounted")] == "yes"
        trees.watched()
        r = trees.go_live("--back")
        trees.watched(r)
        assert r.returncode == 0, r.stderr + r.stdout
        # The copy mounted when the link went (its mountpoint set, step 5 after it ran, mounts
        # it before its own mount step; or that step ran): going back says it unmounts it.
        hidden = [x["name"] for x in shown_in_json(r.stdout) if x["kind"] == "unmounted"]
        assert copy in hidden or not mounted, (k, hidden)
        assert _row(trees.env) == ("back", 0, 0, STEPS)
        assert mount_state(*trees.roots) == before
        assert trees.files() == files  # the source's, served again


def test_a_way_back_cut_off_by_the_link_at_each_change_is_finished_by_going_back_again(
        trees: Trees) -> None:
    """Going back, cut off by the link at each of its changes on the host in turn (held before
    or after it ran): the copy's three undos, its unmount made sure of, the carried-back
    writes' mountpoint, the source's three undos. The run fails naming the lost host and
    `--back` again; run again, the way back continues where the record says and ends as before
    going live, what was written while live carried back to the source."""
    files = trees.files()
    for k in range(1, BACK_CHANGES + 1):
        before = trees.final_sync()
        trees.watched()
        r = trees.go_live()
        trees.watched(r)
        assert r.returncode == 0, r.stderr + r.stdout
        (trees.old.mountpoint / "t" / f"written-live-{k}").write_text("live\n")
        trees.watched()
        r, took = trees.far.go_live_cut_at(*trees.roots, k, trees.env,
                                           "before" if k % 2 else "after", "--back")
        trees.watched(r)
        assert r.returncode == 1, r.stderr + r.stdout
        (err,) = _events(r, "error")
        # (The session is lost during the command held, or found closed by the next one.)
        assert err["host"] == ALIAS, err
        assert err["message"].startswith("going back stopped, ") and (
            LOST in err["message"] or CLOSED in err["message"]), err
        assert "\n" not in err["message"], err
        assert err["fix"].startswith("check the network and that sshd still runs there; then "
                                     "run go-live --back again"), err
        assert took < ENDS_WITHIN, (k, took)
        assert _row(trees.env)[0] == "going back", _row(trees.env)
        reached = (trees.far.control / "reached").read_text().strip()
        _gone_back(trees, k, before, files)
        print(f"way back cut at change {k} ({reached}): failed {took:.1f} s after the cut, "
              "then finished by --back")
