"""Smooth random fields for the scalar benchmarks (bench/toposz_speed.sh,
bench/toposz_large_fields.sh): Gaussian noise (numpy default_rng(seed)) whose Fourier
coefficients of wavenumber at least `cut` are set to 0, as little-endian float32."""

import numpy as np


def smooth(n, cut, seed, dims):
    """An n^dims field (C order, the last axis x), low-pass filtered at wavenumber `cut`."""
    shape = (n,) * dims
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    f = np.fft.rfftn(a)
    ks = [np.fft.fftfreq(n) * n] * (dims - 1) + [np.fft.rfftfreq(n) * n]
    r2 = sum(k**2 for k in np.meshgrid(*ks, indexing="ij", sparse=True))
    f[np.sqrt(r2) >= cut] = 0
    return np.fft.irfftn(f, s=shape).astype("<f4")
