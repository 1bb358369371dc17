"""The reference for baton's logit_bias (tests/model/logit_bias_test.cpp), computed with
numpy alone, independently of the C++ sampler: for fixed rows of logits and fixed bias
maps, the biased logits (bias added in float32, as the logits are), their softmax
probabilities and log-probabilities (in float64), the greedy pick (the lowest id among the
largest) and the five most likely tokens. Written as
{"cases": [{"name", "logits", "bias": {id: value}, "probs", "logprobs", "greedy", "top"}]}.
  /usr/bin/python3 scripts/reference/make_logit_bias_reference.py > tests/data/sampler/logit_bias.json"""
import json

import numpy as np

TOP = 5


def case(name, logits, bias):
    logits = np.asarray(logits, dtype=np.float32)
    biased = logits.copy()
    for token, value in bias.items():
        biased[token] = np.float32(biased[token] + np.float32(value))
    wide = biased.astype(np.float64)
    shifted = wide - wide.max()
    logprobs = shifted - np.log(np.exp(shifted).sum())
    greedy = int(np.flatnonzero(biased == biased.max())[0])
    # Most likely first; ties by lower id (a stable sort of the negated log-probs).
    order = np.argsort(-logprobs, kind="stable")[:TOP]
    return {
        "name": name,
        "logits": [float(x) for x in logits],
        "bias": {str(k): float(v) for k, v in bias.items()},
        "probs": [float(p) for p in np.exp(logprobs)],
        "logprobs": [float(x) for x in logprobs],
        "greedy": greedy,
        "top": [[int(i), float(logprobs[i])] for i in order],
    }


def main():
    rng = np.random.default_rng(20261207)
    small = [1.5, -0.5, 3.25, 0.0, 2.0, -2.0, 0.75, 1.0]
    wide = rng.normal(0.0, 3.0, size=1000).astype(np.float32)
    top = int(np.argmax(wide))
    cases = [
        case("no_bias", small, {}),
        case("small_shifts", small, {0: 1.0, 2: -0.5, 5: 2.5, 7: -1.25}),
        case("ban_the_greedy_token", small, {2: -100}),
        case("force_a_tail_token", small, {5: 100}),
        case("ban_and_force", small, {2: -100, 4: -100, 6: 100}),
        case("wide_vocabulary", wide, {top: -100, 17: 4.5, 500: 7.0, 999: -3.0, 3: 0.5}),
        case("wide_force", wide, {421: 100}),
    ]
    print(json.dumps({"cases": cases}, indent=1))


if __name__ == "__main__":
    main()
