"""Small .npy files of every element type the reader accepts, in format versions 1.0, 2.0 and 3.0, plus the
forms it must refuse (big-endian, Fortran order, structured and object dtypes), as seeds for npy_fuzzer."""
import io

import numpy as np
from numpy.lib import format as npformat

ACCEPTED = ["<f4", "<f8", "<f2", "<i8", "<i4", "<i2", "|i1", "|u1", "<u2", "<u4", "<u8", "|b1"]
SHAPES = [(), (0,), (3,), (2, 3), (1, 2, 1, 3)]


def _save(array, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, array, allow_pickle=False)
    else:
        npformat.write_array(buf, array, version=version, allow_pickle=False)
    return buf.getvalue()


def npy_files():
    """(name, bytes) of every seed."""
    values = np.arange(6, dtype=np.float64) - 2.5
    for descr in ACCEPTED:
        for i, shape in enumerate(SHAPES):
            n = int(np.prod(shape))
            array = np.resize(values, n).astype(np.dtype(descr)).reshape(shape)
            yield "%s_%d" % (descr[1:], i), _save(array)
    array = np.arange(12, dtype="<f4").reshape(3, 4)
    yield "v2", _save(array, (2, 0))
    yield "v3", _save(array, (3, 0))
    yield "big_endian", _save(array.astype(">f4"))
    yield "fortran", _save(np.asfortranarray(array))
    yield "structured", _save(np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")]))
    yield "unicode", _save(np.array(["ab", "c"]))
    # The header as older NumPy wrote it: no trailing comma, 'L' suffixes on Python 2 longs.
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 2L)}"
    header += b" " * (-(len(header) + 11) % 64) + b"\n"
    yield "py2_long", b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(16)
