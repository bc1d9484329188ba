"""Random test data shared by the package's tests (numpy arrays of any dtype, bool included)."""


def random_array(rng, shape, dtype, high, scale):
    """Bools half true, integers in [0, high), floats uniform in [-scale/2, scale/2)."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, high, size=shape).astype(dtype)
    return (rng.random(shape) * scale - scale / 2).astype(dtype)
