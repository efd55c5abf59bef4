#!/usr/bin/env python3
"""bench/cost/report.py RESULTS.CSV SHIFT: the wake-up cost table of bench/cost/run, as Markdown.

Per CPU count and load: the mean and median time of one ->select_task_rq() call for a jitter
task (median over the rounds of each round's figure), packing on, off (same patched kernel,
same boot) and on the unpatched kernel; the ratios on/off and on/unpatched; and the
calibration: the calibrated kernel (1000 ns injected per placement) minus the patched one.
"""
import csv
import statistics
import sys
from collections import defaultdict


def main():
    path, shift = sys.argv[1], sys.argv[2]
    rows = list(csv.DictReader(open(path)))
    by = defaultdict(list)
    for r in rows:
        if not r["n"] or r["n"] == "0":
            continue
        by[(r["kernel"], int(r["cpus"]), r["case"], r["pack"])].append(r)

    def med(key, field):
        vals = [float(r[field]) for r in by.get(key, []) if r[field] not in ("", "-1")]
        return statistics.median(vals) if vals else None

    def samples(key):
        return sum(int(r["n"]) for r in by.get(key, []))

    def fmt(v, unit=""):
        return "–" if v is None else f"{v:.0f}{unit}"

    def ratio(a, b):
        return "–" if a is None or b is None or b == 0 else f"{a / b:.2f}"

    cpus = sorted({k[1] for k in by})
    out = []
    out.append("# Wake-up path cost of packing (bench/cost)\n")
    out.append(
        "Time of one `->select_task_rq()` call for a jitter task at wake-up, measured by the "
        "benchmark-only patch `bench/cost/measure-select.patch` in guests with N CPUs in one "
        f"LLC (QEMU 10, `-icount shift={shift}`: the guest clock counts instructions, "
        f"2^{shift} ns each; 40 ns buckets). Eight jitter tasks do 50 us of work a period (20 ms unless `--period-us` said otherwise); "
        "*busy*: four hogs on cores spread over the LLC; *idle*: nothing else runs. Each "
        "figure is the median over the rounds of that round's mean (or median); *on/off* "
        "compares packing on and off in the same boot of the patched kernel, *on/unp.* the "
        "unpatched kernel. Rerun: `sudo bench/cost/run` (report only: `--report-only`).\n"
    )
    out.append(
        "The median (p50) is the figure to read. Under `-icount` all vCPUs share one "
        "instruction budget: a call during which QEMU runs other vCPUs lasts their "
        "instructions too, which inflates the tail and so the mean, most with busy vCPUs "
        "(the p99 of every busy case sits at the histogram's 160 us ceiling). The median "
        "call is not interrupted: the calibration below adds the same known instruction "
        "count to it with and without hogs.\n"
    )
    out.append(
        "| CPUs | load | wake-ups (on) | p50 on | p50 off | p50 unpatched | p50 on/off | "
        "p50 on/unp. | mean on | mean off | mean unp. |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in cpus:
        for case in ("busy", "idle"):
            on, off, unp = ("patched", n, case, "on"), ("patched", n, case, "off"), (
                "unpatched", n, case, "-")
            m_on, m_off, m_unp = med(on, "mean_ns"), med(off, "mean_ns"), med(unp, "mean_ns")
            p_on, p_off, p_unp = med(on, "p50_ns"), med(off, "p50_ns"), med(unp, "p50_ns")
            out.append(
                f"| {n} | {case} | {samples(on)} | {fmt(p_on, ' ns')} | {fmt(p_off, ' ns')} | "
                f"{fmt(p_unp, ' ns')} | {ratio(p_on, p_off)} | {ratio(p_on, p_unp)} | "
                f"{fmt(m_on, ' ns')} | {fmt(m_off, ' ns')} | {fmt(m_unp, ' ns')} |"
            )
    out.append("\n## Calibration\n")
    expect = 201 * 2 ** int(shift)
    out.append(
        "The calibrated kernel is the patched one with a 100-iteration empty loop at the top "
        "of every jitter placement (`bench/cost/calibrate.patch`). In the built object (-O2, "
        "`kernel/config/bench.config`) the loop is `mov $0x64,%eax`, then `sub $0x1,%eax; jne` "
        f"a hundred times: 201 instructions, {expect} ns at `-icount shift={shift}`. The method measures the path "
        f"alone if the difference comes out at {expect} ns, with and without hogs.\n"
    )
    out.append(
        "| CPUs | load | p50 calibrated − patched | mean calibrated − patched | "
        "p50 measures the path alone |"
    )
    out.append("|---|---|---|---|---|")
    for n in cpus:
        for case in ("busy", "idle"):
            on, cal = ("patched", n, case, "on"), ("calibrated", n, case, "on")
            a, b = med(cal, "mean_ns"), med(on, "mean_ns")
            c, d = med(cal, "p50_ns"), med(on, "p50_ns")
            delta = None if c is None or d is None else c - d
            ok = "–" if delta is None else (
                "yes" if abs(delta - expect) <= 0.2 * expect else "**no**: that row is not the path alone")
            out.append(
                f"| {n} | {case} | {fmt(delta, ' ns')} | "
                f"{fmt(None if a is None or b is None else a - b, ' ns')} | {ok} |"
            )
    out.append("\n## Packed placements and fall-backs (patched, packing on, summed)\n")
    out.append("| CPUs | load | packed | fall-backs |")
    out.append("|---|---|---|---|")
    for n in cpus:
        for case in ("busy", "idle"):
            rs = by.get(("patched", n, case, "on"), [])
            out.append(
                f"| {n} | {case} | {sum(int(r['packed']) for r in rs)} | "
                f"{sum(int(r['fallback']) for r in rs)} |"
            )
    print("\n".join(out))


if __name__ == "__main__":
    main()
