#!/usr/bin/env python3
"""The fair-share table of docs/benchmarks.md from `baton repro --json` files.

Usage: fair_share_table.py [--alias NAME=SOLO ...] COMPARE.json [RUN.json ...]
       fair_share_table.py --solo NAME=SOLO.json ... RUN.json ...
COMPARE.json is a `repro --compare --json` (its solo runs are the reference of every file);
--solo takes engine NAME's solo run from a one-engine `repro --json` instead;
each RUN.json is one `repro --json` run of the same engines (or of a subset named alike);
--alias llm-3=llm-2 measures engine llm-3 against llm-2's solo run (the same model and
prompts, so that a third engine needs no solo run of its own).
For each run under serialize or partition it prints, per engine: its weight's share, its
share of the device time used, its rate over solo, the decode step p50 / p99 over
solo / (its weight's share), and the time per step over solo / (its weight's share); and
per run the overlap, the aggregate (the sum of rate shares) and where the device's time
went (busy, held while idle, not held).
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
          f'{device_time(run)} | ' + "; ".join(cells) + " |")


def device_time(run):
    """Where the run's time went on the device: busy (the engines' device time), held
    while idle (a holder's host work, launches, wake-ups), and not held (the turn free or
    passing; with the mean hand-over, grant to running, in us)."""
    engines = run["engines"]
    duration = run.get("duration_s") or 1.0
    device = sum(e.get("turn", {}).get("device_s", 0.0) for e in engines) / duration
    held = sum(e.get("turn", {}).get("hold_s", 0.0) for e in engines) / duration
    mean = run.get("turn", {}).get("handover_us_mean")
    passing = f", hand-over mean {mean:.1f} us" if mean is not None else ""
    return (f"busy {device:.3f}, held idle {max(held - device, 0.0):.3f}, "
            f"not held {max(1.0 - held, 0.0):.3f}{passing}")


def main(args):
    aliases = {}
    solo_files = {}
    while args and args[0] in ("--alias", "--solo"):
        name, value = args[1].split("=", 1)
        if args[0] == "--alias":
            aliases[name] = value
        else:
            solo_files[name] = value
        args = args[2:]
    paths = args
    if solo_files:
        solo = {name: json.load(open(f))["engines"][0] for name, f in solo_files.items()}
    else:
        _, solo_runs = runs_of(paths[0])
        solo = solo_engines(solo_runs)
    for name, reference in aliases.items():
        solo[name] = solo[reference]
    print("| run | overlap s | aggregate | device time | per engine |")
    print("|---|---|---|---|---|")
    for path in paths:
        runs, _ = runs_of(path)
        for run in runs:
            if run["policy"] in ("serialize", "partition"):
                row(run, solo, path)


if __name__ == "__main__":
    main(sys.argv[1:])
