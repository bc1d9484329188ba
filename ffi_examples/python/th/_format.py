"""Printing tensors the way numpy prints arrays.

`array2string(t)` follows numpy's `np.array2string` defaults exactly (precision 8, floatmode
"maxprec", suppress_small False, threshold 1000, edgeitems 3, linewidth 75, sign "-"): the same
choice between positional and scientific notation, the same shortest round-trip digits for the
tensor's own dtype (float32 prints `0.1`, not `0.10000000149`), the same trailing-dot and
padding rules, the same wrapping and `...` summaries. `repr(t)` is PyTorch-like:
`tensor([1., 2.], dtype=float32)` — numpy's `array_repr` layout with `tensor(` for `array(`
and the dtype always written after the data (every dtype, the defaults included), on a line of
its own when it would overflow the last one.

Only the printed elements (at most 2 * edgeitems per dimension of a summarised tensor) are read
from the tensor.
"""

import math
import struct

from . import _ops

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tensor import Tensor

PRECISION = 8
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 75


# ---- rounding to a dtype (the shortest digits that read back to the same value) ----


def _round_f32(x):
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _round_f16(x):
    try:
        return struct.unpack("<e", struct.pack("<e", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _round_bf16(x):
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000  # round to nearest even
    return struct.unpack("<f", struct.pack("<I", bits))[0]


_ROUND = {"float64": float, "float32": _round_f32, "float16": _round_f16, "bfloat16": _round_bf16}
_MAX_DIGITS = {"float64": 17, "float32": 9, "float16": 5, "bfloat16": 4}
# numpy >= 2.3 switches to scientific notation from 10**min(8, finfo(dtype).precision)
# (ml_dtypes gives bfloat16 precision 2).
_EXP_CUTOFF = {"float64": 1e8, "float32": 1e6, "float16": 1e3, "bfloat16": 1e2}


def _shortest_sci(x, dt):
    """(digits, exponent): the fewest significant digits that read back as `x` in dtype `dt`,
    `x` = 0.d1d2... * 10^(exponent+1) written as d1.d2... e exponent."""
    if dt == "float64":
        return _split_repr(repr(abs(x)))
    rnd = _ROUND[dt]
    for p in range(1, _MAX_DIGITS[dt] + 1):
        s = f"{abs(x):.{p - 1}e}"
        if rnd(float(s)) == abs(x):
            break
    m, _, e = s.partition("e")
    return m.replace(".", "").rstrip("0") or "0", int(e)


def _split_repr(s):
    """Digits and decimal exponent of a Python float repr (`1.5e-07`, `123.25`)."""
    m, _, e = s.partition("e")
    exp = int(e) if e else 0
    ip, _, fp = m.partition(".")
    digits = (ip + fp).lstrip("0")
    lead_zeros = len(ip + fp) - len((ip + fp).lstrip("0"))
    exp += len(ip) - 1 - lead_zeros
    digits = digits.rstrip("0") or "0"
    if digits == "0":
        exp = 0
    return digits, exp


def _positional(x, dt, precision, min_digits=0, pad_left=0, pad_right=0):
    """numpy's dragon4_positional(unique=True, fractional=True, trim='.') for dtype `dt`."""
    neg = math.copysign(1.0, x) < 0
    digits, exp = _shortest_sci(x, dt)
    nfrac = max(0, len(digits) - 1 - exp)
    if x == 0:
        ip, fp = "0", ""
    elif nfrac > precision:
        # more digits than allowed: round the exact value to `precision` places
        s = f"{abs(x):.{precision}f}"
        ip, _, fp = s.partition(".")
        fp = fp.rstrip("0")
    else:
        if exp >= 0:
            ip = digits[:exp + 1].ljust(exp + 1, "0")
            fp = digits[exp + 1:]
        else:
            ip = "0"
            fp = "0" * (-exp - 1) + digits
    if len(fp) < min_digits:
        fp = fp + "0" * (min_digits - len(fp))
    ip = ("-" if neg else "") + ip
    s = ip.rjust(pad_left) + "." + fp
    return s + " " * (pad_right - len(fp)) if pad_right > len(fp) else s


def _scientific(x, dt, precision, min_digits=0, pad_left=0, exp_digits=2):
    """numpy's dragon4_scientific(unique=True) with trim '.' (min_digits 0) or 'k'."""
    neg = math.copysign(1.0, x) < 0
    if x == 0:
        digits, exp = "0", 0
    else:
        digits, exp = _shortest_sci(x, dt)
        if len(digits) - 1 > precision:
            m, _, e = f"{abs(x):.{precision}e}".partition("e")
            digits, exp = m.replace(".", "").rstrip("0") or "0", int(e)
    ip, fp = digits[0], digits[1:]
    if len(fp) < min_digits and x != 0:
        # more digits than the shortest: Dragon4 prints the exact value's, not zeros
        m, _, e = f"{abs(x):.{min_digits}e}".partition("e")
        ip, fp, exp = m[0], m[2:], int(e)
    elif len(fp) < min_digits:
        fp += "0" * (min_digits - len(fp))
    ip = ("-" if neg else "") + ip
    es = str(abs(exp)).rjust(exp_digits, "0")
    return ip.rjust(pad_left) + "." + fp + "e" + ("-" if exp < 0 else "+") + es


class _FloatFormat:
    """numpy's FloatingFormat for floatmode 'maxprec', sign '-', suppress_small False."""

    def __init__(self, values, dt):
        self.dt = dt
        self.precision = PRECISION
        finite = [v for v in values if math.isfinite(v)]
        nz = [abs(v) for v in finite if v != 0]
        self.exp = False
        if nz:
            mx, mn = max(nz), min(nz)
            ratio = _ROUND[dt](mx / mn) if mx / mn < 1e300 else math.inf
            if mx >= _EXP_CUTOFF[dt] or mn < 0.0001 or ratio > 1000.0:
                self.exp = True
        if not finite:
            self.pad_left = self.pad_right = 0
            self.min_digits = 0
            self.exp_size = -1
        elif self.exp:
            parts = [_scientific(v, dt, self.precision) for v in finite]
            mant = [p.partition("e")[0] for p in parts]
            self.exp_size = max(len(p.partition("e")[2]) for p in parts) - 1
            self.precision = max(len(m.partition(".")[2]) for m in mant)
            self.min_digits = self.precision
            self.pad_left = max(len(m.partition(".")[0]) for m in mant)
            self.pad_right = self.exp_size + 2 + self.precision
        else:
            parts = [_positional(v, dt, self.precision) for v in finite]
            self.pad_left = max(len(p.partition(".")[0]) for p in parts)
            self.pad_right = max(len(p.partition(".")[2]) for p in parts)
            self.exp_size = -1
            self.min_digits = 0
        if len(finite) != len(values):
            neginf = any(v < 0 for v in values if math.isinf(v))
            offset = self.pad_right + 1
            self.pad_left = max(self.pad_left, 3 - offset, 3 + neginf - offset)

    def __call__(self, x):
        if not math.isfinite(x):
            r = "nan" if math.isnan(x) else ("-inf" if x < 0 else "inf")
            return " " * (self.pad_left + self.pad_right + 1 - len(r)) + r
        if self.exp:
            return _scientific(x, self.dt, self.precision, self.min_digits, self.pad_left, self.exp_size)
        return _positional(x, self.dt, self.precision, self.min_digits, self.pad_left, self.pad_right)


def _int_format(values):
    if not values:
        return str
    mx, mn = max(values), min(values)
    width = max(len(str(mx)), len(str(mn)))
    return lambda v: str(v).rjust(width)


def _bool_format(values):
    return lambda v: " True" if v else "False"


def _extend_line(s, line, word, width, next_prefix):
    if len(line) + len(word) > width and len(line) > len(next_prefix):
        s += line.rstrip() + "\n"
        line = next_prefix
    return s, line + word


def _format_nested(data, shape, fmt, width, next_prefix, sep, summarised):
    """numpy's _formatArray over nested lists of already-selected edge items; `shape` is the
    full shape (it decides where `...` goes)."""

    def rec(x, axis, indent, curr_width):
        if axis == len(shape):
            return fmt(x)
        next_indent = indent + " "
        next_width = curr_width - 1
        n = shape[axis]
        show = summarised and 2 * EDGEITEMS < n
        lead = EDGEITEMS if show else 0
        trail = EDGEITEMS if show else n
        # x holds lead + trail items when summarised, else all n
        items = x
        left = axes_left = len(shape) - axis  # noqa: F841
        if axes_left == 1:
            elem_width = curr_width - max(len(sep.rstrip()), 1)
            s, line = "", indent
            for i in range(lead):
                s, line = _extend_line(s, line, rec(items[i], axis + 1, next_indent, next_width), elem_width, indent)
                line += sep
            if show:
                s, line = _extend_line(s, line, "...", elem_width, indent)
                line += sep
            for i in range(trail, 1, -1):
                s, line = _extend_line(s, line, rec(items[len(items) - i], axis + 1, next_indent, next_width),
                                       elem_width, indent)
                line += sep
            s, line = _extend_line(s, line, rec(items[-1], axis + 1, next_indent, next_width), elem_width, indent)
            s += line
        else:
            s = ""
            line_sep = sep.rstrip() + "\n" * (left - 1)
            for i in range(lead):
                s += indent + rec(items[i], axis + 1, next_indent, next_width) + line_sep
            if show:
                s += indent + "..." + line_sep
            for i in range(trail, 1, -1):
                s += indent + rec(items[len(items) - i], axis + 1, next_indent, next_width) + line_sep
            s += indent + rec(items[-1], axis + 1, next_indent, next_width)
        return "[" + s[len(indent):] + "]"

    return rec(data, 0, next_prefix, width)


def _edges(t, shape, summarised):
    """Nested lists of the elements numpy would print (edge items only when summarised)."""
    if not summarised:
        return t.tolist()
    v = t
    for axis, n in enumerate(shape):
        if n > 2 * EDGEITEMS:
            v = _ops.cat([v.narrow(axis, 0, EDGEITEMS), v.narrow(axis, n - EDGEITEMS, EDGEITEMS)], axis)
    return v.tolist()


def _flat(x):
    if isinstance(x, list):
        for e in x:
            yield from _flat(e)
    else:
        yield x


def array2string(t: "Tensor", separator: str = " ", prefix: str = "", suffix: str = "") -> str:
    """The tensor's data as numpy's `np.array2string(a, separator=..., prefix=..., suffix=...)`
    prints the same array (defaults as above)."""
    shape = t.shape
    if not shape or 0 in shape:
        return "[]"
    n = math.prod(shape)
    summarised = n > THRESHOLD
    data = _edges(t, shape, summarised)
    values = list(_flat(data))
    kind = t.dtype.kind
    if kind == "bool":
        fmt = _bool_format(values)
    elif kind == "int":
        fmt = _int_format(values)
    else:
        fmt = _FloatFormat(values, t.dtype.name)
    return _format_nested(data, shape, fmt, LINEWIDTH - len(suffix), " " + " " * len(prefix), separator,
                          summarised)


def tensor_repr(t):
    """`tensor([...], dtype=float32)` (plus `, device='cuda:0'` for device tensors)."""
    extra = f"dtype={t.dtype.name}" + ("" if not t.is_cuda else f", device='{t.device}'")
    if t.is_cuda:
        with t.cpu() as h:
            body = array2string(h, ", ", "tensor(", ")")
    else:
        body = array2string(t, ", ", "tensor(", ")")
    last = body.rsplit("\n", 1)[-1]
    if len(last) + len(extra) + 3 > LINEWIDTH:
        return f"tensor({body},\n{' ' * len('tensor(')}{extra})"
    return f"tensor({body}, {extra})"
