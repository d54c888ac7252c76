"""The fit behind every meter constant, and the leave-one-out check of it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground.refit import accuracy, fitting

from .conftest import TOKEN_COUNTS, shared


@given(a=st.floats(0.5, 3.0), b=st.floats(0.0, 400.0),
       rows=st.lists(st.tuples(st.integers(0, 500), st.integers(0, 3)), min_size=4, max_size=20))
def test_fit_recovers_constants_from_exact_data(a, b, rows):
    if len({row for row in rows}) < 2 or not any(x for x, _ in rows) or not any(n for _, n in rows):
        return
    samples = [fitting.Sample(10.0, {"text": x, "tool": n}, 10.0 + a * x + b * n) for x, n in rows]
    constants = fitting.fit_constants(samples, {"text": 1.0, "tool": 0.0})
    for sample in samples:
        # IRLS with a small ridge: close to the generating constants, not exact.
        assert fitting.predict(sample, constants) == pytest.approx(sample.billed, rel=3e-2, abs=0.25)


def test_leave_one_out_predicts_a_case_without_its_own_evidence():
    """An outlier fits itself in-sample but not when it is left out: that is the point of the check."""
    samples = [fitting.Sample(0.0, {"tool": 1.0}, 100.0) for _ in range(5)] + [fitting.Sample(0.0, {"tool": 1.0},
                                                                                              300.0)]
    predictions = fitting.leave_one_out(samples, {"tool": 0.0})
    assert predictions[-1] == pytest.approx(100.0, abs=1)
    assert predictions[0] == pytest.approx(100.0, abs=1)


def test_chat_constants_hold_up_leave_one_out():
    cases = accuracy.measure(shared(TOKEN_COUNTS))
    scored = [c for c in cases if c.loo is not None]
    assert len(scored) >= 80
    within = sum(abs(c.loo - c.billed) <= 2 for c in scored)
    assert within / len(scored) >= 0.90, f"{within}/{len(scored)}"
