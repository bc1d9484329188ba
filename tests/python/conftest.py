import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from thlib import Lib  # noqa: E402


@pytest.fixture(scope="session")
def lib():
    return Lib()


@pytest.fixture
def rng(request):
    # a per-test seed that is printed on failure, so any case can be replayed
    seed = int(os.environ.get("TH_TEST_SEED", "0")) or (abs(hash(request.node.nodeid)) % (2**31))
    print(f"seed={seed}")
    return np.random.default_rng(seed)
