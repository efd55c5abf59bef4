#!/usr/bin/env python3
"""bench/latency/report.py RESULTS.CSV: jitter wake-up latency, packing on and off, pooled.

Each row of the CSV is one run's wake-up lateness histogram (10 us buckets).  The runs of a case
(N hogs, packing on or off) pool; a percentile is quoted only where at least 100 pooled samples
lie beyond it.  The p99 ratio on/off gets a bootstrap 95 % interval that resamples runs.
"""
import csv
import random
import sys
from collections import defaultdict

RESAMPLES = 2000
BEYOND = 100


def parse_hist(text):
    out = {}
    for part in text.split(","):
        if part:
            b, c = part.split(":")
            out[int(b)] = out.get(int(b), 0) + int(c)
    return out


def pool(hists):
    out = defaultdict(int)
    for h in hists:
        for b, c in h.items():
            out[b] += c
    return out


def quantile(h, q):
    n = sum(h.values())
    if not n:
        return None
    want, seen = q * n, 0
    for b in sorted(h):
        seen += h[b]
        if seen > want:
            return b + 5  # the bucket's middle
    return max(h) + 5


def beyond(h, q):
    return int(sum(h.values()) * (1 - q))


def fmt(h, q):
    v = quantile(h, q)
    if v is None:
        return "–"
    if beyond(h, q) < BEYOND:
        return f"({v / 1000:.2f})"
    return f"{v / 1000:.2f}"


def main():
    runs = defaultdict(list)  # (n, pack) -> [hist]
    for r in csv.DictReader(open(sys.argv[1])):
        runs[(int(r["n"]), r["pack"])].append(parse_hist(r["hist"]))
    rng = random.Random(1)
    print("# Jitter wake-up latency, packing on and off (bench/latency)\n")
    print(
        "Wake-up lateness of the jitter threads (actual minus requested wake-up of an absolute "
        "`clock_nanosleep`), the benchmark's main workload: N hogs, 2N jitter threads of 1 ms "
        "every 10 ms, packing on and off alternating in one boot of the patched kernel (QEMU 10, "
        "`-icount shift=3`). The runs of a case pool; milliseconds; a figure in brackets has "
        f"fewer than {BEYOND} pooled samples beyond it and is not a measurement of that "
        "percentile. The p99 ratio's 95 % interval comes from "
        f"{RESAMPLES} bootstrap resamples of the runs. Rerun: `sudo bench/latency/run`.\n"
    )
    print(
        "| N | pack | runs | samples | p50 | p99 | p99.9 | max | p99 on/off | 95 % interval |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in sorted({k[0] for k in runs}):
        on, off = runs.get((n, "on"), []), runs.get((n, "off"), [])
        ratio = ci = "–"
        if on and off:
            pon, poff = pool(on), pool(off)
            r0 = quantile(pon, 0.99) / quantile(poff, 0.99)
            ratios = sorted(
                quantile(pool(rng.choices(on, k=len(on))), 0.99)
                / quantile(pool(rng.choices(off, k=len(off))), 0.99)
                for _ in range(RESAMPLES)
            )
            ratio = f"{r0:.2f}"
            ci = f"{ratios[int(0.025 * RESAMPLES)]:.2f} – {ratios[int(0.975 * RESAMPLES) - 1]:.2f}"
        for pack, hs in (("on", on), ("off", off)):
            if not hs:
                continue
            h = pool(hs)
            print(
                f"| {n} | {pack} | {len(hs)} | {sum(h.values())} | {fmt(h, 0.5)} | "
                f"{fmt(h, 0.99)} | {fmt(h, 0.999)} | {max(h) / 1000 + 0.01:.2f} | "
                f"{ratio if pack == 'on' else ''} | {ci if pack == 'on' else ''} |"
            )


if __name__ == "__main__":
    main()
