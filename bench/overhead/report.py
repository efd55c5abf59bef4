#!/usr/bin/env python3
"""bench/overhead/report.py RESULTS.CSV: is the series free without jitter tasks?

The pipe ping-pong's run time on the patched kernel over the unpatched one, from alternating
boots: the ratio of the medians (each kernel's median over every run of every boot) and a
bootstrap 95 % interval that resamples boots, then runs within each resampled boot, so that
the spread between boots, which is as large as the effect, enters the interval.
"""
import csv
import random
import statistics
import sys
from collections import defaultdict

RESAMPLES = 10000


def load(path):
    runs = defaultdict(lambda: defaultdict(list))  # (kernel, label) -> boot -> [seconds]
    for r in csv.DictReader(open(path)):
        runs[(r["kernel"], r["label"])][int(r["boot"])].append(float(r["seconds"]))
    return runs


def pooled_median(boots):
    return statistics.median([s for runs in boots.values() for s in runs])


def resample(boots, rng):
    keys = list(boots)
    out = []
    for _ in keys:
        runs = boots[rng.choice(keys)]
        out.extend(rng.choice(runs) for _ in runs)
    return statistics.median(out)


def interval(a, b, rng):
    ratios = sorted(resample(a, rng) / resample(b, rng) for _ in range(RESAMPLES))
    return ratios[int(0.025 * RESAMPLES)], ratios[int(0.975 * RESAMPLES) - 1]


def main():
    runs = load(sys.argv[1])
    rng = random.Random(1)
    print("# Free when unused: pipe ping-pong, patched over unpatched (bench/overhead)\n")
    print(
        "Two processes pass one byte back and forth over two pipes (`perf bench sched pipe`), "
        "without a clamped task (key off), and with one idle task whose util_max is 0 (on the "
        "patched kernel the key is on: every wake-up passes the packing hook, which finds "
        "nothing to do; on both kernels uclamp's own accounting is on). QEMU 10 with "
        "`-icount shift=3`; the kernels boot alternately. Ratio of the medians over all runs "
        f"of all boots, with a bootstrap 95 % interval ({RESAMPLES} resamples of boots, then "
        "of runs within them). Rerun: `sudo bench/overhead/run`.\n"
    )
    print("| case | boots | runs | median s | over unpatched, same case | 95 % interval |")
    print("|---|---|---|---|---|---|")
    # Each case against the unpatched kernel's run of the same case: the clamped task
    # switches on uclamp's accounting there too, which is not the series' cost.
    for key, name in (
        (("unpatched", "pipe"), "unpatched, no clamped task"),
        (("patched", "pipe"), "patched, key off"),
        (("unpatched", "pipe-key"), "unpatched, one util_max = 0 task"),
        (("patched", "pipe-key"), "patched, key on (one jitter task)"),
    ):
        boots = runs.get(key)
        if not boots:
            continue
        n = sum(len(v) for v in boots.values())
        med = pooled_median(boots)
        base = runs.get(("unpatched", key[1]))
        if base and key[0] == "patched":
            lo, hi = interval(boots, base, rng)
            ratio = f"{med / pooled_median(base):.4f}"
            ci = f"{lo:.4f} – {hi:.4f}"
        elif key[0] == "unpatched":
            ratio, ci = "1", "–"
        else:
            ratio, ci = "–", "– (no unpatched run of this case)"
        print(f"| {name} | {len(boots)} | {n} | {med:.4f} | {ratio} | {ci} |")
    print("\nPer boot (median s of its runs):\n")
    print("| boot | unpatched | patched, key off | unpatched, clamped task | patched, key on |")
    print("|---|---|---|---|---|")
    nboots = max((max(v) for v in runs.values()), default=0)
    for b in range(1, nboots + 1):
        cells = []
        for key in (("unpatched", "pipe"), ("patched", "pipe"), ("unpatched", "pipe-key"),
                    ("patched", "pipe-key")):
            v = runs.get(key, {}).get(b)
            cells.append(f"{statistics.median(v):.4f}" if v else "–")
        print(f"| {b} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
