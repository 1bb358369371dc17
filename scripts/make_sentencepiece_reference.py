#!/usr/bin/python3
"""SentencePiece-style tokenizer.json files and their references, made on this machine.

    /usr/bin/python3 scripts/make_sentencepiece_reference.py OUT_DIR  -> tests/data/tokenizers/

Needs Debian's python3-sentencepiece (apt-get install python3-sentencepiece) and npm.
Trains a small SentencePiece BPE model with Llama 2's trainer settings (byte fallback,
split digits, identity normalization, a dummy prefix), writes it as tokenizer.json in the
two layouts published models use, as transformers' converter writes them:
  llama2_style:  a Prepend("▁") + Replace(" " -> "▁") normalizer (Llama 2, TinyLlama,
                 Mistral v0.1 files);
  mistral_style: a Metaspace pre-tokenizer with prepend_scheme "first" (files written with
                 legacy=False, e.g. Mistral v0.3).
Both with the decoder Replace("▁" -> " "), ByteFallback, Fuse, Strip(1 leading space) and
Llama's BOS post-processor. reference.json: per hard string, the ids and the decoded text
from Hugging Face's tokenizers.js (scripts/reference), which this script checks against
SentencePiece's own encoding of the same text wherever the layout promises equality.
"""
import json
import os
import subprocess
import sys
import tempfile

import sentencepiece as spm

from reference_strings import CORPUS, HARD

HERE = os.path.dirname(os.path.abspath(__file__))
META = "\u2581"
SPECIAL = ["<unk>", "<s>", "</s>"]
# Strings only the tokenizer.json path can take: the special tokens inside the text.
WITH_SPECIAL = ["<s>Hello</s> world", "x<s> y", " leading space", "  two", "trailing "]


def train(folder):
    corpus = os.path.join(folder, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write("\n".join(line.replace("\n", " ") for line in CORPUS))
    prefix = os.path.join(folder, "sp")
    spm.SentencePieceTrainer.train(
        input=corpus, model_prefix=prefix, model_type="bpe", vocab_size=600,
        hard_vocab_limit=False, byte_fallback=True, split_digits=True,
        normalization_rule_name="identity", add_dummy_prefix=True,
        remove_extra_whitespaces=False, allow_whitespace_only_pieces=True,
        character_coverage=0.9995, unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
        num_threads=1, minloglevel=2)
    return prefix + ".model"


def merges_of(sp):
    """transformers' SentencePieceExtractor: each piece split into two pieces of the
    vocabulary is a merge, ranked by the piece's score."""
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    merges = []
    for piece, score in ((sp.id_to_piece(i), sp.get_score(i)) for i in range(len(vocab))):
        local = [(piece[:k], piece[k:], score) for k in range(1, len(piece))
                 if piece[:k] in vocab and piece[k:] in vocab]
        merges += sorted(local, key=lambda m: (vocab[m[0]], vocab[m[1]]))
    merges.sort(key=lambda m: m[2], reverse=True)
    return vocab, [[left, right] for left, right, _ in merges]


def tokenizer_json(sp, layout):
    vocab, merges = merges_of(sp)
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, t in enumerate(SPECIAL)]
    replace = {"type": "Replace", "pattern": {"String": " "}, "content": META}
    metaspace = {"type": "Metaspace", "replacement": META, "prepend_scheme": "first",
                 "split": False}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": ({"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": META}, replace]} if layout == "llama2" else None),
        "pre_tokenizer": metaspace if layout == "mistral" else None,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<s>", "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": META}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }


def tokenizers_js(tokenizer, texts):
    folder = os.path.join(HERE, "reference")
    if not os.path.isdir(os.path.join(folder, "node_modules")):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=folder, check=True)
    config = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
              "add_bos_token": True, "clean_up_tokenization_spaces": False}
    result = subprocess.run(["node", "tokenizers_js.mjs"], cwd=folder,
                            input=json.dumps({"tokenizer": tokenizer, "config": config,
                                              "texts": texts}),
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("tokenizers.js failed:\n" + result.stderr)
    return json.loads(result.stdout)


def check_against_sentencepiece(sp, layout, reference):
    for entry in reference:
        text = entry["text"]
        if any(t in text for t in SPECIAL):
            continue  # SentencePiece reads special tokens in text as plain characters
        if layout == "mistral" and text[:1].isspace():
            continue  # prepend_scheme "first" adds no "▁" before a leading space
        expected = sp.encode(text)
        if entry["ids"] != expected:
            sys.exit(f"{layout}: tokenizers.js and SentencePiece differ on {text!r}:\n"
                     f"  {entry['ids']}\n  {expected}")


def main(out):
    with tempfile.TemporaryDirectory() as work:
        sp = spm.SentencePieceProcessor(model_file=train(work))
    for layout in ("llama2", "mistral"):
        tokenizer = tokenizer_json(sp, layout)
        texts = [t for t in HARD if "<|" not in t] + WITH_SPECIAL
        reference = tokenizers_js(tokenizer, texts)
        check_against_sentencepiece(sp, layout, reference)
        folder = os.path.join(out, layout + "_style")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tokenizer, f, ensure_ascii=False, indent=1)
        with open(os.path.join(folder, "reference.json"), "w", encoding="utf-8") as f:
            json.dump(reference, f, ensure_ascii=False, indent=1)
        print(layout, sp.get_piece_size(), "pieces,", len(tokenizer["model"]["merges"]),
              "merges")


if __name__ == "__main__":
    main(sys.argv[1])
