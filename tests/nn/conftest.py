"""The THNN suite: every layer against PyTorch (float64, autograd), finite differences and naive
loops. Shares thlib (the ctypes binding) with the numpy suite in tests/python; nnlib types THNN
calls from the committed header. Run: .venv/bin/python -m pytest tests/nn (TH_LIB picks the
library, default target/debug/libth.so)."""

import os
import sys
import zlib

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
from nnlib import NN  # noqa: E402
from thlib import Lib  # noqa: E402

import torch  # noqa: E402

# The references run in float64 on one thread: results do not depend on the machine's cores,
# and torch does not compete with th's pool for the two cores of CI.
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def lib():
    return Lib()


@pytest.fixture(scope="session")
def nn(lib):
    return NN(lib)


@pytest.fixture(scope="session")
def cunn(lib):
    """THCUNN on a device (tests/nn/test_cunn_*.py): skipped without one unless TH_CUDA_EMULATOR=1
    or TH_REQUIRE_DEVICE=1 ask for it (thclib.start_thc)."""
    from cunnlib import Cunn
    from thclib import start_thc

    start_thc(lib)
    return Cunn(lib)


@pytest.fixture
def rng(request):
    # A per-test seed from the test's name, as in tests/python (TH_TEST_SEED=n replays or varies it).
    seed = int(os.environ.get("TH_TEST_SEED", "0")) or zlib.crc32(request.node.nodeid.encode())
    print(f"seed={seed}")
    return np.random.default_rng(seed)
