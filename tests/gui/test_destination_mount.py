"""The Destination page's mount choice for a tree says what this destination's zfs does, and a
mountpoint collision's fix names the page's own choices, not the command line's flag."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from zmigrate.engine.errors import PreflightError, PreflightReason
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.tree import TreePlan, TreeRequest
from zmigrate.engine.zfs import Capabilities, Dataset
from zmigrate.gui import words
from zmigrate.gui.models.tree_pick import TreePick
from zmigrate.gui.pages.destination_page import DestinationPage
from zmigrate.gui.session import Session
from zmigrate.gui.settings import Settings

pytestmark = pytest.mark.gui


def caps(unmounted: bool) -> Capabilities:
    return Capabilities("zfs-fuse", "0.7.2", True, False, False, False, "20230301", False,
                        True, True, True, 2**33, "Linux", 0, None, None,
                        receive_unmounted=unmounted)


class CollidingJob:
    """A tree job whose plan is refused the way the engine refuses a mountpoint collision."""

    request = TreeRequest("tank", "backup/tank")

    def prepare(self) -> TreePlan:
        raise PreflightError(
            "the copy would mount over directories the destination already uses: "
            "backup/copy would mount on /tank", host="dst",
            fix="pick a destination whose mountpoint is free, or --mount-root PATH to mount "
            "the copy under a directory of your choice",
            reason=PreflightReason.MOUNT_COLLISION)


def open_page(qtbot: QtBot, settings: Settings, unmounted: bool,
              monkeypatch: pytest.MonkeyPatch) -> DestinationPage:
    s = Session()
    s.src_host, s.dst_host = LocalHost("src"), LocalHost("dst")
    s.src_caps, s.dst_caps = caps(True), caps(unmounted)
    s.src_datasets = [Dataset("tank", "filesystem", 1, 0, 0, 2**34, 0),
                      Dataset("tank/a", "filesystem", 2, 0, 0, 2**34, 0)]
    s.dst_datasets = [Dataset("backup", "filesystem", 3, 0, 0, 2**34, 0)]
    s.tree = TreePick.of(s.src_datasets, "tank")
    monkeypatch.setattr(Session, "new_tree_job", lambda _s, _d=None: CollidingJob())
    page = DestinationPage(s, settings)
    qtbot.addWidget(page)
    assert page.ui.unmounted_radio.text() == words.UNMOUNTED  # the form's own words
    page.show()
    page._loaded_for = s.dst_host
    page.tree.show(s.dst_datasets)
    page.initializePage()
    qtbot.waitUntil(lambda: not page.checking_tree,
                    timeout=5000)
    return page


@pytest.mark.parametrize("unmounted", [True, False])
def test_the_mount_choice_says_what_this_zfs_does(
        qtbot: QtBot, settings: Settings, unmounted: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    page = open_page(qtbot, settings, unmounted, monkeypatch)
    text = page.ui.unmounted_radio.text()
    if unmounted:
        assert text == words.UNMOUNTED
    else:
        # zfs-fuse cannot receive -u: "Received unmounted (-u)" would not be what happens.
        assert text == words.NO_UNMOUNTED and "(-u)," not in text
    state = page.ui.state_label.text()
    assert "would mount over" in state, state
    assert "--mount-root" not in state and words.MOUNTED_UNDER in state
    assert not page.isComplete()

