#!/usr/bin/env python3
"""bench/latency/report.py RESULTS.TXT: wake-up latency and server-like loads, packing on, off
and the unpatched kernel, pooled over runs.

RESULTS.TXT holds the BENCH lines of bench/latency/run's boots, each starting with
"boot=patched|baseline" instead of "BENCH", labels CASE-N-PACK-RUN.  Each run's wake-up
lateness is a histogram of 10 us buckets (BENCH lathist, from tsbench or cyclictest); the runs
of a case pool, and a percentile is quoted only where at least 100 pooled samples lie beyond it.
The p99 ratio on/off gets a bootstrap 95 % interval that resamples runs.  The other figures
(BENCH pack, msg, cyclic) are medians over the runs.  bench/host/report.py imports the
histogram helpers.
"""
import random
import statistics
import sys
from collections import defaultdict

RESAMPLES = 2000
BEYOND = 100
PACKS = ("on", "off", "base")
CASES = {
    "main": "tsbench, the benchmark's workload: N hogs pinned one per core, 2N jitter threads "
    "(1 ms every 10 ms)",
    "cyc": "cyclictest (rt-tests) `--policy=other -t 2N -d 0 -i 10000 -h 20000 -q` under "
    "`uclampset -M 0` beside N pinned hogs; its histogram covers its whole run, warm-up included",
    "msg": "hackbench-style messaging (tsmsg: 2 groups x 10 senders x 10 receivers, AF_UNIX) "
    "repeated through the window, with N jitter threads and no hogs; its busy cores are the "
    "messaging's, so the share on busy cores does not apply",
    "nopin": "N hogs the scheduler places itself (`--no-pin`), 2N jitter threads; a core is busy "
    "in a 0.5 s bucket where hogs ran on it half the time, spare if hogs ran there under a tenth "
    "of the window",
    "duty60": "N services busy 60 % of every 10 ms (`--hog-duty 60`), pinned, 2N jitter threads",
    "duty90": "N services busy 90 % of every 10 ms (`--hog-duty 90`), pinned, 2N jitter threads",
    "many": "N hogs, 12 jitter threads: more jitter tasks than hog cores",
    "turn": "N hogs, 2N jitter threads, one of which turns CPU-bound halfway through the window "
    "(`--turn-at`); its time after turning is kept out of the jitter figures",
}


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


def load(path):
    """{(case, n, pack): {run: {"pack": {...}, "hist": {...}, "msg": [s...], ...}}}"""
    cases = defaultdict(lambda: defaultdict(lambda: {"msg": []}))
    for line in open(path, errors="replace"):
        parts = line.split()
        if len(parts) < 3 or not parts[0].startswith("boot="):
            continue
        what, kv = parts[1], dict(p.split("=", 1) for p in parts[2:] if "=" in p)
        try:
            case, n, pack, run = kv.get("label", "").split("-")
        except ValueError:
            continue
        r = cases[(case, int(n), pack)][run]
        if what == "lathist":
            if int(kv.get("n", 0)):  # cyclictest-case's tsbench observes, with no samples
                r["hist"] = parse_hist(kv.get("h", ""))
        elif what == "msg":
            r["msg"].append(float(kv["seconds"]))
        else:
            r[what] = kv
    return cases


def med(runs, what, key):
    v = []
    for r in runs:
        try:
            x = float(r.get(what, {}).get(key))
        except (TypeError, ValueError):
            continue
        if x == x:
            v.append(x)
    return statistics.median(v) if v else None


def f(v, spec):
    return "n/a" if v is None else format(v, spec)


def counter(runs, key):
    v = med(runs, "pack", key)
    return "n/a" if v is None or v < 0 else f"{v:.0f}"


def p99_ratio(rng, on, off):
    pon, poff = pool(on), pool(off)
    r0 = quantile(pon, 0.99) / quantile(poff, 0.99)
    ratios = sorted(
        quantile(pool(rng.choices(on, k=len(on))), 0.99) / quantile(pool(rng.choices(off, k=len(off))), 0.99)
        for _ in range(RESAMPLES)
    )
    return f"{r0:.2f}", f"{ratios[int(0.025 * RESAMPLES)]:.2f} – {ratios[int(0.975 * RESAMPLES) - 1]:.2f}"


def extra(case, runs, off_runs):
    """What only some cases have."""
    if case == "msg":
        s = statistics.median([x for r in runs for x in r["msg"]] or [0]) or None
        s_off = statistics.median([x for r in off_runs for x in r["msg"]] or [0]) or None
        n = sum(len(r["msg"]) for r in runs)
        vs = f", {s / s_off:.3f}x off" if s and s_off else ""
        return f"messaging run {f(s, '.3f')} s (median of {n}){vs}"
    if case == "turn":
        return (f"turned task: {f(med(runs, 'pack', 'turn_cpu_frac'), '.2f')} of a CPU, "
                f"{f(med(runs, 'pack', 'turn_on_busy'), '.2f')} of it on busy cores")
    if case == "cyc":
        return (f"jitter threads {f(med(runs, 'cyctag', 'jitter'), '.0f')}/{f(med(runs, 'cyctag', 'threads'), '.0f')}, "
                f"max {f(med(runs, 'cyclic', 'max_us'), '.0f')} µs, over 20 ms {f(med(runs, 'cyclic', 'overflows'), '.0f')}")
    return ""


def main():
    data = load(sys.argv[1])
    rng = random.Random(1)
    print("# Jitter wake-up latency and server-like loads, packing on / off / unpatched (bench/latency)\n")
    print(
        "Each case ran in one boot of the patched kernel with packing on and off alternating "
        "(`kernel.sched_pack_jitter`), and in one boot of the unpatched kernel (base), QEMU 10, "
        "`-icount shift=3` (8 vCPUs: 2 sockets x 2 cores x 2 threads). Latency: actual minus "
        "requested wake-up (tsbench's absolute `clock_nanosleep`, or cyclictest's), the runs of a "
        "case pooled; milliseconds; a figure in brackets has fewer than "
        f"{BEYOND} pooled samples beyond it and is not a measurement of that percentile. The p99 "
        f"ratio's 95 % interval comes from {RESAMPLES} bootstrap resamples of the runs. Other "
        "figures are medians over the runs. Rerun: `sudo bench/latency/run` (`--cases` for some).\n"
    )
    for case, title in CASES.items():
        keys = sorted({k[1] for k in data if k[0] == case})
        if not keys:
            continue
        print(f"## {case}: {title}\n")
        print("| N | kernel | runs | samples | p50 | p99 | p99.9 | max | p99 on/off | 95 % interval | "
              "jitter on busy cores | spare-core idle | hog ops/s | hog vs off | packed | "
              "fallback (idle/full) | lb refused | notes |")
        print("|---" * 18 + "|")
        for n in keys:
            runs = {p: list(data.get((case, n, p), {}).values()) for p in PACKS}
            hists = {p: [r["hist"] for r in runs[p] if "hist" in r] for p in PACKS}
            ratio = ci = "–"
            if hists["on"] and hists["off"]:
                ratio, ci = p99_ratio(rng, hists["on"], hists["off"])
            hog_off = med(runs["off"], "pack", "hog_ops_s")
            for p in PACKS:
                rs = runs[p]
                if not rs:
                    continue
                h = pool(hists[p])
                hog = med(rs, "pack", "hog_ops_s")
                # cyclictest's threads cannot sample themselves: the schedstat bound (>=).
                share = med(rs, "pack", "share_busy_ss" if case == "cyc" else "share_busy") if case != "msg" else None
                fb = counter(rs, "fallback")
                if fb != "n/a":
                    fb += f" ({counter(rs, 'fallback_idle')}/{counter(rs, 'fallback_full')})"
                lat = (f"{sum(h.values())} | {fmt(h, 0.5)} | {fmt(h, 0.99)} | {fmt(h, 0.999)} | "
                       f"{max(h) / 1000 + 0.01:.2f}") if h else "0 | – | – | – | –"
                print(f"| {n} | {p} | {len(rs)} | {lat} | {ratio if p == 'on' else ''} | "
                      f"{ci if p == 'on' else ''} | {f(share, '.3f')} | "
                      f"{f(med(rs, 'pack', 'spare_idle'), '.4f')} | {f(hog, '.0f') if hog else 'n/a'} | "
                      f"{f(hog / hog_off, '.3f') if hog and hog_off else 'n/a'} | {counter(rs, 'packed')} | "
                      f"{fb} | {counter(rs, 'lb_refused')} | {extra(case, rs, runs['off'])} |")
        print()
    print(
        "Jitter on busy cores: share of the jitter threads' CPU time on the hogs' cores, SMT "
        "siblings included; for cyclictest, whose threads cannot sample themselves, the "
        "conservative /proc/schedstat bound (1 - run time on spare cores / cyclictest's CPU time, "
        "a lower bound). "
        "Spare-core idle: idle share of the other cores (/proc/stat). Counters: deltas of debugfs "
        "sched/pack_jitter/stats over the window (n/a on the unpatched kernel). Max: the largest "
        "bucket's upper bound."
    )


if __name__ == "__main__":
    main()
