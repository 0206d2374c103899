"""Short calls off the GUI thread (connect, probe, inventory, prepare) on the Qt thread pool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from superqt.utils import create_worker

T = TypeVar("T")


def run_task(fn: Callable[[], T], on_result: Callable[[T], None],
             on_error: Callable[[Exception], None]) -> Any:
    """Run `fn` on a pool thread; its result or exception comes back on the GUI thread.

    Returns the superqt worker (it keeps itself alive until it has finished).
    """
    worker = create_worker(fn, _start_thread=True,
                           _connect={"returned": on_result, "errored": on_error})
    return worker
