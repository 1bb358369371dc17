#!/usr/bin/env python3
"""The fair-share table of docs/benchmarks.md from `baton repro --json` files.

Usage: fair_share_table.py [--alias NAME=SOLO ...] COMPARE.json [RUN.json ...]
COMPARE.json is a `repro --compare --json` (its solo runs are the reference of every file);
each RUN.json is one `repro --json` run of the same engines (or of a subset named alike);
--alias llm-3=llm-2 measures engine llm-3 against llm-2's solo run (the same model and
prompts, so that a third engine needs no solo run of its own).
For each run under serialize or partition it prints, per engine: its weight's share, its
share of the device time used, its rate over solo, the decode step p50 / p99 over
solo / (its weight's share), and the time per step over solo / (its weight's share); and
per run the overlap and the aggregate (the sum of rate shares).
"""
import json
import sys


def runs_of(path):
    data = json.load(open(path))
    return data.get("runs", [data]), data.get("solo", [])


def solo_engines(solo_runs):
    return {e["name"]: e for run in solo_runs for e in run["engines"]}


def row(run, solo, path):
    engines = run["engines"]
    weights = {e["name"]: e.get("turn", {}).get("weight", 1.0) for e in engines}
    device = {e["name"]: e.get("turn", {}).get("device_s", 0.0) for e in engines}
    total_weight = sum(weights.values())
    total_device = sum(device.values()) or 1.0
    aggregate = 0.0
    cells = []
    for e in engines:
        alone = solo.get(e["name"])
        if not alone or not alone["steps_per_s"]:
            continue
        share = weights[e["name"]] / total_weight
        rate = e["steps_per_s"] / alone["steps_per_s"]
        aggregate += rate
        cell = (f'{e["name"]} w {share:.2f} dev {device[e["name"]] / total_device:.3f} '
                f'rate {rate:.3f}')
        if e.get("decode_steps") and alone.get("decode_steps"):
            base = alone["decode_step_ms"]["p50"] / share
            cell += (f' step p50 {e["decode_step_ms"]["p50"] / base:.2f}x '
                     f'p99 {e["decode_step_ms"]["p99"] / base:.2f}x of solo/share')
        else:
            cell += f' time/step {share / rate:.2f}x of solo/share' if rate else ''
        cells.append(cell)
    name = run.get("scenario", run["policy"])
    print(f'| {path.rsplit("/", 1)[-1]} {name} | {run["overlap_s"]:.3f} | {aggregate:.2f} | '
          + "; ".join(cells) + " |")


def main(args):
    aliases = {}
    while args and args[0] == "--alias":
        name, reference = args[1].split("=", 1)
        aliases[name] = reference
        args = args[2:]
    paths = args
    _, solo_runs = runs_of(paths[0])
    solo = solo_engines(solo_runs)
    for name, reference in aliases.items():
        solo[name] = solo[reference]
    print("| run | overlap s | aggregate | per engine |")
    print("|---|---|---|---|")
    for path in paths:
        runs, _ = runs_of(path)
        for run in runs:
            if run["policy"] in ("serialize", "partition"):
                row(run, solo, path)


if __name__ == "__main__":
    main(sys.argv[1:])
