"""A memory plan the device cannot hold is refused with options of that solver that
need less."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tspcl.device import DeviceLimits, Runtime
from tspcl.errors import DeviceMemoryError
from tspcl.instance import Instance
from tspcl.run import plan_memory
from tspcl.solvers import REGISTRY

SPECS = list(REGISTRY.values())


# ---- memory: refused with options that help ---------------------------
class TinyDevice:
    """Enough of a Runtime for run.plan_memory: a device of 512 KiB."""

    name = "a 512 KiB device"
    limits = DeviceLimits(max_work_group=256, local_mem=48 * 1024, global_mem=2**19, max_alloc=2**18,
                          compute_units=1, is_gpu=False)
    check_fits = Runtime.check_fits


def _big(n: int = 30_000) -> Instance:
    coords = np.random.default_rng(1).uniform(0, 10**6, (n, 2))
    return Instance(f"uniform{n}", "TSP", "EUC_2D", coords=coords)


HINT_OPTION = re.compile(r"-p (\w+)=(\S+?)[),]?(?:\s|$)|--([a-z][\w-]*) (\S+?)[),]?(?:\s|$)")


def hinted_values(hint: str) -> list[dict]:
    """The options a memory hint names, each as params_from's {key: value}."""
    out = []
    for key, value, flag, flag_value in HINT_OPTION.findall(hint):
        out.append({key: value} if key else {flag.replace("-", "_"): flag_value})
    return out


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_a_refused_plan_names_options_of_that_solver(spec):
    inst = _big()
    params = spec.params_type()
    with pytest.raises(DeviceMemoryError) as caught:
        plan_memory(TinyDevice(), inst, spec, params)
    message = caught.value.message
    assert "\n" not in message and "a smaller instance" in message
    if spec.memory_hint is None:
        return
    assert spec.memory_hint in message
    options = hinted_values(spec.memory_hint)
    assert options, f"{spec.name}'s hint names no option: {spec.memory_hint!r}"
    need = spec.memory(inst, params)
    for values in options:  # each is this solver's, and needs no more than the defaults
        assert spec.memory(inst, spec.params_from(values)) <= need, values
    together = spec.params_from({k: v for values in options for k, v in values.items()})
    assert spec.memory(inst, together) < need


def test_the_hint_parser_reads_both_option_forms():
    assert hinted_values("-p store=candidates (pheromone) or fewer ants (e.g. --ants 256)") == \
        [{"store": "candidates"}, {"ants": "256"}]
