"""Rules for ``numpy.fft``.

Every transform is linear (over the reals: the real ones read half a spectrum), so each rule
gives its adjoint, and its tangent is the transform of the tangent. In generated code a
cotangent ``g`` of ``w`` stands for ``dw -> Re(g * dw)`` (``runtime/complex_values.py``), in which
the DFT matrix is its own transpose: the adjoint of ``fft`` is ``fft``, of ``ifft`` ``ifft``, with
the same ``norm``. ``n``/``s`` crop or zero-pad the input (``fit_axes``), whose adjoint pads or
crops back.

* ``rfft`` keeps half the spectrum of a real signal: its adjoint zero-pads the half spectrum to
  the transform length and takes the full ``fft``.
* ``irfft`` reads a half spectrum ``X`` of length ``n // 2 + 1`` (the imaginary parts of the
  mean and, for even ``n``, of the Nyquist frequency are ignored): its output is
  ``sum_k c_k Re(X_k e^{2 pi i k t / n}) / n`` with ``c_k`` 1 for those two and 2 for the others,
  so its adjoint is ``c * ihfft(dy)`` (``hermitian_weights``), for odd and even ``n`` alike.
* ``hfft(a) = irfft(conj(a))`` and ``ihfft(a) = conj(rfft(a))`` with the other normalization.
* The n-dimensional real transforms are the real one along the last axis and complex ones
  along the others.
"""

import numpy as np

from .registry import linear

FFT = "a, n=None, axis=-1, norm=None, out=None"
FFT2 = "a, s=None, axes=(-2, -1), norm=None, out=None"
FFTN = "a, s=None, axes=None, norm=None, out=None"

_AXES = "fft_axes(a, s, axes)"
_BACK = f"axis_sizes(a, {_AXES}), {_AXES})"  # the end of fit_axes(g, ...) back to a's lengths

for _fn in (np.fft.fft, np.fft.ifft):
    linear(_fn, FFT, vjp=f"fit_axes(np.fft.{_fn.__name__}(dy, axis=axis, norm=norm), "
           "axis_sizes(a, axis), axis)")
for _fn, _via in ((np.fft.fft2, "fftn"), (np.fft.fftn, "fftn"), (np.fft.ifft2, "ifftn"),
                  (np.fft.ifftn, "ifftn")):
    linear(_fn, FFT2 if _fn.__name__.endswith("2") else FFTN,
           vjp=f"fit_axes(np.fft.{_via}(dy, axes={_AXES}, norm=norm), {_BACK}")

linear(
    np.fft.rfft, FFT,
    vjp="fit_axes(np.fft.fft(fit_axes(dy, fft_sizes(a, n, axis), axis), axis=axis, norm=norm), "
    "axis_sizes(a, axis), axis)",
)
for _fn, _signature in ((np.fft.rfft2, FFT2), (np.fft.rfftn, FFTN)):
    linear(
        _fn, _signature,
        vjp=f"fit_axes(np.fft.fftn(fit_axes(dy, fft_sizes(a, s, axes), {_AXES}), axes={_AXES}, "
        f"norm=norm), {_BACK}",
    )
linear(
    np.fft.irfft, FFT,
    vjp="fit_axes(np.fft.ihfft(np.real(dy), axis=axis, norm=norm) * hermitian_weights(dy, axis), "
    "axis_sizes(a, axis), axis)",
)
for _fn, _signature in ((np.fft.irfft2, FFT2), (np.fft.irfftn, FFTN)):
    linear(
        _fn, _signature,
        vjp=f"fit_axes(np.fft.ifftn(np.fft.ihfft(np.real(dy), axis={_AXES}[-1], norm=norm) * "
        f"hermitian_weights(dy, {_AXES}[-1]), axes={_AXES}[:-1], norm=norm), {_BACK}",
    )
linear(
    np.fft.hfft, FFT,
    vjp="fit_axes(np.fft.rfft(np.real(dy), axis=axis, norm=norm) * hermitian_weights(dy, axis), "
    "axis_sizes(a, axis), axis)",
)
linear(
    np.fft.ihfft, FFT,
    vjp="fit_axes(np.conj(np.fft.ifft(fit_axes(dy, fft_sizes(a, n, axis), axis), "
    "axis=axis, norm=norm)), axis_sizes(a, axis), axis)",
)
linear(np.fft.fftshift, "x, axes=None", vjp="np.fft.ifftshift(dy, axes=axes)")
linear(np.fft.ifftshift, "x, axes=None", vjp="np.fft.fftshift(dy, axes=axes)")
