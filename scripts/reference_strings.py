"""The training text and the hard strings of the tokenizer references
(make_reference_data.py, make_sentencepiece_reference.py)."""

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
