#!/usr/bin/env python3
"""Independent reference data for baton's model code, made with Hugging Face `tokenizers`.

Run on the GPU machine (it has tokenizers and transformers; this machine has neither):
    python3 scripts/make_reference_data.py OUT_DIR
then copy OUT_DIR/* into tests/data/tokenizers/. What it writes, per tokenizer style:
    <style>/tokenizer.json   a small byte-level BPE trained here
    <style>/reference.json   [{"text", "ids"}] for a set of hard strings, from tokenizers
"""
import json
import os
import sys

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

# The pre-tokenizer pattern of Llama 3 and Qwen2 tokenizer.json files.
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL = ["<|begin_of_text|>", "<|end_of_text|>", "<|im_start|>", "<|im_end|>"]

CORPUS = [
    "The quick brown fox jumps over the lazy dog. It's 2024, isn't it?",
    "Large language models share one GPU; the turn decides who runs.",
    "def main():\n    return 42  # the answer\n\n",
    "Ünïcödé tëxt, naïve café, résumé, Straße, ÆØÅ, ĳ.",
    "日本語のテキストと中文文本，还有한국어 텍스트.",
    "Emoji: 😀🚀👩‍💻🇩🇪 and ❤️ in a sentence.",
    "Numbers 1234567890 and 3.14159, 1e-9, 0xdeadbeef.",
    "    indented    with   many     spaces\t\ttabs\r\nand CRLF.",
] * 20

HARD = [
    "Hello, world!",
    "emoji 😀🚀👩‍💻🇩🇪❤️ end",
    "中文文本和日本語のテキスト、한국어",
    "combining: e\u0301 a\u0308 n\u0303 \u1e9b\u0323",
    "                 long run of spaces",
    "digits 12345678901234567890 and 007",
    "tabs\t\tand\nnewlines\n\n\nand \r\n CRLF",
    "it's they're I'LL we've",
    "<|begin_of_text|>Hi<|im_start|>user\nhello<|im_end|><|end_of_text|>",
    "mixed \u00a0nbsp\u2009thin\u3000ideographic spaces",
    "",
    "a",
    "zero\u200bwidth",
]


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


if __name__ == "__main__":
    main(sys.argv[1])
