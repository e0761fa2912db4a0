"""One binary message for a browser component: a JSON header and typed arrays.

Layout: a little-endian uint32 header length, the header as UTF-8 JSON, then each array's raw
bytes at a 4-byte aligned offset. The header's "blobs" maps each array's name to
[offset, length in bytes, dtype], so the JavaScript side can view it as a typed array without
parsing. Streamlit's components v2 send `bytes` as they are (a Uint8Array in the browser):
no base64, no JSON numbers.
"""
from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np

DTYPES = {np.dtype(np.uint8): "uint8", np.dtype(np.float32): "float32"}
ALIGN = 4
# The layout above, named: the live view's protocol (live_canvas.py) carries it.
FORMAT = {"length": "uint32le", "header": "json", "align": ALIGN, "dtypes": sorted(DTYPES.values())}


def pack(header: dict[str, Any], blobs: dict[str, np.ndarray]) -> bytes:
    """`header` (JSON-able) and `blobs` (uint8 or float32 arrays) as one message."""
    raw = {}
    for name, array in blobs.items():
        array = np.ascontiguousarray(array)
        if array.dtype not in DTYPES:
            raise TypeError(f"{name}: {array.dtype} is not one of {sorted(map(str, DTYPES))}")
        raw[name] = (array.tobytes(), DTYPES[array.dtype])
    # The offsets depend on the header's length, which depends on the offsets: lay the blobs out
    # after a header padded to a size that no longer changes.
    guess = 0
    while True:
        offset = _align(4 + guess)
        table = {}
        for name, (data, dtype) in raw.items():
            table[name] = [offset, len(data), dtype]
            offset = _align(offset + len(data))
        text = json.dumps({**header, "blobs": table}, separators=(",", ":")).encode()
        if len(text) <= guess:
            break
        guess = len(text)
    text = text.ljust(guess)
    parts = [struct.pack("<I", guess), text]
    position = 4 + guess
    for name, (data, _) in raw.items():
        start = table[name][0]
        parts.append(b"\0" * (start - position))
        parts.append(data)
        position = start + len(data)
    return b"".join(parts)


def unpack(message: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The inverse of `pack` (for tests and benchmarks; the browser has its own)."""
    (length,) = struct.unpack_from("<I", message)
    header = json.loads(message[4:4 + length])
    blobs = {name: np.frombuffer(message[offset:offset + size], dtype=dtype)
             for name, (offset, size, dtype) in header.pop("blobs").items()}
    return header, blobs


def _align(offset: int) -> int:
    return (offset + ALIGN - 1) // ALIGN * ALIGN
