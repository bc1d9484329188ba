"""The end-to-end examples ffi_examples/nn/digits.c and digits_cuda.c: a LeNet-style network trained
from C on scikit-learn's bundled 8x8 digits, with THNN on the host and with THCUNN on a device (a
GPU, or the CPU emulator with TH_CUDA_EMULATOR=1; the device tests skip without one). Each must
reach 95% on the held-out fifth; in Double the host's first 20 losses must agree with the same
network in PyTorch (float64, same initial weights, same batches, plain SGD) within 1e-6 relative,
and the device's with the host's within 1e-5 relative. TH_DIGITS_DIR may name a folder that
already holds x.npy and y.npy (the GPU pack ships them: its machine may lack scikit-learn)."""

import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from thlib import ROOT

LIB = os.environ.get("TH_LIB") or os.path.join(ROOT, "target", "debug", "libth.so")
SRC = os.path.join(ROOT, "ffi_examples", "nn", "digits.c")
SRC_CUDA = os.path.join(ROOT, "ffi_examples", "nn", "digits_cuda.c")
BATCH, LR = 32, 0.1  # as in digits.c
# The device run's epochs (digits.c's default: 20)
DEVICE_EPOCHS = int(os.environ.get("TH_DIGITS_DEVICE_EPOCHS", "20"))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    if os.environ.get("TH_DIGITS_DIR"):
        return Path(os.environ["TH_DIGITS_DIR"])
    from digits_data import export

    return export(tmp_path_factory.mktemp("digits"))


def build(tmp_path, double, src=SRC):
    exe = tmp_path / (Path(src).stem + ("_double" if double else "_float"))
    libdir = os.path.dirname(os.path.abspath(LIB))
    cmd = ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-I", os.path.join(ROOT, "include"), src,
           "-o", str(exe), f"-L{libdir}", f"-Wl,-rpath,{libdir}", "-lth", "-lm"]
    if double:
        cmd.insert(1, "-DDIGITS_DOUBLE")
    subprocess.run(cmd, check=True)
    return exe


def run(exe, *args):
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.dirname(os.path.abspath(LIB)))
    t = time.perf_counter()
    p = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    print(p.stdout[-2000:], f"({time.perf_counter() - t:.1f} s)")
    return p.stdout


def test_trains_to_95_percent(data, tmp_path):
    out = run(build(tmp_path, double=False), data)
    acc = float(out.strip().splitlines()[-1].split()[2])
    assert acc >= 0.95, out


def torch_losses(x, y, w, steps):
    p = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in w.items()}
    shapes = {"w1": (8, 1, 3, 3), "w2": (16, 8, 3, 3)}
    train = len(x) - len(x) // 5
    losses = []
    lo = 0
    for _ in range(steps):
        hi = min(lo + BATCH, train)
        xb = torch.tensor(x[lo:hi].reshape(-1, 1, 8, 8))
        h = F.max_pool2d(F.relu(F.conv2d(xb, p["w1"].view(shapes["w1"]), p["b1"], padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, p["w2"].view(shapes["w2"]), p["b2"], padding=1)), 2)
        logp = F.log_softmax(F.linear(h.reshape(hi - lo, -1), p["w3"], p["b3"]), dim=1)
        loss = F.nll_loss(logp, torch.tensor(y[lo:hi]))
        loss.backward()
        with torch.no_grad():
            for v in p.values():
                v -= LR * v.grad
                v.grad = None
        losses.append(loss.item())
        lo = hi if hi < train else 0
    return losses


def test_double_losses_match_pytorch(data, tmp_path):
    out = run(build(tmp_path, double=True), data, tmp_path, 1)  # one epoch: 45 steps
    got = [float(l.split()[3]) for l in out.splitlines() if l.startswith("step ")][:20]
    w = {k: np.load(tmp_path / f"{k}.npy") for k in ["w1", "b1", "w2", "b2", "w3", "b3"]}
    want = torch_losses(np.load(data / "x.npy"), np.load(data / "y.npy"), w, 20)
    assert len(got) == 20
    np.testing.assert_allclose(got, want, rtol=1e-6)


def losses(out):
    return [float(line.split()[3]) for line in out.splitlines() if line.startswith("step ")]


def test_device_trains_to_95_percent(data, tmp_path, cunn):
    out = run(build(tmp_path, double=False, src=SRC_CUDA), data, DEVICE_EPOCHS)
    acc = float(out.strip().splitlines()[-1].split()[2])
    assert acc >= 0.95, out


def test_device_double_losses_match_the_host(data, tmp_path, cunn):
    host = losses(run(build(tmp_path, double=True), data, tmp_path, 1))[:20]
    dev = losses(run(build(tmp_path, double=True, src=SRC_CUDA), data, 1, 20))
    assert len(dev) == 20
    np.testing.assert_allclose(dev, host, rtol=1e-5)
