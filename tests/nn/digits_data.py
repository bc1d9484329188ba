"""scikit-learn's bundled 8x8 digits as the digits examples read them: x.npy (1797 x 64 float64,
pixels / 16) and y.npy (int64 labels), shuffled once with a fixed seed (the images come grouped
by writer, so the held-out last fifth is then a fair sample). The images ship inside the
package: no download.

    python3 tests/nn/digits_data.py OUT_DIR     (scripts/pack_gpu.sh ships them this way)
"""

import sys
from pathlib import Path

import numpy as np


def export(out):
    from sklearn.datasets import load_digits

    d = load_digits()
    order = np.random.default_rng(0).permutation(len(d.target))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "x.npy", (d.data[order] / 16.0).astype(np.float64))
    np.save(out / "y.npy", d.target[order].astype(np.int64))
    return out


if __name__ == "__main__":
    export(sys.argv[1])
