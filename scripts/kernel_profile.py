#!/usr/bin/env python3
"""Sums an `ncu --csv --metrics gpu__time_duration.sum,dram__throughput...,dram__bytes_read.sum`
report by kernel name: launches, total us, share of the step, GB read and the achieved
read rate. Usage: kernel_profile.py PROFILE.csv"""
import csv
import re
import sys
from collections import defaultdict


def kernel_name(full):
    """The kernel's own name: no return type, namespaces, template or call arguments."""
    name = re.sub(r"\(anonymous namespace\)::|<unnamed>::", "", full)
    name = name.split("(")[0].split("<")[0].split("::")[-1]
    return name.removeprefix("void ").strip()[:48]


def main(path):
    rows = [line for line in open(path) if line.startswith('"')]
    kernels = defaultdict(lambda: {"n": 0, "ns": 0.0, "bytes": 0.0})
    for r in csv.DictReader(rows):
        name = kernel_name(r["Kernel Name"])
        value = float(r["Metric Value"].replace(",", ""))
        unit = r["Metric Unit"]
        k = kernels[(r["ID"], name)]
        if r["Metric Name"] == "gpu__time_duration.sum":
            k["ns"] = value * {"nsecond": 1, "usecond": 1e3, "msecond": 1e6}.get(unit, 1)
        elif r["Metric Name"] == "dram__bytes_read.sum":
            k["bytes"] = value * {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}.get(unit, 1)
    by_name = defaultdict(lambda: {"n": 0, "ns": 0.0, "bytes": 0.0})
    for (_, name), k in kernels.items():
        s = by_name[name]
        s["n"] += 1
        s["ns"] += k["ns"]
        s["bytes"] += k["bytes"]
    total = sum(s["ns"] for s in by_name.values())
    print(f"{'kernel':<48} {'launches':>8} {'us':>9} {'share':>6} {'GB read':>8} {'TB/s':>6}")
    for name, s in sorted(by_name.items(), key=lambda kv: -kv[1]["ns"]):
        rate = s["bytes"] / s["ns"] / 1e3 if s["ns"] else 0.0
        print(f"{name:<48} {s['n']:>8} {s['ns'] / 1e3:>9.1f} {100 * s['ns'] / total:>5.1f}% "
              f"{s['bytes'] / 1e9:>8.3f} {rate:>6.2f}")
    print(f"{'all':<48} {sum(s['n'] for s in by_name.values()):>8} {total / 1e3:>9.1f}")


if __name__ == "__main__":
    main(sys.argv[1])
