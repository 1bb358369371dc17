#!/usr/bin/env python3
"""The peer of bench/attention_bench.cpp: PyTorch's scaled_dot_product_attention, causal,
bf16, Llama-3.1-8B's heads (32 query heads over 8 KV heads, head size 128), each SDPA
backend this PyTorch has (flash, cuDNN, memory-efficient), at the same lengths, counted as
attention_bench counts: 4 x heads x head_dim x L (L + 1) / 2 FLOPs a pass. Medians of 5
timed runs after a warm-up. Usage: sdpa_attention.py [LENGTH...] (default 2048 8192 32768)
"""
import statistics
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.functional import scaled_dot_product_attention

HEADS, KV_HEADS, HEAD_DIM = 32, 8, 128


def milliseconds(fn, repeats):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    times = []
    for _ in range(5):
        start.record()
        for _ in range(repeats):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / repeats)
    return statistics.median(times)


def main():
    lengths = [int(a) for a in sys.argv[1:]] or [2048, 8192, 32768]
    print(f"{torch.cuda.get_device_name()}; torch {torch.__version__}; SDPA, causal, "
          f"{HEADS} heads, {KV_HEADS} KV heads, head size {HEAD_DIM}\n")
    print(f"{'length':<8} {'backend':<10} {'ms':>10} {'TFLOP/s':>10}")
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
    for length in lengths:
        q = torch.rand(1, HEADS, length, HEAD_DIM, device="cuda", dtype=torch.bfloat16) - 0.5
        k = torch.rand(1, KV_HEADS, length, HEAD_DIM, device="cuda", dtype=torch.bfloat16) - 0.5
        v = torch.rand_like(k) - 0.5
        # The KV heads repeated for each query group, as transformers' SDPA path passes them.
        k = k.repeat_interleave(HEADS // KV_HEADS, dim=1)
        v = v.repeat_interleave(HEADS // KV_HEADS, dim=1)
        flops = 4.0 * HEADS * HEAD_DIM * length * (length + 1) / 2
        for name, backend in backends.items():
            try:
                with sdpa_kernel(backend):
                    ms = milliseconds(lambda: scaled_dot_product_attention(q, k, v, is_causal=True),
                                      20 if length <= 4096 else 3)
            except RuntimeError as error:  # a backend this build or shape does not have
                print(f"{length:<8} {name:<10} {'-':>10} {'-':>10}  ({str(error).splitlines()[0][:60]})")
                continue
            print(f"{length:<8} {name:<10} {ms:10.3f} {flops / (ms * 1e-3) / 1e12:10.1f}")


if __name__ == "__main__":
    main()
