#!/usr/bin/env python3
"""Fits the polynomial coefficients of src/kernels/vmath/'s f32 kernels (run: python
scripts/vmath_fit.py; with --tables, prints the tables of src/kernels/vmath/avx512.rs instead). Minimax in relative error by Lawson's iteration (weighted least squares,
the weights grown where the error is largest) on a dense grid, the target computed with mpmath
at 40 digits; each coefficient is rounded to f32 in turn, lowest first, and the higher ones
refitted to absorb that rounding. Prints the coefficients and the fit's max relative error (the
rounding of the f32 evaluation comes on top; the Rust tests measure the whole function)."""

import sys

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


def fit_f32(name, t, target, scale, base, deg, fixed=(), out=sys.stdout):
    fixed = list(fixed)
    for k in range(len(fixed), deg + 1):
        c, e = lawson(t, target, scale, base, deg, fixed)
        fixed.append(float(np.float32(c[k])))
    V = np.vander(t, deg + 1, increasing=True)
    err = np.abs((base + scale * (V @ np.array(fixed)) - target) / target).max()
    print(f"{name}: degree {deg}, max rel error {err:.3g} ({err / 2**-24:.3f} half-ulps at worst)", file=out)
    if out is sys.stdout:
        for c in fixed:
            print(f"    {np.float32(c).view(np.uint32):#010x}  // {np.float32(c)!r}")
    return fixed


def bits(x):
    return f"{np.float32(x).view(np.uint32):#010x}"


def rust_table(doc, name, vals):
    rows = ["    " + ", ".join(bits(v) for v in vals[i : i + 8]) + "," for i in range(0, len(vals), 8)]
    return f"/// {doc}\npub(super) const {name}: [u32; {len(vals)}] = [\n" + "\n".join(rows) + "\n];"


# avx512.rs's tanh: y = |x| + TANH_OFF picks the interval by its exponent and top three mantissa
# bits (bits >> 20, the low five bits of that: 32 entries); |x| is clamped to TANH_CAP.
TANH_OFF, TANH_CAP, TANH_DEG = 0.75, 9.875, 4


def tanh_intervals():
    """{entry: (start, end)} of |x| for each table entry in use."""
    out = {}
    for k in range(-1, 4):
        for j in range(8):
            ylo, yhi = 2.0**k * (1 + j / 8), 2.0**k * (1 + (j + 1) / 8)
            if yhi <= TANH_OFF or ylo - TANH_OFF > TANH_CAP:
                continue
            entry = ((127 + k) * 8 + j) % 32
            assert entry not in out
            out[entry] = (max(ylo - TANH_OFF, 0.0), yhi - TANH_OFF)
    return out


def tanh_tables():
    """Per entry: the interval start and c0..c_deg of the polynomial in |x| - start (relative
    minimax, each a little wider than its interval: y's rounding can move a boundary by an
    ulp). The unused entry: start 16, constant 1."""
    starts, coefs = [16.0] * 32, [[1.0] + [0.0] * TANH_DEG for _ in range(32)]
    for e, (lo, hi) in sorted(tanh_intervals().items()):
        hi = min(hi, TANH_CAP + 0.125)
        w = hi - lo
        a = np.linspace(max(lo - w * 1e-3, 0.0), hi + w * 1e-3, 4000)
        a = a[a != 0]
        target = np.array([float(mp.tanh(mp.mpf(x))) for x in a])
        fixed = [0.0] if lo == 0 else []
        name = f"tanh [{lo:.4f}, {hi:.4f})"
        starts[e] = lo
        coefs[e] = fit_f32(name, a - lo, target, np.ones_like(a), np.zeros_like(a), TANH_DEG, fixed, sys.stderr)
    return starts, coefs


def ln_tables():
    """Per entry (m's top five mantissa bits: [1, 3/2) in 16 steps, then [3/4, 1)): c ~ 1/m,
    among the floats near 1/centre the one whose -ln c is nearest a float, and -ln c rounded
    (c = 1 next to 1); then q of log1p(r) = r + r^2 q(r) over the range of r = m c - 1."""
    invs, logcs, rlo, rhi = [], [], 0.0, 0.0
    for i in range(32):
        lo, hi = (1 + i / 32, 1 + (i + 1) / 32) if i < 16 else (0.75 + (i - 16) / 64, 0.75 + (i - 15) / 64)
        if i in (0, 31):
            c, L = 1.0, 0.0
        else:
            u = int(np.float32(2 / (lo + hi)).view(np.uint32))
            cands = np.arange(u - 3000, u + 3001, dtype=np.uint32).view(np.float32)
            best = None
            for v in cands:
                Lx = -mp.log(mp.mpf(float(v)))
                err = abs(mp.mpf(float(np.float32(float(Lx)))) - Lx)
                if best is None or err < best[0]:
                    best = (err, float(v), float(np.float32(float(Lx))))
            _, c, L = best
        invs.append(c)
        logcs.append(L)
        rlo, rhi = min(rlo, lo * c - 1), max(rhi, hi * c - 1)
    r = np.linspace(rlo, rhi, 20001)
    r = r[r != 0]
    l1p = np.array([float(mp.log1p(mp.mpf(x))) for x in r])
    q = fit_f32(f"ln q, r in [{rlo:.4f}, {rhi:.4f}]", r, l1p, r * r, r, 2, fixed=[-0.5], out=sys.stderr)
    return invs, logcs, q


def ln_f64_tables():
    """f64 `ln`: 16 entries (m in [1, 3/2) in 8 steps, then [3/4, 1)), c ~ 1/m with 9 bits (1 next
    to 1), -ln c as a double-double; q of degree 9 (Chebyshev interpolation at 50 digits: the
    least-squares fit above cannot see errors near 2^-53)."""
    mp.mp.dps = 50
    invs, hi, lo, rlo, rhi = [], [], [], mp.mpf(0), mp.mpf(0)
    for i in range(16):
        a = mp.mpf(1) + mp.mpf(i) / 16 if i < 8 else mp.mpf(3) / 4 + mp.mpf(i - 8) / 32
        b = a + (mp.mpf(1) / 16 if i < 8 else mp.mpf(1) / 32)
        c = mp.mpf(1) if i in (0, 15) else mp.mpf(round(2 / (a + b) * 512)) / 512
        L = -mp.log(c)
        invs.append(float(c))
        hi.append(float(L))
        lo.append(float(L - mp.mpf(float(L))))
        rlo, rhi = min(rlo, a * c - 1), max(rhi, b * c - 1)
    poly, err = mp.chebyfit(lambda r: (mp.log1p(r) - r) / r**2 if r else mp.mpf(-0.5), [rlo, rhi], 10, error=True)
    print(f"ln f64 q: degree 9, r in [{float(rlo):.4f}, {float(rhi):.4f}], error {float(err):.3g}", file=sys.stderr)
    mp.mp.dps = 40
    return invs, hi, lo, [float(c) for c in reversed(poly)]


def rust_table64(doc, name, vals):
    rows = ["    " + ", ".join(f"{np.float64(v).view(np.uint64):#018x}" for v in vals[i : i + 4]) + "," for i in range(0, len(vals), 4)]
    return f"/// {doc}\npub(super) const {name}: [u64; {len(vals)}] = [\n" + "\n".join(rows) + "\n];"


def print_tables():
    starts, coefs = tanh_tables()
    invs, logcs, q = ln_tables()
    print("// Generated by scripts/vmath_fit.py --tables (then cargo fmt).\n")
    print("/// `tanh`: per entry, the start of its interval of |x|, then c0.. of its polynomial in |x| - start.")
    print(f"pub(super) const TANH: [[u32; 32]; {TANH_DEG + 2}] = [")
    for row in [starts] + [[c[k] for c in coefs] for k in range(TANH_DEG + 1)]:
        print("    [")
        for i in range(0, 32, 8):
            print("        " + ", ".join(bits(v) for v in row[i : i + 8]) + ",")
        print("    ],")
    print("];")
    print(rust_table("`ln`: per entry, c ~ 1/m.", "LN_INV", invs))
    print(rust_table("`ln`: -ln c, rounded.", "LN_LOGC", logcs))
    invs64, hi64, lo64, q64 = ln_f64_tables()
    print(rust_table64("f64 `ln`: per entry, c ~ 1/m.", "LN64_INV", invs64))
    print(rust_table64("f64 `ln`: -ln c, rounded.", "LN64_LOGC", hi64))
    print(rust_table64("f64 `ln`: what -ln c's rounding left.", "LN64_LOGC_LO", lo64))
    print(rust_table64("f64 `ln`: q(r) = -1/2 + q1 r + ... + q9 r^9.", "LN64_Q", q64))
    print(rust_table("`ln`: q(r) = -1/2 + q1 r + q2 r^2.", "LN_Q", q))


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
    print_tables() if "--tables" in sys.argv else main()
