"""The reference for baton's ggml block conversion (tests/model/files/ggml_blocks_test.cpp):
random blocks of every quantized type baton reads, converted to float by llama.cpp's own
Python package (gguf-py's gguf.quants.dequantize, numpy), written as
{type name: {"type": N, "hex": block bytes, "values": [floats]}}.
  PYTHONPATH=LLAMA_CPP/gguf-py python3 make_ggml_blocks_reference.py > ggml_blocks.json
(make_gguf_reference.sh clones llama.cpp's source from node-llama-cpp's bundle.)"""
import json
import random
import struct

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize

rng = random.Random(20261204)


def f16(value):
    return struct.pack("<e", value)


def scale():
    return f16(rng.uniform(-0.05, 0.05))


def noise(n):
    return bytes(rng.randrange(256) for _ in range(n))


# Each block: its f16 fields drawn as finite values, the rest random bytes.
BLOCKS = {
    "q4_0": (T.Q4_0, lambda: scale() + noise(16)),
    "q4_1": (T.Q4_1, lambda: scale() + scale() + noise(16)),
    "q5_0": (T.Q5_0, lambda: scale() + noise(4) + noise(16)),
    "q5_1": (T.Q5_1, lambda: scale() + scale() + noise(4) + noise(16)),
    "q8_0": (T.Q8_0, lambda: scale() + noise(32)),
    "q4_K": (T.Q4_K, lambda: scale() + scale() + noise(12) + noise(128)),
    "q5_K": (T.Q5_K, lambda: scale() + scale() + noise(12) + noise(32) + noise(128)),
    "q6_K": (T.Q6_K, lambda: noise(128) + noise(64) + noise(16) + scale()),
}

out = {}
for name, (qtype, make) in BLOCKS.items():
    raw = b"".join(make() for _ in range(2))  # two blocks: the second starts mid-buffer
    values = dequantize(np.frombuffer(raw, dtype=np.uint8), qtype).reshape(-1)
    out[name] = {"type": int(qtype), "hex": raw.hex(), "values": [float(v) for v in values]}
print(json.dumps(out))
