"""Cycles are collected on the GUI thread (a widget caught in one and collected on a worker
thread is deleted there), and not while a big pool's inventory is being built."""

from __future__ import annotations

import gc
import threading

from pytestqt.qtbot import QtBot

from zmigrate.gui.threads import without_collection


class Cycle:
    """Refers to itself; says on which thread it was collected."""

    def __init__(self, ends: list[int]) -> None:
        self.me = self
        self.ends = ends

    def __del__(self) -> None:
        self.ends.append(threading.get_ident())


def _allocate() -> list[list[int]]:
    """Enough container objects to be worth a collection (Python's first threshold is 700)."""
    return [[i] for i in range(5_000)]


def test_a_cycle_dropped_on_a_worker_is_collected_on_the_gui_thread(qtbot: QtBot) -> None:
    assert not gc.isenabled()  # the GUI tests install the app's collector (conftest)
    ends: list[int] = []

    kept: list[list[list[int]]] = []

    def worker() -> None:
        Cycle(ends)
        kept.append(_allocate())

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert ends == []  # nothing collected it on the worker
    qtbot.waitUntil(lambda: bool(ends), timeout=10_000)
    assert kept
    assert ends == [threading.get_ident()]


def test_nothing_is_collected_while_an_inventory_is_built(qtbot: QtBot) -> None:
    ends: list[int] = []

    def build() -> tuple[int, list[list[int]]]:
        Cycle(ends)
        inventory = _allocate()
        qtbot.wait(2500)  # the collector's timer ticks twice meanwhile
        return len(ends), inventory

    collected, inventory = without_collection(build)
    assert collected == 0
    assert not gc.isenabled()
    qtbot.waitUntil(lambda: bool(ends), timeout=10_000)
    assert inventory
