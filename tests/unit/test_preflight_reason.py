"""Each preflight refusal carries its kind (PreflightReason), so faces never parse the wording."""

from __future__ import annotations

import ast
import dataclasses
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
