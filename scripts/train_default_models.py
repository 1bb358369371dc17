#!/usr/bin/env python3
"""Trains the default models of `make run` (models/chat-small, models/chat-medium,
models/embed-small) on the King James Bible of the Debian package bible-kjv-text (public
domain; scripts/train-default-models reads it out into .deps/corpus/kjv.txt).

- One byte-level BPE tokenizer for all three (4096 ids: 4093 BPE tokens, then
  <|endoftext|>, <|im_start|>, <|im_end|>), trained here in plain Python in the format that
  `baton make-model` writes and baton's BpeTokenizer reads.
- chat-small (qwen2) and chat-medium (llama): causal LMs trained on the chapters as plain
  text and on ChatML conversations made from the verses (a verse -> the verses after it,
  "Tell me about the sea." -> verses about the sea, "Hello!" -> a greeting verse ...), so
  that whatever is asked, the answer is King James prose ending in <|im_end|>.
- embed-small (qwen3): LM pretraining, then a contrastive (InfoNCE) phase on mean-pooled,
  normalised hidden states, with adjacent verses and topic/verse pairs as positives;
  written as a sentence-transformers directory (mean pooling, Normalize).

Runs on a CUDA machine with PyTorch and transformers (the three trainings run side by
side in three processes on the one GPU); seeds are fixed. `--tokenizer-only` needs neither.
  python3 scripts/train_default_models.py --corpus .deps/corpus/kjv.txt --out OUT
"""

import argparse
import heapq
import json
import math
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict

SEED = 1234
VOCAB_SIZE = 4096
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
EOT, IM_START, IM_END = VOCAB_SIZE - 3, VOCAB_SIZE - 2, VOCAB_SIZE - 1

# The pre-tokenizer of tokenizer.json: Llama 3's pattern, as `baton make-model` writes it.
SPLIT_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# The same for training with Python's re, which has no \p{..}: [^\W\d_] is a letter, \d a
# number. On this corpus (ASCII, no underscore) both split alike.
TRAIN_SPLIT = re.compile(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\w]?[^\W\d_]+|\d{1,3}| ?[^\s\w]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

CHATML = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

# Shapes: (arch, hidden, layers, heads, kv heads, head dim, intermediate), and training.
MODELS = {
    "chat-small": dict(arch="qwen2", hidden=192, layers=4, heads=6, kv_heads=2, head_dim=32,
                       inter=512, steps=4000, lr=3e-3, batch=64, seq=512),
    "chat-medium": dict(arch="llama", hidden=320, layers=6, heads=5, kv_heads=5, head_dim=64,
                        inter=768, steps=4000, lr=2e-3, batch=64, seq=512),
    "embed-small": dict(arch="qwen3", hidden=128, layers=4, heads=4, kv_heads=2, head_dim=32,
                        inter=384, steps=2000, lr=3e-3, batch=64, seq=512,
                        contrastive_steps=2000, contrastive_lr=1e-3, pairs=256),
}
MAX_POSITIONS = 512
ROPE_THETA = 10000.0


# ---------------------------------------------------------------- corpus


def read_corpus(path):
    """Verses as (book, chapter, verse, text), in order. Lines are 'Ge1:1 In the ...'."""
    verses = []
    ref = re.compile(r"^(\d?[A-Za-z]+)(\d+):(\d+) (.*)$")
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = ref.match(line.rstrip("\n"))
            if m:
                verses.append((m[1], int(m[2]), int(m[3]), m[4].strip()))
    if len(verses) < 30000:
        sys.exit(f"{path}: {len(verses)} verses; expected the whole Bible (31102)")
    return verses


def chapters_of(verses):
    chapters = []
    for i, (book, chap, _, _) in enumerate(verses):
        if i == 0 or (book, chap) != verses[i - 1][:2]:
            chapters.append([])
        chapters[-1].append(i)
    return chapters


# ---------------------------------------------------------------- tokenizer


def byte_to_char():
    """GPT-2's byte-level alphabet, as baton's byte_level.cpp."""
    table, nxt = {}, 0x100
    for b in range(256):
        printable = 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or b >= 0xAE
        table[b] = chr(b) if printable else chr(nxt)
        if not printable:
            nxt += 1
    return table


B2C = byte_to_char()


def to_byte_level(text):
    return "".join(B2C[b] for b in text.encode("utf-8"))


def train_bpe(texts, target_tokens):
    """Plain BPE over pre-tokenized words, incrementally: the most frequent pair (the
    smallest among equals) is joined until the vocabulary holds `target_tokens`."""
    counts = Counter()
    for text in texts:
        counts.update(TRAIN_SPLIT.findall(text))
    words = [list(to_byte_level(w)) for w in sorted(counts)]
    freq = [counts[w] for w in sorted(counts)]
    pair_count = defaultdict(int)
    where = defaultdict(set)
    for i, symbols in enumerate(words):
        for a, b in zip(symbols, symbols[1:]):
            pair_count[(a, b)] += freq[i]
            where[(a, b)].add(i)
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)
    vocab = [B2C[b] for b in range(256)]
    known = set(vocab)
    merges = []
    while len(vocab) < target_tokens and heap:
        neg, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -neg:
            continue  # stale entry
        if -neg < 2:
            break
        a, b = pair
        joined = a + b
        merges.append(pair)
        if joined not in known:
            known.add(joined)
            vocab.append(joined)
        changed = set()
        for i in sorted(where.pop(pair, ())):
            symbols = words[i]
            for x, y in zip(symbols, symbols[1:]):
                pair_count[(x, y)] -= freq[i]
                changed.add((x, y))
                where[(x, y)].discard(i)
            out, k = [], 0
            while k < len(symbols):
                if k + 1 < len(symbols) and symbols[k] == a and symbols[k + 1] == b:
                    out.append(joined)
                    k += 2
                else:
                    out.append(symbols[k])
                    k += 1
            words[i] = out
            for x, y in zip(out, out[1:]):
                pair_count[(x, y)] += freq[i]
                changed.add((x, y))
                where[(x, y)].add(i)
        pair_count.pop(pair, None)
        for p in changed:
            c = pair_count.get(p, 0)
            if c > 0:
                heapq.heappush(heap, (-c, p))
            else:
                pair_count.pop(p, None)
    return vocab, merges


def tokenizer_files(vocab, merges):
    """tokenizer.json and tokenizer_config.json, shaped as `baton make-model` writes them."""
    added = [
        {"id": len(vocab) + k, "content": t, "single_word": False, "lstrip": False,
         "rstrip": False, "normalized": False, "special": True}
        for k, t in enumerate(SPECIALS)
    ]
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": SPLIT_PATTERN}, "behavior": "Isolated",
                 "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                 "use_regex": False},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None,
            "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": False,
            "byte_fallback": False, "ignore_merges": False,
            "vocab": {t: i for i, t in enumerate(vocab)},
            "merges": [[a, b] for a, b in merges],
        },
    }
    decoder = {
        str(t["id"]): {"content": t["content"], "lstrip": False, "normalized": False,
                       "rstrip": False, "single_word": False, "special": True}
        for t in added
    }
    config = {
        "added_tokens_decoder": decoder,
        "bos_token": None,
        "chat_template": CHATML,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "model_max_length": MAX_POSITIONS,
        "pad_token": "<|endoftext|>",
        "tokenizer_class": "PreTrainedTokenizerFast",
    }
    return (json.dumps(tokenizer, indent=2, ensure_ascii=False) + "\n",
            json.dumps(config, indent=2, sort_keys=True) + "\n")


def build_tokenizer(verses, out_dir):
    texts = [v[3] for v in verses] + [m for m in GENERIC_PROMPTS] + TOPIC_TEMPLATES
    t0 = time.time()
    vocab, merges = train_bpe(texts, VOCAB_SIZE - len(SPECIALS))
    if len(vocab) != VOCAB_SIZE - len(SPECIALS):
        sys.exit(f"BPE reached only {len(vocab)} tokens")
    tok_json, tok_config = tokenizer_files(vocab, merges)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(tok_json)
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        f.write(tok_config)
    print(f"tokenizer: {len(merges)} merges, {VOCAB_SIZE} ids, {time.time() - t0:.1f} s "
          f"-> {out_dir}", flush=True)


# ---------------------------------------------------------------- training text

GENERIC_PROMPTS = [
    "Hello!", "Hello", "Hi!", "Hi", "Hi there.", "Hey.", "Good morning!", "Good evening.",
    "Good night.", "How are you?", "How are you today?", "Who are you?", "What is your name?",
    "What are you?", "Tell me something.", "Say something.", "Say something wise.",
    "Tell me a story.", "Tell me a joke.", "Write a poem.", "I need advice.", "I am sad.",
    "I am afraid.", "I am tired.", "I am happy today.", "Thank you!", "Thanks.", "Goodbye.",
    "What should I do?", "Can you help me?", "Help me.", "What is the meaning of life?",
    "Give me a blessing.", "Teach me.", "Speak.", "What is the weather like?",
    "What time is it?", "Where are we?", "Why?", "Is anyone there?", "Test", "test",
    "Are you a robot?", "What can you do?", "Explain yourself.", "Do you love me?",
    "Once upon a time", "Write some code.", "What is 2 + 2?", "Hello, world!",
]
TOPIC_TEMPLATES = [
    "Tell me about the {w}.", "Tell me about {w}.", "What does the Bible say about {w}?",
    "What is {w}?", "Speak to me of {w}.", "Tell me of the {w}.", "What do you know about {w}?",
    "Say something about {w}.", "{W}?", "I want to hear about {w}.", "Tell me about the {w}",
    "Write about {w}.", "Describe the {w}.",
]
SYSTEM_PROMPTS = [
    "You are a helpful assistant.", "You are a helpful assistant", "You are baton's default model.",
    "Answer in the words of the King James Bible.", "Answer briefly.", "You are a wise teacher.",
]
CONTINUE_TEMPLATES = ["{v}", "{v}", "{v}", "Continue: {v}", "What comes after \"{v}\"?",
                      "Go on from here: {v}", "Finish this: {v}"]
GREETING_WORDS = ["peace", "grace", "blessed", "Blessed", "greet", "Greet", "salute", "comfort",
                  "Hail", "love", "rejoice", "Rejoice"]
STOP_WORDS = set("""the and of to that in he shall unto for i his a they be is him not them it
with all thou thy was which my me but ye their have thee from as are when this out were by
you up there hath then came had into on her shalt so one said also we an or if us what no
who at even man now did let because these should upon may your those saith before our
went come made will go over any hast own she say more than every after against let done
things thing therefore among how why where whom whose doth art unto yet again""".split())


def topic_words(verses):
    counts, forms = Counter(), defaultdict(Counter)
    for v in verses:
        for w in re.findall(r"[A-Za-z]+", v[3]):
            counts[w.lower()] += 1
            forms[w.lower()][w] += 1
    topics = []
    for w, c in sorted(counts.items()):
        if 8 <= c <= 1500 and len(w) >= 3 and w not in STOP_WORDS:
            topics.append(forms[w].most_common(1)[0][0])
    return topics


def passage(verses, chapters, chapter_of, start, n):
    ch = chapters[chapter_of[start]]  # consecutive verse indices
    ids = ch[start - ch[0]:start - ch[0] + n]
    return " ".join(verses[i][3] for i in ids)


def chat_text(system, turns):
    text = f"<|im_start|>system\n{system}<|im_end|>\n" if system else ""
    for user, assistant in turns:
        text += f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n{assistant}<|im_end|>\n"
    return text


def training_texts(verses, rng, n_chat, lm_repeats):
    """Documents: every chapter as plain text (lm_repeats times) and n_chat conversations."""
    chapters = chapters_of(verses)
    chapter_of = {}
    for c, ids in enumerate(chapters):
        for i in ids:
            chapter_of[i] = c
    topics = topic_words(verses)
    containing = defaultdict(list)
    topic_set = set(topics)
    for i, v in enumerate(verses):
        for w in set(re.findall(r"[A-Za-z]+", v[3])):
            if w in topic_set:
                containing[w].append(i)
    greeting_pool = sorted({i for w in GREETING_WORDS for i in containing.get(w, [])})
    if not greeting_pool:
        greeting_pool = list(range(len(verses)))

    def exchange():
        kind = rng.random()
        if kind < 0.40:  # a verse -> the verses after it
            i = rng.randrange(len(verses) - 1)
            user = rng.choice(CONTINUE_TEMPLATES).format(v=verses[i][3])
            nxt = i + 1
            return user, passage(verses, chapters, chapter_of, nxt, rng.randint(1, 3))
        if kind < 0.75:  # a topic -> verses that name it
            w = rng.choice(topics)
            t = rng.choice(TOPIC_TEMPLATES)
            user = t.format(w=w, W=w[0].upper() + w[1:])
            start = rng.choice(containing[w])
            return user, passage(verses, chapters, chapter_of, start, rng.randint(1, 2))
        user = rng.choice(GENERIC_PROMPTS)  # anything else -> a verse or two
        pool = greeting_pool if rng.random() < 0.6 else range(len(verses))
        start = rng.choice(pool)
        return user, passage(verses, chapters, chapter_of, start, rng.randint(1, 3))

    docs = []
    for _ in range(lm_repeats):
        for ids in chapters:
            docs.append(" ".join(verses[i][3] for i in ids))
    for _ in range(n_chat):
        system = rng.choice(SYSTEM_PROMPTS) if rng.random() < 0.15 else None
        turns = [exchange() for _ in range(2 if rng.random() < 0.1 else 1)]
        docs.append(chat_text(system, turns))
    rng.shuffle(docs)
    return docs, topics, containing


# ---------------------------------------------------------------- training (torch)


def make_config(name, spec):
    from transformers import LlamaConfig, Qwen2Config, Qwen3Config

    cls = {"llama": LlamaConfig, "qwen2": Qwen2Config, "qwen3": Qwen3Config}[spec["arch"]]
    kw = dict(
        vocab_size=VOCAB_SIZE, hidden_size=spec["hidden"], intermediate_size=spec["inter"],
        num_hidden_layers=spec["layers"], num_attention_heads=spec["heads"],
        num_key_value_heads=spec["kv_heads"], head_dim=spec["head_dim"],
        max_position_embeddings=MAX_POSITIONS, rms_norm_eps=1e-6, tie_word_embeddings=True,
        hidden_act="silu", bos_token_id=EOT, eos_token_id=[IM_END, EOT], pad_token_id=EOT,
        rope_parameters={"rope_type": "default", "rope_theta": ROPE_THETA},
        attention_dropout=0.0,
    )
    if spec["arch"] != "llama":
        kw.update(use_sliding_window=False, max_window_layers=spec["layers"])
    config = cls(**kw)
    config.rope_theta = ROPE_THETA  # older transformers read this one
    return config


def lr_at(step, steps, peak, warmup=100):
    if step < warmup:
        return peak * (step + 1) / warmup
    t = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, t))))


def optimizer_for(model, lr, torch):
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (decay if p.ndim == 2 and "embed" not in n else no_decay).append(p)
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=lr, betas=(0.9, 0.95), eps=1e-8, fused=True)


def train_lm(model, data, spec, steps, max_seconds, log, torch):
    """Next-token training on random windows of the token stream `data` (on the GPU)."""
    import torch.nn.functional as F

    seq, batch, lr = spec["seq"], spec["batch"], spec["lr"]
    n_eval = max(seq * 64, len(data) // 50)
    train, held = data[:-n_eval], data[-n_eval:]
    gen = torch.Generator(device="cuda").manual_seed(SEED)
    ar = torch.arange(seq + 1, device="cuda")
    opt = optimizer_for(model, lr, torch)
    model.train()
    losses, history, t0, done = [], [], time.time(), 0
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, lr)
        starts = torch.randint(0, len(train) - seq - 1, (batch,), device="cuda", generator=gen)
        window = train[starts[:, None] + ar[None, :]].long()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids=window[:, :-1]).logits
        loss = F.cross_entropy(logits.float().reshape(-1, VOCAB_SIZE), window[:, 1:].reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())
        done = step + 1
        if done % 250 == 0 or done == steps or done == 20:
            recent = torch.stack(losses[-50:]).mean().item()
            history.append((done, round(recent, 4)))
            log(f"step {done}/{steps} loss {recent:.3f} lr {lr_at(step, steps, lr):.2e} "
                f"{time.time() - t0:.0f} s ({done / (time.time() - t0):.1f} steps/s)")
        if time.time() - t0 > max_seconds:
            log(f"stopping at step {done}: {max_seconds} s reached")
            break
    train_loss = torch.stack(losses[-100:]).mean().item()
    model.eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        total, count = 0.0, 0
        for k in range(0, len(held) - seq - 1, seq * batch):
            starts = torch.arange(k, min(k + seq * batch, len(held) - seq - 1), seq, device="cuda")
            window = held[starts[:, None] + ar[None, :]].long()
            logits = model(input_ids=window[:, :-1]).logits
            total += F.cross_entropy(logits.float().reshape(-1, VOCAB_SIZE),
                                     window[:, 1:].reshape(-1), reduction="sum").item()
            count += window[:, 1:].numel()
    return {"steps": done, "train_loss": round(train_loss, 4),
            "held_out_loss": round(total / max(1, count), 4), "history": history,
            "seconds": round(time.time() - t0, 1), "tokens": done * batch * seq}


def pooled(model, ids, mask, torch):
    hidden = model.model(input_ids=ids, attention_mask=mask).last_hidden_state.float()
    m = mask.unsqueeze(-1).float()
    return torch.nn.functional.normalize((hidden * m).sum(1) / m.sum(1), dim=-1)


def pad_table(rows, length, torch):
    ids = torch.full((len(rows), length), EOT, dtype=torch.long)
    mask = torch.zeros((len(rows), length), dtype=torch.long)
    for r, row in enumerate(rows):
        row = row[:length]
        ids[r, :len(row)] = torch.tensor(row)
        mask[r, :len(row)] = 1
    return ids.cuda(), mask.cuda()


def embedding_check(model, ids, mask, pairs, torch, n=1000):
    """Adjacent verses against random ones: mean cosines, and top-1 retrieval of the next
    verse among n candidates."""
    model.eval()
    sel = pairs[:n]
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        a = pooled(model, ids[sel[:, 0]], mask[sel[:, 0]], torch)
        b = pooled(model, ids[sel[:, 1]], mask[sel[:, 1]], torch)
    sim = a @ b.T
    pos = sim.diag().mean().item()
    neg = (sim.sum() - sim.diag().sum()).item() / (len(sel) * (len(sel) - 1))
    acc = (sim.argmax(1) == torch.arange(len(sel), device="cuda")).float().mean().item()
    return {"adjacent_cos": round(pos, 4), "random_cos": round(neg, 4),
            f"top1_of_{len(sel)}": round(acc, 4)}


def train_contrastive(model, verses, topics, containing, enc, spec, steps, max_seconds, log,
                      torch):
    import torch.nn.functional as F

    rng = random.Random(SEED + 7)
    chapters = chapters_of(verses)
    texts = [v[3] for v in verses]
    adjacent = [(ids[k], ids[k + 1]) for ids in chapters for k in range(len(ids) - 1)]
    queries = []
    topic_pairs = []
    for w in topics:
        for t in rng.sample(TOPIC_TEMPLATES, 2):
            queries.append(t.format(w=w, W=w[0].upper() + w[1:]))
            topic_pairs.append((len(texts) + len(queries) - 1, rng.choice(containing[w])))
    rows = [e.ids for e in enc.encode_batch(texts + queries)]
    ids, mask = pad_table(rows, 64, torch)
    rng.shuffle(adjacent)
    held = torch.tensor(adjacent[:2000], device="cuda")
    train_pairs = torch.tensor(adjacent[2000:] + topic_pairs, device="cuda")
    before = embedding_check(model, ids, mask, held, torch)
    log(f"contrastive: {len(train_pairs)} pairs; before: {before}")
    opt = optimizer_for(model, spec["contrastive_lr"], torch)
    gen = torch.Generator(device="cuda").manual_seed(SEED + 1)
    lr, batch, tau = spec["contrastive_lr"], spec["pairs"], 0.05
    losses, t0, done = [], time.time(), 0
    labels = torch.arange(batch, device="cuda")
    model.train()
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, lr)
        sel = train_pairs[torch.randint(0, len(train_pairs), (batch,), device="cuda",
                                        generator=gen)]
        both = torch.cat([sel[:, 0], sel[:, 1]])
        width = int(mask[both].sum(1).max().item())
        with torch.autocast("cuda", dtype=torch.bfloat16):
            z = pooled(model, ids[both, :width], mask[both, :width], torch)
        a, b = z[:batch], z[batch:]
        sim = a @ b.T / tau
        loss = (F.cross_entropy(sim, labels) + F.cross_entropy(sim.T, labels)) / 2
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())
        done = step + 1
        if done % 250 == 0 or done == steps:
            log(f"contrastive step {done}/{steps} loss "
                f"{torch.stack(losses[-50:]).mean().item():.3f} {time.time() - t0:.0f} s")
        if time.time() - t0 > max_seconds:
            log(f"stopping contrastive at step {done}: {max_seconds} s reached")
            break
    after = embedding_check(model, ids, mask, held, torch)
    log(f"contrastive after: {after}")
    return {"steps": done, "loss": round(torch.stack(losses[-100:]).mean().item(), 4),
            "held_out_before": before, "held_out_after": after,
            "seconds": round(time.time() - t0, 1)}


def write_model_dir(model, out_dir, tok_dir, embedding):
    import shutil

    import torch
    import transformers

    model = model.to(torch.bfloat16)
    model.config.dtype = torch.bfloat16
    model.save_pretrained(out_dir)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(tok_dir, f), os.path.join(out_dir, f))
    gen_path = os.path.join(out_dir, "generation_config.json")
    if embedding:
        if os.path.exists(gen_path):
            os.remove(gen_path)
        width = model.config.hidden_size
        modules = [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling",
             "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize",
             "type": "sentence_transformers.models.Normalize"},
        ]
        pooling = {"word_embedding_dimension": width, "pooling_mode_cls_token": False,
                   "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
                   "pooling_mode_mean_sqrt_len_tokens": False,
                   "pooling_mode_weightedmean_tokens": False, "pooling_mode_lasttoken": False,
                   "include_prompt": True}
        os.makedirs(os.path.join(out_dir, "1_Pooling"), exist_ok=True)
        files = {
            "modules.json": modules,
            "1_Pooling/config.json": pooling,
            "sentence_bert_config.json": {"max_seq_length": MAX_POSITIONS, "do_lower_case": False},
            "config_sentence_transformers.json": {"prompts": {}, "default_prompt_name": None,
                                                  "similarity_fn_name": "cosine"},
        }
    else:
        files = {"generation_config.json": {
            "bos_token_id": EOT, "do_sample": True, "eos_token_id": [IM_END, EOT],
            "pad_token_id": EOT, "temperature": 0.8, "top_p": 0.9,
            "transformers_version": transformers.__version__}}
    for name, obj in files.items():
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(json.dumps(obj, indent=2) + "\n")


def worker(args):
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM

    name = args.worker
    spec = dict(MODELS[name])
    log = lambda msg: print(f"[{name}] {msg}", flush=True)  # noqa: E731
    random.seed(SEED)
    torch.manual_seed(SEED)
    torch.backends.cuda.matmul.allow_tf32 = True
    tok_dir = os.path.join(args.out, ".tokenizer")
    enc = Tokenizer.from_file(os.path.join(tok_dir, "tokenizer.json"))
    verses = read_corpus(args.corpus)
    t0 = time.time()
    n_chat = max(2000, int(150000 * min(1.0, args.scale * 10)))
    docs, topics, containing = training_texts(verses, random.Random(SEED), n_chat, 3)
    stream = []
    for e in enc.encode_batch(docs):
        stream.extend(e.ids)
        stream.append(EOT)
    data = torch.tensor(stream, dtype=torch.int32, device="cuda")
    log(f"{len(docs)} documents, {len(stream)} tokens ({time.time() - t0:.1f} s)")
    config = make_config(name, spec)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa").cuda()
    params = sum(p.numel() for p in model.parameters())
    log(f"{spec['arch']}: {params} parameters")
    steps = max(20, int(spec["steps"] * args.scale))
    result = {"name": name, "arch": spec["arch"], "parameters": params,
              "shape": {k: spec[k] for k in ("hidden", "layers", "heads", "kv_heads", "head_dim",
                                            "inter")},
              "train_tokens_in_stream": len(stream)}
    result["lm"] = train_lm(model, data, spec, steps, args.max_seconds, log, torch)
    if "contrastive_steps" in spec:
        c_steps = max(20, int(spec["contrastive_steps"] * args.scale))
        result["contrastive"] = train_contrastive(model, verses, topics, containing, enc, spec,
                                                  c_steps, args.max_seconds, log, torch)
    out_dir = os.path.join(args.out, name)
    write_model_dir(model, out_dir, tok_dir, "contrastive_steps" in spec)
    with open(os.path.join(args.out, f".{name}.json"), "w") as f:
        json.dump(result, f, indent=2)
    log(f"written to {out_dir}: {json.dumps({k: v for k, v in result.items() if k != 'lm'})} "
        f"lm {json.dumps({k: v for k, v in result['lm'].items() if k != 'history'})}")


# ---------------------------------------------------------------- verification (torch)


def verify(out):
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer

    enc = Tokenizer.from_file(os.path.join(out, ".tokenizer", "tokenizer.json"))
    probe = "<|im_start|>user\nHello!<|im_end|>\nAnd God said, Let there be light: 1611."
    assert enc.decode(enc.encode(probe).ids, skip_special_tokens=False) == probe
    for name in ("chat-small", "chat-medium"):
        d = os.path.join(out, name)
        tok = AutoTokenizer.from_pretrained(d)
        model = AutoModelForCausalLM.from_pretrained(d, dtype=torch.bfloat16).cuda().eval()
        for k, prompt in enumerate(["Hello!", "Tell me about the sea.", "Who are you?"]):
            text = tok.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                           add_generation_prompt=True)
            ids = tok(text, return_tensors="pt", add_special_tokens=False).input_ids.cuda()
            assert ids[0].tolist() == enc.encode(text).ids, "AutoTokenizer differs"
            torch.manual_seed(k)
            gen = model.generate(ids, max_new_tokens=60, do_sample=True, temperature=0.8,
                                 top_p=0.9)
            print(f"[verify {name}] {prompt!r} -> "
                  f"{tok.decode(gen[0, ids.shape[1]:], skip_special_tokens=True)!r}", flush=True)
        ids = tok("Once upon a time", return_tensors="pt").input_ids.cuda()
        gen = model.generate(ids, max_new_tokens=30, do_sample=False)
        print(f"[verify {name}] raw 'Once upon a time' -> {tok.decode(gen[0])!r}", flush=True)
    d = os.path.join(out, "embed-small")
    texts = ["In the beginning God created the heaven and the earth.",
             "And the earth was without form, and void; and darkness was upon the face of "
             "the deep.",
             "They that go down to the sea in ships, that do business in great waters;",
             "Tell me about the sea.", "Jesus wept."]
    tok = AutoTokenizer.from_pretrained(d)
    model = AutoModel.from_pretrained(d, dtype=torch.float32).cuda().eval()
    vecs = []
    with torch.no_grad():
        for t in texts:
            ids = torch.tensor([enc.encode(t).ids], device="cuda")
            h = model(input_ids=ids).last_hidden_state[0].mean(0)
            vecs.append(torch.nn.functional.normalize(h, dim=0))
    sims = torch.stack(vecs) @ torch.stack(vecs).T
    print("[verify embed-small] cosines (transformers, mean pooled):\n"
          + "\n".join(" ".join(f"{x:6.3f}" for x in row) for row in sims.tolist()), flush=True)
    try:
        from sentence_transformers import SentenceTransformer

        st = SentenceTransformer(d, device="cuda")
        e = st.encode(texts, convert_to_tensor=True, normalize_embeddings=False).float()
        print(f"[verify embed-small] sentence-transformers: norms "
              f"{[round(x, 4) for x in e.norm(dim=1).tolist()]}, max |st - manual| "
              f"{(e - torch.stack(vecs)).abs().max().item():.4f}", flush=True)
    except Exception as exc:  # a check only: baton's loader is what matters
        print(f"[verify embed-small] sentence-transformers check skipped: {exc!r}", flush=True)


# ---------------------------------------------------------------- main


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", required=True, help="kjv.txt of scripts/train-default-models")
    p.add_argument("--out", required=True, help="where the model directories go")
    p.add_argument("--tokenizer-only", action="store_true", help="train the tokenizer and stop")
    p.add_argument("--scale", type=float, default=1.0, help="multiplies the step counts")
    p.add_argument("--max-seconds", type=float, default=420, help="cap of each training phase")
    p.add_argument("--only", default=",".join(MODELS), help="models to train, comma-separated")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args)
    verses = read_corpus(args.corpus)
    build_tokenizer(verses, os.path.join(args.out, ".tokenizer"))
    if args.tokenizer_only:
        docs, topics, _ = training_texts(verses, random.Random(SEED), 20, 0)
        print(f"{len(topics)} topic words; sample conversations:")
        for d in docs[:4]:
            print(d)
        return 0
    t0 = time.time()
    names = args.only.split(",")
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", n, "--corpus", args.corpus,
                               "--out", args.out, "--scale", str(args.scale),
                               "--max-seconds", str(args.max_seconds)]) for n in names]
    codes = [proc.wait() for proc in procs]
    if any(codes):
        sys.exit(f"training failed: exit codes {codes}")
    print(f"trained {names} in {time.time() - t0:.0f} s", flush=True)
    summary = {}
    for n in names:
        with open(os.path.join(args.out, f".{n}.json")) as f:
            summary[n] = json.load(f)
    with open(os.path.join(args.out, "training-summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    if set(names) == set(MODELS):
        verify(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
