#!/usr/bin/env python3
"""bench/sweep/report.py RESULTS.TXT: the busy threshold and the room rule, swept.

RESULTS.TXT holds the BENCH lines of bench/sweep/run's boot ("boot=patched" first), labels
CASE-N-SETTING-RUN, SETTING "off" (packing off) or one of SETTINGS.  The figures and their
helpers are bench/latency/report.py's: medians over the runs, wake-up lateness pooled over the
runs and quoted only where at least 100 pooled samples lie beyond the percentile, and the p99
ratio to packing off with a bootstrap 95 % interval that resamples runs.
"""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "latency"))
from report import f, fmt, load, med, counter, p99_ratio, pool, BEYOND, RESAMPLES  # noqa: E402

SETTINGS = {
    "off": "packing off",
    "b16u": "1/16, util_avg",
    "b8u": "1/8, util_avg (the series)",
    "b4u": "1/4, util_avg",
    "b8r": "1/8, runnable_avg",
    "b8e": "1/8, max(util_avg, util_est)",
    "b8i": "1/8, util_avg, idle CPU only",
}
CASES = {"main": "N hogs pinned one per core, 2N jitter threads of 1 ms every 10 ms",
         "nopin": "2 hogs the scheduler places itself, 4 jitter threads"}


def main():
    data = load(sys.argv[1])
    rng = random.Random(1)
    print("# The busy threshold and the room rule, swept (bench/sweep)\n")
    print(
        "One boot of the series plus `bench/sweep/knobs.patch` (benchmark only: the busy "
        "threshold and the room rule as debugfs knobs), QEMU 10, `-icount shift=3`, 8 vCPUs (2 "
        "sockets x 2 cores x 2 threads); the settings and packing off interleaved round by round. "
        "Busy threshold: the share of a core's capacity its non-jitter work must use for the "
        "core to count as busy. Room rule: the utilization signal the room check sums "
        "(util_avg: the series; runnable_avg; util_est: max(util_avg, util_est), as cpu_util() "
        "does; idle CPU only: util_avg, and a busy core qualifies only with an idle CPU for the task, a bound on the queue). Latency in milliseconds, pooled over the runs; a figure in brackets has fewer "
        f"than {BEYOND} pooled samples beyond it. p99 on/off with a {RESAMPLES}-resample "
        "bootstrap 95 % interval over runs. Other figures: medians over the runs. Rerun: "
        "`sudo bench/sweep/run` (report only: `--report-only`).\n"
    )
    print("| case | N | setting | runs | samples | p50 | p99 | p99 / off | 95 % interval | "
          "jitter on busy cores | spare-core idle | packed | fallback (idle/full) |")
    print("|---" * 13 + "|")
    for case in CASES:
        for n in sorted({k[1] for k in data if k[0] == case}):
            off = list(data.get((case, n, "off"), {}).values())
            off_h = [r["hist"] for r in off if "hist" in r]
            for s, title in SETTINGS.items():
                rs = list(data.get((case, n, s), {}).values())
                if not rs:
                    continue
                hs = [r["hist"] for r in rs if "hist" in r]
                h = pool(hs)
                ratio = ci = "–"
                if s != "off" and hs and off_h:
                    ratio, ci = p99_ratio(rng, hs, off_h)
                fb = counter(rs, "fallback")
                if fb != "n/a":
                    fb += f" ({counter(rs, 'fallback_idle')}/{counter(rs, 'fallback_full')})"
                print(f"| {case} | {n} | {title} | {len(rs)} | {sum(h.values())} | {fmt(h, 0.5)} | "
                      f"{fmt(h, 0.99)} | {ratio} | {ci} | {f(med(rs, 'pack', 'share_busy'), '.3f')} | "
                      f"{f(med(rs, 'pack', 'spare_idle'), '.4f')} | {counter(rs, 'packed')} | {fb} |")
    print()
    print("## All N of main pooled, per setting\n")
    print("| setting | runs | samples | p99 | p99 / off | 95 % interval |")
    print("|---|---|---|---|---|---|")
    off_all = [r["hist"] for k, v in data.items() if k[0] == "main" and k[2] == "off"
               for r in v.values() if "hist" in r]
    for s, title in SETTINGS.items():
        hs = [r["hist"] for k, v in data.items() if k[0] == "main" and k[2] == s
              for r in v.values() if "hist" in r]
        if not hs:
            continue
        ratio = ci = "–"
        if s != "off" and off_all:
            ratio, ci = p99_ratio(rng, hs, off_all)
        h = pool(hs)
        print(f"| {title} | {len(hs)} | {sum(h.values())} | {fmt(h, 0.99)} | {ratio} | {ci} |")
    print()
    print("Jitter on busy cores: share of the jitter threads' CPU time on the hogs' cores "
          "(tsbench). Spare-core idle: idle share of the other cores. Counters: deltas of debugfs "
          "sched/pack_jitter/stats over the window.")


if __name__ == "__main__":
    main()
