"""Unit tests of the EoS course's end (numerics.central_flow.experiments.course_end), read by CF-C.fig2-psi and -gd."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from numerics.central_flow import experiments as E


def test_relaxation_ends_where_the_last_window_is_a_hundredth_of_the_change():
    tau, window = 300.0, 400
    L = 1 - np.exp(-np.arange(4000) / tau)
    k = E.course_end(L, window)
    # closed form: e^{-k/tau} (e^{W/tau} - 1) <= 0.01 (1 - e^{-k/tau})  <=>  k >= tau log(1 + (e^{W/tau} - 1) / 0.01)
    k_exact = tau * np.log(1 + (np.exp(window / tau) - 1) / E.COURSE_SETTLE)
    assert k == int(np.ceil(k_exact))
    assert 1 - L[k] <= E.COURSE_SETTLE / (np.exp(window / tau) - 1) * L[k] + 1e-15  # what is left, as the comment says


def test_a_law_that_never_moves_ends_at_the_first_window_with_no_change():
    psi = np.broadcast_to(np.eye(2), (1000, 2, 2))
    k = E.course_end(psi, 400)
    assert k == 400 and np.linalg.norm(psi[k] - psi[0]) == 0.0  # the claims' O(1) check then fails


def test_a_steady_drift_has_not_run_its_course():
    assert E.course_end(np.arange(2000.0)[:, None] * np.array([[1.0, -2.0]]), 400) is None


def test_per_step_window_ends_inside_a_steady_drift():
    """The bug of mutant cf-course-window-per-step: over one step a steady drift looks settled after 100 steps."""
    L = np.arange(3000.0)
    assert E.course_end(L, 1) == 100 and E.course_end(L, 400) is None


@given(st.floats(50.0, 2000.0), st.floats(0.1, 10.0))
def test_end_does_not_depend_on_the_law_scale(tau, scale):
    L = 1 - np.exp(-np.arange(6000) / tau)
    assert E.course_end(scale * L, 400) == E.course_end(L, 400)


@pytest.mark.parametrize(
    "args, match",
    [((np.zeros(10), 0), "window"), ((np.zeros(10), 20), "window"), ((np.zeros(500), 400, -0.1), "settle")],
)
def test_bad_input_names_the_parameter(args, match):
    with pytest.raises(ValueError, match=match):
        E.course_end(*args)
