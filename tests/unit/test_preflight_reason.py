"""Each preflight refusal carries its kind (PreflightReason), so faces never parse the wording."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from tests.unit.test_plan import CAPS, SRC_SNAPS, dataset, plan, sites, snap
from zmigrate.cli.common import error_json
from zmigrate.engine import zfs
from zmigrate.engine.errors import PreflightError, PreflightReason, ZmigrateError
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.plan import Options, Site, make_plan

R = PreflightReason
ENGINE = Path(__file__).resolve().parents[2] / "zmigrate" / "engine"


@pytest.mark.parametrize(("dst_snaps", "exists", "opts", "reason"), [
    ([], True, {}, R.NOT_EMPTY),
    ([snap("backup/home", "x", 77, 1)], True, {}, R.NO_COMMON_SNAPSHOT),
    ([snap("backup/home", "d", 14, 1)], True, {}, R.ALREADY_THERE),
    ([snap("backup/home", "a", 11, 1), snap("backup/home", "z", 99, 50)], True, {}, R.DIVERGED),
    (None, False, {"base": "b"}, R.BASE_MISSING),
    ([snap("backup/home", "a", 11, 1)], True, {"base": "c"}, R.BASE_MISSING),
])
def test_destination_refusals_carry_their_reason(
        dst_snaps: list[zfs.Snapshot] | None, exists: bool, opts: dict[str, object],
        reason: PreflightReason) -> None:
    with pytest.raises(PreflightError) as info:
        plan(dst_snaps, dst_exists=exists, **opts)
    assert info.value.reason is reason


def test_source_and_host_refusals_carry_their_reason() -> None:
    src, dst = sites(None, dst_exists=False)
    cases = [("tank/home@zz", "backup/home", R.NO_SOURCE), ("tank/nope@d", "backup/home",
             R.NO_SOURCE), ("tank/home@d", "backup/deep/home", R.NO_PARENT),
             ("tank/home@d", "backup", R.POOL_ROOT)]
    for snapshot, destination, reason in cases:
        with pytest.raises(PreflightError) as info:
            make_plan(src, dst, snapshot, destination, Options(), connect_address="x", port=1)
        assert info.value.reason is reason, (snapshot, destination)
    no_mbuffer = dataclasses.replace(CAPS, mbuffer_version=None)
    src, dst = sites(None, dst_exists=False, caps=no_mbuffer)
    with pytest.raises(PreflightError) as info:
        make_plan(src, dst, "tank/home@d", "backup/home", Options(), connect_address="x", port=1)
    assert info.value.reason is R.MISSING_TOOL


def test_partial_receive_carries_its_reason() -> None:
    partial = dataclasses.replace(dataset("backup/home", [snap("backup/home", "a", 11, 1)]),
                                  resume_token="1-abc")
    src = Site(LocalHost("src"), CAPS, [dataset("tank/home", SRC_SNAPS)])
    dst = Site(LocalHost("dst"), CAPS, [dataset("backup"), partial])
    with pytest.raises(PreflightError) as info:
        make_plan(src, dst, "tank/home@d", "backup/home", Options(), connect_address="x", port=1)
    assert info.value.reason is R.PARTIAL_RECEIVE


def test_every_preflight_refusal_in_the_engine_names_a_reason() -> None:
    missing = []
    for path in ENGINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "PreflightError" \
                    and not any(k.arg == "reason" for k in node.keywords):
                missing.append(f"{path.name}:{node.lineno}")
    assert not missing


def test_the_cli_json_error_names_the_reason() -> None:
    event = error_json(PreflightError("diverged", reason=R.DIVERGED))
    assert event["reason"] == "diverged"
    assert error_json(ZmigrateError("boom"))["reason"] is None


# The figures each kind may carry (what a face needs to word it), one sample each.
FIGURES: dict[PreflightReason, list[dict[str, str]]] = {
    R.OTHER: [{}],
    R.POOL_ROOT: [{"dataset": "tank", "below": "tank/home", "unmounted": "yes", "force": ""}],
    R.NOT_EMPTY: [{"dataset": "bk/home", "below": "bk/home/home", "unmounted": "",
                   "force": "yes"}],
    R.MISSING_TOOL: [{"tool": "zfs"}, {"tool": "mbuffer", "install": "apt install mbuffer"},
                     {"tool": "ss", "install": "apt install iproute2", "instead": "transport"},
                     {"tool": "zstd", "install": "apt install zstd",
                      "instead": "no_compression"}],
    R.NO_SOURCE: [{"dataset": "tank/home"}, {"origin": "tank/a@s"}],
    R.NO_PARENT: [{"parent": "bk/x"}],
    R.PARTIAL_RECEIVE: [{"dataset": "bk/home"}],
    R.PARTIAL_MISMATCH: [{"dataset": "bk/home"}, {"dataset": "bk/home", "toname": "t/h@a"}],
    R.STALE_TOKEN: [{"dataset": "bk/home"}],
    R.ALREADY_THERE: [{"dataset": "bk/home", "snapshot": "d"}],
    R.BASE_MISSING: [{"base": "b", "dataset": "bk/home"}],
    R.NO_COMMON_SNAPSHOT: [{"dataset": "bk/home", "source": "tank/home"}],
    R.DIVERGED: [{"base": "a", "newer": "@z"}],
    R.UNSUPPORTED: [{"feature": "raw"}, {"feature": "receive_properties"},
                    {"feature": "bookmark"}, {"feature": "send_flag", "flag": "-L"}],
    R.KEY_NOT_LOADED: [{"dataset": "tank/secret"}],
    R.NO_ADDRESS: [{"side": "connect"}],
    R.NO_PORT: [{"port": "9000"}, {}],
    R.NO_SPACE: [{"needed": "100", "available": "10", "under": "bk"}],
    R.PERMISSION: [{"user": "zm", "missing": "receive", "dataset": "bk",
                    "allow": "zfs allow -u zm receive bk"}],
    R.MOUNT_COLLISION: [{"way": "dataset", "unmounted": "yes", "properties": "yes"},
                        {"way": "tree"}, {"way": "tree_root"}, {"way": "golive"},
                        {"way": "golive_one_machine", "source": "nas"},
                        {"way": "carried", "dataset": "tank"}],
    R.BUSY: [{"stop": "kill 1", "state": "live"}],
    R.CHANGED: [{"destroys": "bk/home@x"}],
}
FLAG = re.compile(r"(^|\s|\()--[a-z]")


def test_every_reason_has_a_cli_and_a_gui_wording_from_its_figures() -> None:
    from zmigrate.cli import words as cli_words
    from zmigrate.gui import words as gui_words

    assert set(FIGURES) == set(PreflightReason)
    for reason, samples in FIGURES.items():
        for figures in samples:
            exc = PreflightError("refused", fix="the engine's own fix with --a-flag",
                                 reason=reason, figures=figures)
            cli, gui = cli_words.refusal_fix(exc), gui_words.refusal_fix(exc)
            assert cli and gui, (reason, figures)
            if reason is not R.OTHER:  # (no kind: the engine's fix is all there is)
                assert not FLAG.search(gui), (reason, figures, gui)  # no command-line flag
    changed = PreflightError("changed", fix="review the plan again", reason=R.CHANGED)
    assert "Review" in gui_words.refusal_fix(changed)
    assert "run again" in cli_words.refusal_fix(changed)
    assert "Review" not in cli_words.refusal_fix(changed)


def test_the_faces_say_the_fix_in_their_own_words() -> None:
    from zmigrate.cli import words as cli_words
    from zmigrate.gui import words as gui_words

    busy = PreflightError("port 9000 is already in use", host="dst", reason=R.NO_PORT,
                          fix="choose another --port", figures={"port": "9000"})
    assert cli_words.error_text(busy) == "dst: port 9000 is already in use\n  fix: choose " \
        "another --port"
    assert error_json(busy)["fix"] == "choose another --port"
    html = gui_words.error_html(busy)
    assert "Transport page" in html and "--port" not in html


def test_every_refusal_in_the_engine_carries_figures_where_its_kind_needs_them() -> None:
    """A refusal whose face words name something (a dataset, a port, a command) is raised with
    figures: the faces never read the engine's words for them."""
    bare = []
    for path in ENGINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "PreflightError":
                reason = next((k.value for k in node.keywords if k.arg == "reason"), None)
                kind = reason.attr if isinstance(reason, ast.Attribute) else ""
                if kind != "OTHER" \
                        and not any(k.arg == "figures" for k in node.keywords) \
                        and not (kind == "NO_PORT" and path.name == "port.py") \
                        and not (kind == "NO_PORT" and path.name == "plan.py"):
                    bare.append(f"{path.name}:{node.lineno} {kind}")
    assert not bare
