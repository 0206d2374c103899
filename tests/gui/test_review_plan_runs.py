"""The plan the Review page shows is the plan that runs (lab): same object, same commands, the
same TCP port and the same ssh-transport receive log name."""

from __future__ import annotations

from dataclasses import replace

import pytest
from lab.plugin import Lab, Pool
from lab.util import snapshot_guid, write_random_files, zfs
from pytestqt.qtbot import QtBot
from wizard_driver import WAIT_LOAD, WAIT_TRANSFER, start_transfer, to_destination, to_source

from zmigrate.engine.events import PlanReady
from zmigrate.engine.plan import Plan
from zmigrate.engine.transports import Transport
from zmigrate.gui.pages.base import PageId
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(180)]


def shown(plan: Plan) -> str:
    """The Review page's rendering of a plan's commands."""
    lines = []
    for host, line in plan.commands():
        lines += [f"# on {host}", line, ""]
    return "\n".join(lines).rstrip() + "\n"


@pytest.mark.parametrize("transport", [Transport.TCP, Transport.SSH, Transport.RELAY])
def test_the_reviewed_plan_is_the_plan_that_runs(qtbot: QtBot, wizard: MigrationWizard,
                                                 lab_env: Lab, pools: tuple[Pool, Pool],
                                                 transport: Transport) -> None:
    src_pool, dst_pool = pools
    dataset = f"{src_pool.name}/data"
    zfs("create", dataset)
    write_random_files(src_pool.mountpoint / "data", 2, files=2)
    zfs("snapshot", f"{dataset}@one")
    w = wizard
    to_source(qtbot, w)
    to_destination(qtbot, w, dataset)
    w.destination_page.ui.parent_edit.setText(dst_pool.name)
    w.destination_page.ui.name_edit.setText("copy")
    assert w.destination_page.isComplete(), w.destination_page.ui.state_label.text()
    if transport is Transport.SSH:
        # How the source's own ssh reaches lab-dst (the wizard keeps such options as they are).
        options = tuple("-o" + o for o in lab_env.ssh_options()[1::2])
        w.session.options = replace(w.session.options, ssh_options=options)
    w.next()
    assert w.currentId() == PageId.TRANSPORT
    ui = w.transport_page.ui
    radio = {Transport.SSH: ui.ssh_radio, Transport.TCP: ui.tcp_radio,
             Transport.RELAY: ui.relay_radio}[transport]
    radio.setChecked(True)
    # The optional md5 of the stream: asked for over tcp, left off (the default) over ssh.
    assert not w.transport_page.ui.hash_check.isChecked()
    w.transport_page.ui.hash_check.setChecked(transport is Transport.TCP)
    w.next()
    assert w.currentId() == PageId.REVIEW
    qtbot.waitUntil(lambda: not w.review_page.preparing, timeout=WAIT_LOAD)
    assert w.review_page.isComplete(), w.review_page.ui.error_label.text()
    reviewed = w.session.plan
    job = w.session.job
    assert reviewed is not None and job is not None and reviewed.transport is transport
    text = w.review_page.ui.commands_edit.toPlainText()
    assert text == shown(reviewed)
    assert ("--hash md5" in text) is (transport is Transport.TCP)
    if transport is Transport.TCP:
        assert reviewed.port is not None and f":{reviewed.port}" in text
    elif transport is Transport.RELAY:
        assert reviewed.port is None and reviewed.steps[0].receive_mark is None
        assert " -I " not in text and " -O " not in text and "ssh " not in text
    else:
        log = reviewed.steps[0].receive_mark
        assert log is not None and log in text
    seen: list[object] = []
    job.subscribe(seen.append)
    start_transfer(w)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert w.session.summary is not None, w.done_page.ui.reason_label.text()
    ran = next(e.plan for e in seen if isinstance(e, PlanReady))
    # The very plan Review showed ran (no second planning), on the Job Review prepared.
    assert ran is reviewed and job.plan is reviewed and w.session.job is job
    assert shown(ran) == text
    if transport is Transport.TCP:
        assert ran.port == reviewed.port
    elif transport is Transport.SSH:
        assert ran.steps[0].receive_mark == reviewed.steps[0].receive_mark
    assert snapshot_guid(f"{dst_pool.name}/copy@one") == snapshot_guid(f"{dataset}@one")
    assert w.session.summary.hash_match is (True if transport is Transport.TCP else None)
    checks = w.done_page.ui.check_value.text()
    assert ("stream MD5 equal on both ends" in checks) is (transport is Transport.TCP), checks
    assert ("stream checksums checked by zfs receive" in checks) is (transport is not
                                                                      Transport.TCP)
