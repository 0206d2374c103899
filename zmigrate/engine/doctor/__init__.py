"""The doctor: time each stage of a transfer alone and name the slowest.

`stages` defines and runs the stages (`Doctor`), `measure` runs one stage's pipelines for a
bounded time and reads its rate, `compress` is the compression stage, `cpu` reads the hosts'
CPU between two moments, `results` is what a run reports, `advice` turns the figures into what
to do (as data: the faces word it).
"""

from .advice import advise
from .cpu import cpu_between, parse_cpu
from .measure import DOCTOR_ENV
from .results import (
    CPU_BOUND,
    DoctorReport,
    Emit,
    HostCpu,
    ProcessCpu,
    StageResult,
    StageStarted,
)
from .stages import (
    DEFAULT_SECONDS,
    FAST_CIPHERS,
    STAGES,
    WRITE_SHARE,
    Doctor,
    choose_parent,
    write_test_losses,
)
from .temp_dataset import TEMP_PREFIX

__all__ = [
    "CPU_BOUND", "DEFAULT_SECONDS", "DOCTOR_ENV", "FAST_CIPHERS", "STAGES", "TEMP_PREFIX",
    "WRITE_SHARE", "Doctor", "DoctorReport", "Emit", "HostCpu", "ProcessCpu", "StageResult",
    "StageStarted", "advise", "choose_parent", "cpu_between", "parse_cpu", "write_test_losses",
]
