#!/usr/bin/env python3
"""The peer of bench/cuda_llm_bench.cpp: Hugging Face transformers on the same model
directories (bf16, SDPA attention), measured the same way on the same GPU:
  - decode tokens/s at batch 1, 8 and 32: 128-token prompts, 64 greedy tokens each (the
    default dynamic KV cache: a static one makes transformers compile the step, minutes
    per shape); the time of generating 65 tokens less that of generating 1;
  - prefill tokens/s of one 2048- and one 8192-token prompt (logits of the last only).
Medians of 3 after a warm-up. Usage: transformers_llm.py MODEL_DIR [MODEL_DIR...]
"""
import os
import statistics
import sys
import time

import torch
from transformers import AutoModelForCausalLM


def timed(fn):
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - start


def prompts(batch, length, vocab, salt):
    ids = [[(i * 7919 + (salt + b) * 104729 + 13) % vocab for i in range(length)] for b in range(batch)]
    return torch.tensor(ids, device="cuda")


def generate(model, ids, new_tokens):
    model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens,
                   min_new_tokens=new_tokens, do_sample=False, pad_token_id=0)


def main():
    for directory in sys.argv[1:]:
        name = os.path.basename(directory.rstrip("/"))
        model = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.bfloat16,
                                                     attn_implementation="sdpa").cuda().eval()
        vocab = model.config.vocab_size
        with torch.inference_mode():
            generate(model, prompts(1, 128, vocab, 0), 8)  # warm-up
            for batch in (1, 8, 32):
                rates = []
                for run in range(3):
                    ids = prompts(batch, 128, vocab, run * 100 + batch)
                    whole = timed(lambda: generate(model, ids, 65))
                    first = timed(lambda: generate(model, ids, 1))
                    rates.append(batch * 64 / (whole - first))
                rate = statistics.median(rates)
                print(f"{name + ' hf decode b=' + str(batch):<28} {rate:10.1f} {'':>14} {'':>10} "
                      f"{1e3 * batch / rate:8.3f}", flush=True)
            for length in (2048, 8192):
                rates = []
                for run in range(4):
                    ids = prompts(1, length, vocab, run + length)
                    seconds = timed(lambda: model(ids, logits_to_keep=1))
                    if run > 0:
                        rates.append(length / seconds)
                rate = statistics.median(rates)
                print(f"{name + ' hf prefill ' + str(length):<28} {rate:10.0f} {'-':>14} {'-':>10} "
                      f"{1e3 * length / rate:8.1f}", flush=True)
        del model
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
