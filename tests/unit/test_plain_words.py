"""Words both faces say alike (engine/plain_words.py) for the way's live figures."""

from __future__ import annotations

from zmigrate.engine import plain_words
from zmigrate.engine.events import EndCpu, Resent, Side


def test_the_ways_figures_as_last_read() -> None:
    assert plain_words.resent_now(Resent(3.0, "nas", "Linux", 40_000, 920, 5.0)) == \
        "nas sent 2.3% of its TCP segments again"
    assert plain_words.resent_now(Resent(3.0, "nas", "Linux", 999, 0, 5.0)) is None  # too few
    assert plain_words.end_cpu_now(EndCpu(3.0, Side.RECEIVE, "nas", "socat", 0.8, 0.15, 5.0)) \
        == "socat on nas: 80% of a CPU, 15% waiting for one"
    assert plain_words.end_cpu_now(EndCpu(3.0, Side.SEND, "pve", "ssh", 0.42, 0.01, 5.0)) == \
        "ssh on pve: 42% of a CPU"
