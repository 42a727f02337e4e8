"""Fixtures shared by the integration tests: every run must leave the machine as it found it."""
from __future__ import annotations

import pytest

from controlplane.leftovers import assert_clean, snapshot


@pytest.fixture
def machine_before():
    before = snapshot()
    yield before
    assert_clean(before)
