#!/usr/bin/env python3
"""Writes the seed corpus of safetensors_fuzz (fuzz/corpus/safetensors/): small valid files
covering BF16, F16, F32, a non-float dtype, a scalar, an empty tensor and metadata.
Usage: fuzz/make_safetensors_corpus.py [OUT_DIR]"""
import json
import pathlib
import struct
import sys


def safetensors(tensors, metadata=None):
    """tensors: name -> (dtype, shape, data bytes), laid out in the order given."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text)) + text + data


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent /
                       "corpus" / "safetensors")
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "f32_matrix.safetensors": safetensors(
            {"w": ("F32", [2, 2], struct.pack("<4f", 1.0, -2.5, 0.0, 3.25))}),
        "halves.safetensors": safetensors({
            "h": ("F16", [4], struct.pack("<4H", 0x3C00, 0x7BFF, 0x0001, 0xFC00)),
            "b": ("BF16", [2, 1], struct.pack("<2H", 0x3F80, 0xC020)),
            "s": ("F32", [], struct.pack("<f", 0.5)),
        }, metadata={"format": "pt"}),
        "mixed.safetensors": safetensors({
            "ids": ("I64", [2], struct.pack("<2q", 1, -1)),
            "mask": ("BOOL", [3], b"\x01\x00\x01"),
            "empty": ("BF16", [0, 4], b""),
        }),
    }
    for name, data in files.items():
        (out / name).write_bytes(data)


if __name__ == "__main__":
    main()
