#!/usr/bin/env python3
"""Prints the contention table of docs/benchmarks.md from `baton repro --json` outputs.

Arguments: JSON files, each from `repro --compare --json` (solo runs and scenarios) or from
a single `repro --json` run. Single runs are compared with the solo runs of the compare
files given before them (matched by engine name). Ratios are to the solo p50; the
aggregate is the sum over engines of (steps/s together) / (steps/s solo).
"""
import json
import sys


def row(label, run, solo):
    # An LLM engine counts as a decoder: its decode steps only (its prompts' steps apart).
    decode = [e for e in run["engines"] if e["kind"] in ("decode", "llm")]
    prefill = [e for e in run["engines"] if e["kind"] == "prefill"]
    cells = []
    for e in decode:
        s = solo.get(e["name"])
        key = "decode_step_ms" if e["kind"] == "llm" and "decode_step_ms" in e else "step_ms"
        base = s[key]["p50"] if s else float("nan")
        # The rate share (steps/s against solo) says which engine the aggregate lost.
        share = e["steps_per_s"] / s["steps_per_s"] if s else float("nan")
        cells.append(f'{e["name"]}: {e[key]["p50"]:.2f} / {e[key]["p99"]:.2f} '
                     f'({e[key]["p50"] / base:.2f}x / {e[key]["p99"] / base:.2f}x, '
                     f'rate {share:.2f})')
    chunk = "-"
    for e in prefill:
        s = solo.get(e["name"])
        share = e["steps_per_s"] / s["steps_per_s"] if s else float("nan")
        chunk = f'{e["step_ms"]["p50"]:.1f} ({share:.2f})'
    agg = 0.0
    for e in run["engines"]:
        s = solo.get(e["name"])
        agg += e["steps_per_s"] / s["steps_per_s"] if s else float("nan")
    return (f'| {label} | {"; ".join(cells) or "-"} | {chunk} | {agg:.2f} | '
            f'{run["overlap_s"] / run["duration_s"]:.2f} |')


def label_of(name, run):
    # partition/auto: the share it settled on (the run's last).
    share = run.get("turn", {}).get("prefill_share", 0)
    suffix = f" (settled at {share:.3g})" if run["scenario"].startswith("partition/auto") else ""
    return f'{name}: {run["scenario"]}{suffix}'


def main(paths):
    print("| scenario | decode p50 / p99 ms (x solo, rate share) | prefill chunk p50 ms (rate share) "
          "| aggregate | overlap share |")
    print("|---|---|---|---|---|")
    solo = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        name = path.rsplit("/", 1)[-1].removesuffix(".json")
        if "solo" in data:
            solo = {r["engines"][0]["name"]: r["engines"][0] for r in data["solo"]}
            for r in data["solo"]:
                print(row(f'{name}: {r["engines"][0]["name"]} solo', r, solo))
            for r in data["runs"]:
                print(row(label_of(name, r), r, solo))
        else:
            print(row(label_of(name, data), data, solo))


if __name__ == "__main__":
    main(sys.argv[1:])
