"""Function forms of the Tensor methods, as numpy and PyTorch users write them:
`th.matmul(a, b)`, `th.sum(t, dim=1)`, `th.clamp(t, 0, 1)`, `th.sort(t)`, ... Each is the
method of the same name on its first argument (same docstring)."""

from .tensor import Tensor

_NAMES = [
    "matmul", "mm", "mv", "bmm", "dot", "outer", "clamp", "sort", "argsort", "topk", "sum", "prod", "mean", "std",
    "var", "max", "min", "argmax", "argmin", "cumsum", "cumprod", "norm", "median", "nonzero", "maximum", "minimum",
    "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "floor", "ceil", "round", "equal", "all", "any",
    "logical_not", "lt", "le", "gt", "ge", "eq", "ne", "add", "sub", "mul", "div", "fmod",
]


def _make(name):
    method = getattr(Tensor, name)

    def f(t, *args, **kwargs):
        return method(t, *args, **kwargs)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = method.__doc__
    return f


for _n in _NAMES:
    globals()[_n] = _make(_n)

__all__ = list(_NAMES)
