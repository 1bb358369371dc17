#!/usr/bin/python3
"""A model folder as mlx-lm's quantized export would hold it, for bench/q8_accuracy.

    /usr/bin/python3 bench/peers/mlx_quantize.py MODEL_DIR OUT_DIR --bits 4 [--group 64]

Needs numpy (Debian's python3-numpy); MLX itself runs only on Apple hardware. Every matrix
mlx-lm quantizes (the embedding, lm_head, and each layer's projections: 2-D weights whose
rows are a whole number of groups) becomes MLX's affine format: per group of `group`
values along a row, codes q in 0..2^bits-1 with w ~ scale * q + bias, the codes packed as
a little-endian bit stream per row in uint32 words, scale and bias in bf16. The scale is
the group's range over 2^bits - 1 and the bias its minimum, snapped so that the group's
value of larger magnitude is represented exactly, as MLX's quantize() does. Other tensors
are copied as they are; config.json gains "quantization" {"group_size", "bits"}.
"""
import argparse
import json
import os
import shutil
import struct

import numpy as np

DTYPES = {"BF16": np.uint16, "F16": np.float16, "F32": np.float32, "U32": np.uint32}


def read_safetensors(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = np.frombuffer(data[begin:end], dtype=DTYPES[info["dtype"]])
        tensors[name] = (info["dtype"], raw.reshape(info["shape"]))
    return tensors


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, (dtype, array) in tensors.items():
        blob = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def to_float(dtype, array):
    if dtype == "BF16":
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array.astype(np.float32)


def to_bf16(values):
    bits = values.astype(np.float32).view(np.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)  # round to nearest even
    return (rounded >> 16).astype(np.uint16)


def quantize(w, bits, group):
    rows, cols = w.shape
    g = w.reshape(rows, cols // group, group)
    w_max, w_min = g.max(axis=2), g.min(axis=2)
    levels = (1 << bits) - 1
    # The edge of larger magnitude is kept exact: the scale is signed toward it.
    low_edge = np.abs(w_min) > np.abs(w_max)
    scale = np.maximum((w_max - w_min) / levels, 1e-7)
    scale = np.where(low_edge, scale, -scale)
    edge = np.where(low_edge, w_min, w_max)
    q0 = np.round(edge / scale)
    scale = np.where(q0 != 0, edge / np.where(q0 != 0, q0, 1), scale)
    bias = np.where(q0 == 0, 0.0, edge)
    scale_bf16, bias_bf16 = to_bf16(scale), to_bf16(bias)
    s = to_float("BF16", scale_bf16)[:, :, None]
    b = to_float("BF16", bias_bf16)[:, :, None]
    codes = np.clip(np.round((g - b) / s), 0, levels).astype(np.uint64).reshape(rows, cols)
    # Code c of a row starts at bit c * bits of the row's stream of 32-bit words.
    per_word = 32 // bits
    words = np.zeros((rows, cols // per_word), dtype=np.uint64)
    for k in range(per_word):
        words |= codes[:, k::per_word] << np.uint64(k * bits)
    return words.astype(np.uint32), scale_bf16, bias_bf16


def quantized_name(name, array, group):
    return (name.endswith(".weight") and array.ndim == 2 and array.shape[1] % group == 0
            and ("proj" in name or "embed_tokens" in name or "lm_head" in name))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("out")
    parser.add_argument("--bits", type=int, choices=[4, 8], required=True)
    parser.add_argument("--group", type=int, choices=[32, 64, 128], default=64)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tensors = read_safetensors(os.path.join(args.model, "model.safetensors"))
    out = {}
    for name, (dtype, array) in tensors.items():
        if not quantized_name(name, array, args.group):
            out[name] = (dtype, array)
            continue
        words, scales, biases = quantize(to_float(dtype, array), args.bits, args.group)
        stem = name[: -len(".weight")]
        out[name] = ("U32", words)
        out[stem + ".scales"] = ("BF16", scales)
        out[stem + ".biases"] = ("BF16", biases)
    write_safetensors(os.path.join(args.out, "model.safetensors"), out)
    for entry in os.listdir(args.model):
        if entry not in ("model.safetensors", "config.json"):
            source = os.path.join(args.model, entry)
            if os.path.isfile(source):
                shutil.copy(source, args.out)
    with open(os.path.join(args.model, "config.json")) as f:
        config = json.load(f)
    config["quantization"] = {"group_size": args.group, "bits": args.bits}
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


if __name__ == "__main__":
    main()
