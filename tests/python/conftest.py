import os
import sys
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from thlib import Lib  # noqa: E402


@pytest.fixture(scope="session")
def lib():
    return Lib()


@pytest.fixture
def rng(request):
    # A per-test seed from the test's name (crc32, not Python's per-process randomized hash), so
    # every run draws the same data; TH_TEST_SEED=n replays or varies it and is printed on failure.
    seed = int(os.environ.get("TH_TEST_SEED", "0")) or zlib.crc32(request.node.nodeid.encode())
    print(f"seed={seed}")
    return np.random.default_rng(seed)
