#!/usr/bin/env python3
"""Fits the polynomial coefficients of src/kernels/vmath.rs's f32 kernels (run: python
scripts/vmath_fit.py). Minimax in relative error by Lawson's iteration (weighted least squares,
the weights grown where the error is largest) on a dense grid, the target computed with mpmath
at 40 digits; each coefficient is rounded to f32 in turn, lowest first, and the higher ones
refitted to absorb that rounding. Prints the coefficients and the fit's max relative error (the
rounding of the f32 evaluation comes on top; the Rust tests measure the whole function)."""

import mpmath as mp
import numpy as np

mp.mp.dps = 40


def lawson(t, target, scale, base, deg, fixed=(), iters=200):
    """Coefficients c (len deg+1) minimizing max |base(t) + scale(t) * sum c_k t^k - target| /
    |target| over the grid t; `fixed` holds already-rounded leading coefficients."""
    w = np.ones_like(t)
    nf = len(fixed)
    V = np.vander(t, deg + 1, increasing=True)
    resid_t = (target - base) / scale - (V[:, :nf] @ np.array(fixed) if nf else 0)
    rel = np.abs(scale / target)
    for _ in range(iters):
        A = V[:, nf:] * (np.sqrt(w) * rel)[:, None]
        c, *_ = np.linalg.lstsq(A, resid_t * np.sqrt(w) * rel, rcond=None)
        err = np.abs((V[:, nf:] @ c - resid_t) * rel)
        w *= err / err.max() + 1e-3
        w /= w.sum()
    return np.concatenate([fixed, c]), err.max()


def fit_f32(name, t, target, scale, base, deg, fixed=()):
    fixed = list(fixed)
    for k in range(len(fixed), deg + 1):
        c, e = lawson(t, target, scale, base, deg, fixed)
        fixed.append(float(np.float32(c[k])))
    V = np.vander(t, deg + 1, increasing=True)
    err = np.abs((base + scale * (V @ np.array(fixed)) - target) / target).max()
    print(f"{name}: degree {deg}, max rel error {err:.3g} ({err / 2**-24:.3f} half-ulps at worst)")
    for c in fixed:
        print(f"    {np.float32(c).view(np.uint32):#010x}  // {np.float32(c)!r}")
    return fixed


def main():
    # e^r = 1 + r + r^2 q(r), |r| <= ln2/2 (plus the reduction's rounding).
    r = np.linspace(-0.3466, 0.3466, 20001)
    r = r[r != 0]
    e = np.array([float(mp.exp(mp.mpf(x))) for x in r])
    em1 = np.array([float(mp.expm1(mp.mpf(x))) for x in r])
    # (q(0) = 1/2 exactly: r^2 / 2 is then exact in the leading term)
    # exp: degree 4 (its error counts relative to e^r); tanh's expm1: degree 5 (relative to
    # e^r - 1, which tanh passes on almost undamped for small arguments)
    fit_f32("exp q", r, em1, r * r, r, 4, fixed=[0.5])
    fit_f32("expm1 q", r, em1, r * r, r, 5, fixed=[0.5])
    _ = e


if __name__ == "__main__":
    main()
