#!/usr/bin/env python3
"""Independent reference data for baton's model code, made with Hugging Face `tokenizers`
and `transformers`.

Run on the GPU machine (it has both; this machine has neither):
    python3 scripts/make_reference_data.py tokenizers OUT_DIR   -> tests/data/tokenizers/
    python3 scripts/make_reference_data.py models OUT_DIR       -> tests/data/models/
    python3 scripts/make_reference_data.py embeddings MODELS_DIR -> MODELS_DIR/*/embeddings.json
Per tokenizer style: <style>/tokenizer.json (a small byte-level BPE trained here) and
<style>/reference.json ([{"text", "ids"}] for hard strings). Per architecture: a tiny
model with random weights saved by transformers (config.json, safetensors in f32; the
llama one sharded) and reference.json: the f32 logits of every position for fixed token
ids (eager attention, on the CPU) and 32 greedily generated tokens. Embeddings: for the
tiny models already in MODELS_DIR, the base model's last hidden state (after the final
norm) for fixed token-id inputs of several lengths, each run alone, pooled by the mean
over its tokens and by its last token, then L2-normalised (what sentence-transformers'
Pooling and Normalize modules compute; Qwen3-Embedding pools the last token).
"""
import json
import os
import sys

from reference_strings import CORPUS, HARD
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

# The pre-tokenizer pattern of Llama 3 and Qwen2 tokenizer.json files.
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL = ["<|begin_of_text|>", "<|end_of_text|>", "<|im_start|>", "<|im_end|>"]

def train(pre_tokenizer):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def main(out):
    styles = {
        "llama3_style": pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]),
        "gpt2_style": pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    }
    for name, pre in styles.items():
        tok = train(pre)
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        tok.save(os.path.join(folder, "tokenizer.json"))
        reference = []
        for text in HARD:
            ids = tok.encode(text).ids
            assert tok.decode(ids, skip_special_tokens=False) == text or name == "gpt2_style"
            reference.append({"text": text, "ids": ids})
        with open(os.path.join(folder, "reference.json"), "w", encoding="utf-8") as f:
            json.dump(reference, f, ensure_ascii=False, indent=1)
        print(name, len(tok.get_vocab()), "tokens")


TINY = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=256, max_position_embeddings=256,
            rms_norm_eps=1e-5, bos_token_id=1, eos_token_id=2)


def tiny_configs():
    import transformers as t
    return {
        "llama": t.LlamaConfig(**TINY, rope_theta=500000.0, tie_word_embeddings=False,
                               rope_scaling={"rope_type": "llama3", "factor": 8.0,
                                             "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                             "original_max_position_embeddings": 32}),
        "qwen2": t.Qwen2Config(**TINY, rope_theta=1000000.0, tie_word_embeddings=True),
        "qwen3": t.Qwen3Config(**TINY, head_dim=32, rope_theta=1000000.0,
                               tie_word_embeddings=True, attention_bias=False),
        "mistral": t.MistralConfig(**TINY, rope_theta=10000.0, sliding_window=None),
    }


def models(out):
    import torch
    import transformers as t
    torch.manual_seed(0)
    prompt = [1, 17, 42, 99, 3, 250, 128, 64, 7, 200, 31, 5]
    for name, config in tiny_configs().items():
        config._attn_implementation = "eager"
        model = t.AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32).eval()
        with torch.no_grad():  # weights large enough that every layer matters
            for pname, p in model.named_parameters():
                if pname.endswith("bias"):
                    p.normal_(0.0, 0.1)
                elif p.dim() == 1:  # norm weights: near one
                    p.normal_(1.0, 0.05)
                else:
                    p.normal_(0.0, 0.2)
        folder = os.path.join(out, name)
        model.save_pretrained(folder, safe_serialization=True,
                              max_shard_size="200KB" if name == "llama" else "50GB")
        ids = torch.tensor([prompt])
        with torch.no_grad():
            logits = model(ids).logits[0]
            generated = model.generate(ids, max_new_tokens=32, do_sample=False, min_new_tokens=32,
                                       attention_mask=torch.ones_like(ids), pad_token_id=0)
        reference = {"transformers": t.__version__, "tokens": prompt,
                     "logits": logits.tolist(), "greedy": generated[0, len(prompt):].tolist()}
        with open(os.path.join(folder, "reference.json"), "w") as f:
            json.dump(reference, f)
        print(name, sorted(os.listdir(folder)))


EMBED_INPUTS = [[1, 17, 42, 99, 3], [5, 250, 128], [7], [2, 64, 31, 200, 9, 88, 140, 33, 12, 4,
                                                        77, 190]]


def embeddings(models_dir):
    import torch
    import transformers as t
    for name in sorted(os.listdir(models_dir)):
        folder = os.path.join(models_dir, name)
        if not os.path.exists(os.path.join(folder, "config.json")):
            continue
        model = t.AutoModel.from_pretrained(folder, torch_dtype=torch.float32,
                                            attn_implementation="eager").eval()
        mean, last = [], []
        with torch.no_grad():
            for ids in EMBED_INPUTS:
                hidden = model(torch.tensor([ids])).last_hidden_state[0].double()
                for pooled, out in ((hidden.mean(dim=0), mean), (hidden[-1], last)):
                    out.append(torch.nn.functional.normalize(pooled, dim=0).tolist())
        with open(os.path.join(folder, "embeddings.json"), "w") as f:
            json.dump({"transformers": t.__version__, "torch": torch.__version__,
                       "inputs": EMBED_INPUTS, "mean": mean, "last": last}, f)
        print(name, len(mean[0]), "dims")


if __name__ == "__main__":
    {"tokenizers": main, "models": models, "embeddings": embeddings}[sys.argv[1]](sys.argv[2])
