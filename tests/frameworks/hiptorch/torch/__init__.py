"""A test-side stand-in for the parts of `torch` that Triton's HIP driver uses.

Triton's GPU driver imports `torch` for the current device and stream, for
device tensors (anything with `data_ptr()` and `dtype`), for
`triton.testing.do_bench` (events, synchronisation, a buffer to clear) and
for the autotuner. No ROCm build of PyTorch is reachable here, so this module
gives Triton those few things over the HIP runtime itself (ctypes on
libamdhip64.so, the same library Triton's launcher loads): device buffers
are `hipMalloc` allocations, copies are `hipMemcpy`, events and streams are
HIP's. It is not PyTorch: no operators, no autograd, no CPU tensors; the
tests compute their references with numpy and move data with `tensor()` and
`Tensor.numpy()`.
"""

import builtins
import contextlib
import ctypes
import math

import numpy as np

__version__ = "0.0+rocjitsu.hiptorch"

_HIP_MEMCPY_H2D = 1
_HIP_MEMCPY_D2H = 2
_HIP_MEMCPY_D2D = 3


class HipError(RuntimeError):
    pass


def _load_hip():
    lib = ctypes.CDLL("libamdhip64.so", mode=ctypes.RTLD_GLOBAL)
    lib.hipGetErrorString.restype = ctypes.c_char_p
    lib.hipGetErrorString.argtypes = [ctypes.c_int]
    return lib


_hip = _load_hip()


def _check(status, what):
    if status != 0:
        raise HipError(f"{what}: {_hip.hipGetErrorString(status).decode()} ({status})")


def _runtime_version():
    v = ctypes.c_int()
    _check(_hip.hipRuntimeGetVersion(ctypes.byref(v)), "hipRuntimeGetVersion")
    # HIP_VERSION = major * 10000000 + minor * 100000 + patch
    return f"{v.value // 10000000}.{v.value // 100000 % 100}"


class _Version:
    hip = _runtime_version()
    cuda = None


version = _Version()


class dtype:
    """A tensor element type; `str()` gives torch's spelling, which Triton's
    argument specialisation maps to its own type names."""

    def __init__(self, name, np_dtype, itemsize, is_floating_point):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = itemsize
        self.is_floating_point = is_floating_point

    def __repr__(self):
        return f"torch.{self.name}"

    __str__ = __repr__


float16 = half = dtype("float16", np.float16, 2, True)
# numpy has no bfloat16: its bits travel as uint16.
bfloat16 = dtype("bfloat16", np.uint16, 2, True)
float32 = float = dtype("float32", np.float32, 4, True)
float64 = double = dtype("float64", np.float64, 8, True)
int8 = dtype("int8", np.int8, 1, False)
uint8 = dtype("uint8", np.uint8, 1, False)
int16 = dtype("int16", np.int16, 2, False)
int32 = int = dtype("int32", np.int32, 4, False)
int64 = long = dtype("int64", np.int64, 8, False)
bool = dtype("bool", np.bool_, 1, False)  # noqa: A001 (torch's name)

_FROM_NUMPY = {
    np.dtype(np.float16): float16,
    np.dtype(np.float32): float32,
    np.dtype(np.float64): float64,
    np.dtype(np.int8): int8,
    np.dtype(np.uint8): uint8,
    np.dtype(np.int16): int16,
    np.dtype(np.int32): int32,
    np.dtype(np.int64): int64,
    np.dtype(np.bool_): bool,
}


class device:
    def __init__(self, type="cuda", index=None):  # noqa: A002 (torch's name)
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, str) and ":" in type:
            type, idx = type.split(":")
            index = int(idx)
        self.type = type
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


def _shape(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple(builtins.int(a) for a in args)



class Tensor:
    """A contiguous (or strided view of a) device buffer from hipMalloc."""

    def __init__(self, shape, dt, strides=None, base=None, offset=0):
        self.shape = tuple(shape)
        self.dtype = dt
        self.device = device("cuda", cuda.current_device())
        self._strides = strides if strides is not None else _contiguous_strides(self.shape)
        nbytes = math.prod(self.shape) * dt.itemsize
        if base is None:
            ptr = ctypes.c_void_p()
            _check(_hip.hipMalloc(ctypes.byref(ptr), ctypes.c_size_t(max(nbytes, 1))), f"hipMalloc({nbytes})")
            self._ptr = ptr.value
            self._owner = True
        else:
            self._ptr = base._ptr + offset * dt.itemsize
            self._owner = False
            self._base = base  # keeps the allocation alive

    def __del__(self):
        if getattr(self, "_owner", False) and _hip is not None:
            _hip.hipFree(ctypes.c_void_p(self._ptr))
            self._owner = False

    def data_ptr(self):
        return self._ptr

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def dim(self):
        return len(self.shape)

    ndim = property(dim)

    def numel(self):
        return math.prod(self.shape)

    def element_size(self):
        return self.dtype.itemsize

    def is_contiguous(self):
        return self._strides == _contiguous_strides(self.shape)

    def nbytes(self):
        return self.numel() * self.dtype.itemsize

    def zero_(self):
        return self.fill_bytes_(0)

    def fill_bytes_(self, byte):
        assert self.is_contiguous(), "fill of a strided view"
        _check(_hip.hipMemset(ctypes.c_void_p(self._ptr), byte, ctypes.c_size_t(self.nbytes())), "hipMemset")
        return self

    @property
    def T(self):
        assert self.dim() == 2
        return Tensor(self.shape[::-1], self.dtype, self._strides[::-1], base=self, offset=0)

    def copy_from_numpy(self, arr):
        arr = np.ascontiguousarray(arr, dtype=self.dtype.np)
        assert arr.shape == self.shape and self.is_contiguous()
        _check(
            _hip.hipMemcpy(ctypes.c_void_p(self._ptr), arr.ctypes.data_as(ctypes.c_void_p),
                           ctypes.c_size_t(arr.nbytes), _HIP_MEMCPY_H2D), "hipMemcpy H2D")
        return self

    def numpy(self):
        """A host copy (synchronises the device first, as torch's .cpu() does)."""
        cuda.synchronize()
        if not self.is_contiguous():
            # The smallest contiguous span holding the view, then numpy's strided view of it.
            span = 1 + sum((n - 1) * s for n, s in zip(self.shape, self._strides))
            flat = np.empty(span, dtype=self.dtype.np)
            _check(
                _hip.hipMemcpy(flat.ctypes.data_as(ctypes.c_void_p), ctypes.c_void_p(self._ptr),
                               ctypes.c_size_t(flat.nbytes), _HIP_MEMCPY_D2H), "hipMemcpy D2H")
            it = self.dtype.itemsize
            return np.lib.stride_tricks.as_strided(flat, self.shape, [s * it for s in self._strides]).copy()
        out = np.empty(self.shape, dtype=self.dtype.np)
        _check(
            _hip.hipMemcpy(out.ctypes.data_as(ctypes.c_void_p), ctypes.c_void_p(self._ptr),
                           ctypes.c_size_t(out.nbytes), _HIP_MEMCPY_D2H), "hipMemcpy D2H")
        return out

    cpu = numpy

    def __repr__(self):
        return f"Tensor(shape={self.shape}, dtype={self.dtype}, ptr=0x{self._ptr:x})"


def _contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


def empty(*shape, dtype=float32, device=None, **_):
    return Tensor(_shape(shape), dtype)


def zeros(*shape, dtype=float32, device=None, **_):
    return empty(*shape, dtype=dtype).zero_()


def empty_like(t, dtype=None, **_):
    return empty(t.shape, dtype=dtype or t.dtype)


def zeros_like(t, dtype=None, **_):
    return zeros(t.shape, dtype=dtype or t.dtype)


def tensor(arr, dtype=None, device=None, **_):
    """A device tensor holding a copy of a numpy array (or anything np.asarray takes)."""
    arr = np.asarray(arr)
    dt = dtype or _FROM_NUMPY[arr.dtype]
    return empty(arr.shape, dtype=dt).copy_from_numpy(arr)


class _Stream:

    def __init__(self, handle=0):
        self.cuda_stream = handle

    def synchronize(self):
        _check(_hip.hipStreamSynchronize(ctypes.c_void_p(self.cuda_stream)), "hipStreamSynchronize")


class _Event:

    def __init__(self, enable_timing=False):
        ev = ctypes.c_void_p()
        _check(_hip.hipEventCreate(ctypes.byref(ev)), "hipEventCreate")
        self._ev = ev.value

    def __del__(self):
        if _hip is not None and self._ev:
            _hip.hipEventDestroy(ctypes.c_void_p(self._ev))
            self._ev = None

    def record(self, stream=None):
        s = (stream or cuda.current_stream()).cuda_stream
        _check(_hip.hipEventRecord(ctypes.c_void_p(self._ev), ctypes.c_void_p(s)), "hipEventRecord")

    def synchronize(self):
        _check(_hip.hipEventSynchronize(ctypes.c_void_p(self._ev)), "hipEventSynchronize")

    def elapsed_time(self, end):
        ms = ctypes.c_float()
        _check(_hip.hipEventElapsedTime(ctypes.byref(ms), ctypes.c_void_p(self._ev), ctypes.c_void_p(end._ev)),
               "hipEventElapsedTime")
        return ms.value


class _Cuda:
    """`torch.cuda`: HIP devices are "cuda" devices in a ROCm build of PyTorch."""

    Event = _Event
    Stream = _Stream

    def __init__(self):
        self._stream = _Stream(0)

    def is_available(self):
        return self.device_count() > 0

    def device_count(self):
        n = ctypes.c_int()
        return n.value if _hip.hipGetDeviceCount(ctypes.byref(n)) == 0 else 0

    def current_device(self):
        d = ctypes.c_int()
        _check(_hip.hipGetDevice(ctypes.byref(d)), "hipGetDevice")
        return d.value

    def set_device(self, dev):
        idx = dev.index if isinstance(dev, device) else dev
        _check(_hip.hipSetDevice(builtins.int(idx or 0)), "hipSetDevice")

    def get_device_capability(self, dev=None):
        major, minor = ctypes.c_int(), ctypes.c_int()
        d = self.current_device() if dev is None else dev
        _check(_hip.hipDeviceComputeCapability(ctypes.byref(major), ctypes.byref(minor), d),
               "hipDeviceComputeCapability")
        return (major.value, minor.value)

    def synchronize(self, dev=None):
        _check(_hip.hipDeviceSynchronize(), "hipDeviceSynchronize")

    def current_stream(self, dev=None):
        return self._stream

    def default_stream(self, dev=None):
        return _Stream(0)

    def ExternalStream(self, handle, device=None):  # noqa: N802 (torch's name)
        return _Stream(handle)

    @contextlib.contextmanager
    def stream(self, s):
        prev, self._stream = self._stream, s
        try:
            yield
        finally:
            self._stream = prev


cuda = _Cuda()
