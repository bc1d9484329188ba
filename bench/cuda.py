#!/usr/bin/env python3
"""THC on a GPU: GB/s of pointwise ops and reductions on device tensors, against the device's
bandwidth and against PyTorch on the same device; then GFLOP/s of addmm (float32, float16) and
the rate of sort / topk against torch.matmul / torch.sort / torch.topk (bench/cuda_compute.py).

    python3 bench/cuda.py [--lib libth.so] [--n 33554432] [--json out.json]
    TH_CUDA_EMULATOR=1 python3 bench/cuda.py --lib <cuda-emulator build> --smoke

Ops (float32, one device tensor per operand, the default stream): fill, copy, cadd
(r = t + v*s), mul by a scalar, exp, a broadcast add (M x K plus a 1 x K row expanded), a
transposed copy (M x K from the transpose of a K x M tensor), sumall, and sum along each dim of
an M x K tensor. GB/s counts logical bytes: each input element read once, each output element
written once. Each op is called once first (NVRTC compiles its kernels at first use) and its
result checked against numpy; then samples of k calls are timed between THCudaSynchronize calls
(k chosen so a sample lasts >= ~20 ms) and the median sample is reported.

Columns: %peak = GB/s / the device's theoretical bandwidth (2 * memory clock * bus width, from
cuDeviceGetAttribute through libcuda); %copy = GB/s / this run's contiguous copy GB/s (a
measured peak); torch = PyTorch's GB/s for the same op on the same device when torch is
importable with CUDA, and th/torch = torch time / libth time (> 1: libth is faster).

libnvrtc.so.13 must be loadable: from LD_LIBRARY_PATH or the system, else this script loads it
by path from TH_NVRTC_DIR or the nvidia-* pip wheels of the running Python (as PyTorch's venv
has them). Without a device it says so and exits 0. On the emulator (TH_CUDA_EMULATOR=1, a cuda-emulator
build) only --smoke runs (tiny sizes: proves the script and the ops, labelled "emulator: not GPU
speed"; the numbers mean nothing).
"""

import argparse
import ctypes as C
import json
import os
import statistics
import sys
import time

import numpy as np
from cuda_compute import SIGS as COMPUTE_SIGS, Compute

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
vp, f32, i64, i32, lng = C.c_void_p, C.c_float, C.c_int64, C.c_int, C.c_long


class THC:
    """The libth entry points the benchmark calls, with fixed ctypes signatures."""

    SIGS = {
        "THCState_alloc": (vp, []),
        "THCState_free": (None, [vp]),
        "THCState_getNumDevices": (i32, [vp]),
        "THCudaSynchronize": (None, [vp]),
        "THCudaTensor_newWithSize1d": (vp, [vp, i64]),
        "THCudaTensor_newWithSize2d": (vp, [vp, i64, i64]),
        "THCudaTensor_newTranspose": (vp, [vp, vp, i32, i32]),
        "THCudaTensor_newExpand": (vp, [vp, vp, vp]),
        "THCudaTensor_free": (None, [vp, vp]),
        "THCudaTensor_copyFloat": (None, [vp, vp, vp]),
        "THFloatTensor_copyCuda": (None, [vp, vp, vp]),
        "THCudaTensor_fill": (None, [vp, vp, f32]),
        "THCudaTensor_copy": (None, [vp, vp, vp]),
        "THCudaTensor_cadd": (None, [vp, vp, vp, f32, vp]),
        "THCudaTensor_mul": (None, [vp, vp, vp, f32]),
        "THCudaTensor_exp": (None, [vp, vp, vp]),
        "THCudaTensor_sumall": (f32, [vp, vp]),
        "THCudaTensor_sum": (None, [vp, vp, vp, lng, i32]),
        "THCudaTensor_cumsum": (None, [vp, vp, vp, i32]),
        "THFloatTensor_newWithSize1d": (vp, [i64]),
        "THFloatTensor_newWithSize2d": (vp, [i64, i64]),
        "THFloatTensor_data": (vp, [vp]),
        "THFloatTensor_free": (None, [vp]),
        "THLongStorage_newWithSize2": (vp, [i64, i64]),
        "THLongStorage_free": (None, [vp]),
        "THGetLastError": (C.c_char_p, []),
        "THGetLastErrorCode": (i32, []),
        "THClearLastError": (None, []),
        **COMPUTE_SIGS,
    }

    def __init__(self, path):
        self.dll = C.CDLL(path)
        self.missing = set()
        for name, (res, args) in self.SIGS.items():
            try:
                f = self.dll[name]
            except AttributeError:
                self.missing.add(name)
                continue
            f.restype, f.argtypes = res, args
            setattr(self, name, f)
        self.state = self.THCState_alloc()

    def has(self, *names):
        return not any(n in self.missing for n in names)

    def check(self, what):
        """Raises with the library's message if the calls since the last check recorded an error."""
        if self.THGetLastErrorCode():
            msg = self.THGetLastError().decode()
            self.THClearLastError()
            raise RuntimeError(f"{what}: {msg}")

    def devices(self):
        self.THClearLastError()
        n = self.THCState_getNumDevices(self.state)
        reason = self.THGetLastError().decode() if n <= 0 and self.THGetLastErrorCode() else ""
        self.THClearLastError()
        return n, reason

    def sync(self):
        self.THCudaSynchronize(self.state)

    def upload(self, a):
        """A new contiguous device tensor holding the float32 array `a` (1-D or 2-D)."""
        a = np.ascontiguousarray(a, dtype=np.float32)
        h = self.THFloatTensor_newWithSize1d(a.size) if a.ndim == 1 else self.THFloatTensor_newWithSize2d(*a.shape)
        C.memmove(self.THFloatTensor_data(h), a.ctypes.data, a.nbytes)
        d = self.THCudaTensor_newWithSize1d(self.state, a.size) if a.ndim == 1 else \
            self.THCudaTensor_newWithSize2d(self.state, *a.shape)
        self.THCudaTensor_copyFloat(self.state, d, h)
        self.THFloatTensor_free(h)
        self.check("upload")
        return d

    def download(self, d, shape):
        """The device tensor `d` (any layout, `shape`) as a numpy array."""
        h = self.THFloatTensor_newWithSize1d(shape[0]) if len(shape) == 1 else self.THFloatTensor_newWithSize2d(*shape)
        self.THFloatTensor_copyCuda(self.state, h, d)
        self.check("download")
        out = np.empty(shape, dtype=np.float32)
        C.memmove(out.ctypes.data, self.THFloatTensor_data(h), out.nbytes)
        self.THFloatTensor_free(h)
        return out

    def free(self, *ts):
        for t in ts:
            self.THCudaTensor_free(self.state, t)


def preload_nvrtc():
    """Loads libnvrtc.so.13 by path when the loader cannot find it by name, so libth's dlopen of
    the bare name gets that copy (builtins first: NVRTC opens them by name). Returns its folder."""
    try:
        C.CDLL("libnvrtc.so.13")
        return "(found by name)"
    except OSError:
        pass
    import glob
    import site

    roots = [os.environ.get("TH_NVRTC_DIR", "")]
    for sp in site.getsitepackages() + [site.getusersitepackages()] + sys.path:
        roots += sorted(glob.glob(os.path.join(sp, "nvidia", "*", "lib")))
    for d in roots:
        if d and os.path.exists(os.path.join(d, "libnvrtc.so.13")):
            for b in sorted(glob.glob(os.path.join(d, "libnvrtc-builtins.so.13*"))):
                C.CDLL(b, mode=C.RTLD_GLOBAL)
            C.CDLL(os.path.join(d, "libnvrtc.so.13"), mode=C.RTLD_GLOBAL)
            return d
    return None


def device_peak_gbs():
    """Theoretical DRAM bandwidth of device 0 in GB/s from the driver (None if unavailable)."""
    try:
        cu = C.CDLL("libcuda.so.1")
        dev, clk, bus = C.c_int(), C.c_int(), C.c_int()
        if cu.cuInit(0) or cu.cuDeviceGet(C.byref(dev), 0):
            return None, None
        name = C.create_string_buffer(256)
        cu.cuDeviceGetName(name, 256, dev)
        # CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE (kHz) = 36, _GLOBAL_MEMORY_BUS_WIDTH (bits) = 37
        if cu.cuDeviceGetAttribute(C.byref(clk), 36, dev) or cu.cuDeviceGetAttribute(C.byref(bus), 37, dev):
            return None, name.value.decode()
        if clk.value <= 0 or bus.value <= 0:
            return None, name.value.decode()
        return 2.0 * clk.value * 1e3 * bus.value / 8 / 1e9, name.value.decode()
    except OSError:
        return None, None


def timed(run, sync, min_sample_s, samples):
    """Median seconds per call of `run` (sync'd before and after each sample of k calls)."""
    sync()
    t = time.perf_counter()
    run()
    sync()
    one = max(time.perf_counter() - t, 1e-7)
    k = max(1, int(min_sample_s / one))
    res = []
    for _ in range(samples):
        sync()
        t = time.perf_counter()
        for _ in range(k):
            run()
        sync()
        res.append((time.perf_counter() - t) / k)
    return statistics.median(res)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default=os.environ.get("TH_LIB") or next(
        (p for p in (os.path.join(ROOT, d, "libth.so") for d in ("lib", "target/release", "target/debug"))
         if os.path.exists(p)), "libth.so"))
    ap.add_argument("--n", type=int, default=1 << 25, help="elements per operand (default 2^25)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one short sample: proves the script")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-compute", action="store_true", help="only the bandwidth cases (no addmm, sort, topk)")
    ap.add_argument("--quick", action="store_true", help="2^24 elements, 3 samples, fewer compute sizes")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()

    th = THC(args.lib)
    emulated = os.environ.get("TH_CUDA_EMULATOR") == "1"
    n_dev, reason = th.devices()
    if n_dev <= 0:
        print(f"no CUDA device: skipped ({reason})")
        return 0
    if emulated and not args.smoke:
        print("emulator: not GPU speed; run with --smoke (tiny sizes) to check the script")
        return 0
    need = ["THCudaTensor_fill", "THCudaTensor_copy", "THCudaTensor_cadd", "THCudaTensor_mul", "THCudaTensor_exp"]
    if not th.has(*need):
        print(f"this libth lacks {sorted(th.missing & set(need))}: cannot benchmark")
        return 1

    n = 4096 if args.smoke else min(args.n, 1 << 24) if args.quick else args.n
    k = 1 << max(1, (n.bit_length() - 1) // 2)  # a near-square M x K with M * K <= n
    m = n // k
    n = m * k
    min_s, samples = (0.0, 1) if args.smoke else (0.02, 3) if args.quick else (0.02, 5)

    peak, name = (None, None) if emulated else device_peak_gbs()
    label = "emulator: not GPU speed" if emulated else (name or "device 0")
    print(f"{label}; n = {n} ({m} x {k}); lib {args.lib}")
    if not emulated:
        print(f"nvrtc: {preload_nvrtc() or 'libnvrtc.so.13 not found: kernels cannot compile'}")
    if peak:
        print(f"theoretical bandwidth {peak:.0f} GB/s")

    torch, why = None, "--no-torch" if args.no_torch else "the emulator" if emulated else ""
    if not why:
        try:
            import torch as _t

            if _t.cuda.is_available():
                torch = _t
            else:
                why = f"torch {_t.__version__} has no CUDA device"
        except ImportError:
            why = "torch is not installed"
    if torch:
        tf32 = torch.backends.cuda.matmul.allow_tf32
        print(f"torch: {torch.__version__} on {torch.cuda.get_device_name(0)} (matmul TF32 {'on' if tf32 else 'off'})")
    else:
        print(f"torch: not compared ({why}): th's numbers only")

    rng = np.random.default_rng(0)
    a_h = rng.standard_normal((m, k), dtype=np.float32)
    b_h = rng.standard_normal((m, k), dtype=np.float32)
    row_h = rng.standard_normal(k, dtype=np.float32)
    st = th.state
    a, b, r = th.upload(a_h), th.upload(b_h), th.upload(np.zeros((m, k), np.float32))
    row = th.upload(row_h)
    size = th.THLongStorage_newWithSize2(m, k)
    row_x = th.THCudaTensor_newExpand(st, row, size)  # 1-D K -> M x K with stride 0
    th.THLongStorage_free(size)
    at_src = th.upload(a_h.T.copy())  # K x M; its transpose is a_h's values in an M x K view
    at = th.THCudaTensor_newTranspose(st, at_src, 0, 1)
    rk, rm = th.upload(np.zeros(k, np.float32)), th.upload(np.zeros(m, np.float32))
    th.check("setup")
    B = 4  # bytes per float32

    # name, call, bytes per call, (result tensor, shape, numpy reference) or a float check
    cases = [
        ("fill", lambda: th.THCudaTensor_fill(st, r, 1.5), n * B, (r, (m, k), lambda: np.full((m, k), 1.5, np.float32))),
        ("copy", lambda: th.THCudaTensor_copy(st, r, a), 2 * n * B, (r, (m, k), lambda: a_h)),
        ("cadd", lambda: th.THCudaTensor_cadd(st, r, a, 0.5, b), 3 * n * B, (r, (m, k), lambda: a_h + np.float32(0.5) * b_h)),
        ("mul scalar", lambda: th.THCudaTensor_mul(st, r, a, 3.0), 2 * n * B, (r, (m, k), lambda: a_h * np.float32(3))),
        ("exp", lambda: th.THCudaTensor_exp(st, r, a), 2 * n * B, (r, (m, k), lambda: np.exp(a_h))),
        ("broadcast add", lambda: th.THCudaTensor_cadd(st, r, a, 1.0, row_x), (2 * n + k) * B,
         (r, (m, k), lambda: a_h + row_h)),
        ("transposed copy", lambda: th.THCudaTensor_copy(st, r, at), 2 * n * B, (r, (m, k), lambda: a_h)),
    ]
    sums = {}
    if th.has("THCudaTensor_sumall"):
        cases.append(("sumall", lambda: sums.__setitem__("all", th.THCudaTensor_sumall(st, a)), n * B,
                      lambda: abs(sums["all"] - float(a_h.sum(dtype=np.float64))) <= 1e-3 * n ** 0.5 + 1e-3))
    if th.has("THCudaTensor_sum"):
        cases.append(("sum dim 0", lambda: th.THCudaTensor_sum(st, rk, a, 0, 0), (n + k) * B,
                      (rk, (k,), lambda: a_h.sum(0, dtype=np.float64))))
        cases.append(("sum dim 1", lambda: th.THCudaTensor_sum(st, rm, a, 1, 0), (n + m) * B,
                      (rm, (m,), lambda: a_h.sum(1, dtype=np.float64))))
    if th.has("THCudaTensor_cumsum"):
        flat = th.upload(a_h.ravel())
        rflat = th.upload(np.zeros(n, np.float32))
        cases.append(("cumsum dim 1", lambda: th.THCudaTensor_cumsum(st, r, a, 1), 2 * n * B,
                      (r, (m, k), lambda: np.cumsum(a_h, 1, dtype=np.float64))))
        cases.append(("cumsum 1-D", lambda: th.THCudaTensor_cumsum(st, rflat, flat, 0), 2 * n * B,
                      (rflat, (n,), lambda: np.cumsum(a_h.ravel(), dtype=np.float64))))
    skipped = [s for s in ("THCudaTensor_sumall", "THCudaTensor_sum", "THCudaTensor_cumsum") if not th.has(s)]

    def torch_cases():
        ta, tb, trow = (torch.from_numpy(x).cuda() for x in (a_h, b_h, row_h))
        tr = torch.empty_like(ta)
        tat = torch.from_numpy(a_h.T.copy()).cuda().t()
        return {
            "fill": lambda: tr.fill_(1.5), "copy": lambda: tr.copy_(ta),
            "cadd": lambda: torch.add(ta, tb, alpha=0.5, out=tr), "mul scalar": lambda: torch.mul(ta, 3.0, out=tr),
            "exp": lambda: torch.exp(ta, out=tr), "broadcast add": lambda: torch.add(ta, trow, out=tr),
            "transposed copy": lambda: tr.copy_(tat), "sumall": lambda: ta.sum(),
            "sum dim 0": lambda: ta.sum(0), "sum dim 1": lambda: ta.sum(1),
            "cumsum dim 1": lambda: torch.cumsum(ta, 1, out=tr), "cumsum 1-D": lambda: torch.cumsum(ta.view(-1), 0),
        }

    tcases = torch_cases() if torch else {}
    rows = []

    def measure(name_, run, nbytes, ref):
        th.THClearLastError()
        run()  # compiles the kernels; checked below
        th.sync()
        th.check(name_)
        if callable(ref):
            assert ref(), f"{name_}: wrong result {sums}"
        else:
            t, shape, want = ref
            got = th.download(t, shape)
            # sums: float32 results of float64 folds in other orders; a 1-D cumsum's partial sums
            # grow like sqrt(n)
            reach = n if name_ == "cumsum 1-D" else m
            np.testing.assert_allclose(got, want(), rtol=2e-5 if "sum" not in name_ else 1e-4,
                                       atol=1e-5 if "sum" not in name_ else 1e-3 * reach ** 0.5, err_msg=name_)
        sec = timed(run, th.sync, min_s, samples)
        th.check(name_)
        gbs = nbytes / sec / 1e9
        row_ = {"op": name_, "us": sec * 1e6, "GB/s": gbs}
        if name_ in tcases:
            tsec = timed(tcases[name_], torch.cuda.synchronize, min_s, samples)
            row_["torch GB/s"], row_["th/torch"] = nbytes / tsec / 1e9, tsec / sec
        return row_

    failed = []
    for name_, run, nbytes, ref in cases:
        try:
            rows.append(measure(name_, run, nbytes, ref))
        except (AssertionError, RuntimeError) as e:  # a wrong or failing op: report it, go on
            print(f"{name_}: FAILED: {e}", flush=True)
            failed.append(name_)
    copy_gbs = next((x["GB/s"] for x in rows if x["op"] == "copy"), None)

    print(f"{'op':<16}{'us/call':>10}{'GB/s':>9}{'%peak':>7}{'%copy':>7}{'torch':>9}{'th/torch':>9}")
    for x in rows:
        pk = f"{100 * x['GB/s'] / peak:.0f}" if peak else "-"
        cp = f"{100 * x['GB/s'] / copy_gbs:.0f}" if copy_gbs else "-"
        tg = f"{x['torch GB/s']:.1f}" if "torch GB/s" in x else "-"
        tr = f"{x['th/torch']:.2f}" if "th/torch" in x else "-"
        print(f"{x['op']:<16}{x['us']:>10.1f}{x['GB/s']:>9.1f}{pk:>7}{cp:>7}{tg:>9}{tr:>9}")
    if skipped:
        print(f"not in this library (not measured): {', '.join(skipped)}")
    th.free(a, b, r, row, row_x, at_src, at, rk, rm)
    compute = Compute(th, torch, args.smoke)
    compute_rows = []
    if args.no_compute:
        print("compute cases: skipped (--no-compute)")
    elif compute.ok():
        print()
        compute_rows = compute.all(args.quick)
    else:
        print(f"compute cases: this libth lacks {sorted(th.missing & set(COMPUTE_SIGS))}: not measured")
    failed += compute.failed
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    if emulated:
        print("emulator: not GPU speed (the numbers above only prove the script runs)")
    th.THCState_free(st)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": label, "n": n, "peak_GB/s": peak, "copy_GB/s": copy_gbs, "rows": rows,
                       "emulated": emulated, "not_measured": skipped, "failed": failed, "compute": compute_rows}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
