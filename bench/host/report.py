#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench/host/report.py DIR: the report of one bench/host/run, from the raw data in DIR.

DIR holds meta (key=value), phases ("K on|off"), phase-K.bench (tsbench's BENCH lines) and
phase-K.turbostat (what turbostat printed, or why it could not run).  Writes DIR/report.md,
DIR/results.csv (one row per phase) and, when gnuplot is there and turbostat measured,
DIR/power.png (frequency and package power per phase).  Standard library only.
"""
import csv
import importlib.util
import math
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import turbostat  # noqa: E402

# The pooled-histogram percentiles of bench/latency (quoted only with >= 100 samples beyond).
_spec = importlib.util.spec_from_file_location("latency_report", os.path.join(HERE, "..", "latency", "report.py"))
lat = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lat)

FIELDS = ("share_busy", "spare_idle", "hog_ops_s", "packed", "fallback", "fallback_idle", "fallback_full", "lb_refused")


def bench_lines(path):
    """{what: {k: v}} of a phase's BENCH lines (one pack line, one lathist line)."""
    out = {}
    for line in open(path, errors="replace"):
        parts = line.split()
        if len(parts) > 2 and parts[0] == "BENCH":
            out[parts[1]] = dict(kv.split("=", 1) for kv in parts[2:] if "=" in kv)
    return out


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def f(v, spec):
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def mean(vals):
    vals = [v for v in vals if v is not None and not math.isnan(v)]
    return statistics.mean(vals) if vals else math.nan


def counter(v):
    """A kernel counter; -1 means the stats file was not readable."""
    return "n/a" if v is None or math.isnan(v) or v < 0 else f"{v:.0f}"


def load(d):
    meta = dict(line.rstrip("\n").split("=", 1) for line in open(os.path.join(d, "meta")) if "=" in line)
    phases = []
    for line in open(os.path.join(d, "phases")):
        k, state = line.split()
        bench = bench_lines(os.path.join(d, f"phase-{k}.bench"))
        tpath = os.path.join(d, f"phase-{k}.turbostat")
        ts = turbostat.parse(open(tpath, errors="replace").read() if os.path.exists(tpath) else "")
        pack = bench.get("pack", {})
        row = {"phase": int(k), "packing": state}
        row.update({k2: num(pack.get(k2)) for k2 in FIELDS})
        row["hist"] = lat.parse_hist(bench.get("lathist", {}).get("h", ""))
        row["ts"] = ts
        row.update({c: v for c, v in ts.averages().items()})
        row["busy_mhz"] = ts.busy_cpu_mhz()
        phases.append(row)
    return meta, phases


def ms(h, q):
    """A percentile of a pooled histogram in ms, bracketed with fewer than 100 samples beyond."""
    return lat.fmt(h, q) if h else "n/a"


def main():
    d = sys.argv[1]
    meta, phases = load(d)
    if not phases:
        sys.exit(f"bench/host/report.py: no phase finished in {d}")
    ts_ok = [p for p in phases if p["ts"].available()]
    reason = None
    if not ts_ok:
        reason = phases[0]["ts"].reason() if os.path.exists(os.path.join(d, "phase-1.turbostat")) else "no output"
        state = meta.get("turbostat_state", "")
        if state.startswith("turbostat unavailable: "):
            reason = state[len("turbostat unavailable: "):]
    tcols = [c for c in turbostat.COLUMNS if any(not math.isnan(p.get(c) or math.nan) for p in ts_ok)]

    with open(os.path.join(d, "results.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        cols = ["phase", "packing", *FIELDS, "lat_samples", *turbostat.COLUMNS, "busy_cpus_bzy_mhz"]
        w.writerow(cols)
        for p in phases:
            w.writerow([p["phase"], p["packing"], *(p[k] for k in FIELDS), sum(p["hist"].values()),
                        *("" if p.get(c) is None else p[c] for c in turbostat.COLUMNS),
                        "" if p["busy_mhz"] is None else p["busy_mhz"]])

    md = ["# TurboSched on this machine: packing on vs off (bench/host/run)\n"]
    md.append(f"- machine: `{meta.get('host')}`, {meta.get('cpu_model') or 'CPU model unknown'}, "
              f"{meta.get('cpus')} CPUs, {meta.get('cores')} cores, {meta.get('packages')} package(s); "
              f"kernel `{meta.get('kernel')}`")
    md.append(f"- run {meta.get('started')} to {meta.get('finished', '(stopped early)')}: "
              f"`{meta.get('command')}`")
    md.append(f"- workload: tsbench, {meta.get('hogs')} hog(s) "
              f"({'pinned one per core' if meta.get('pin') == '1' else 'placed by the scheduler'}) + "
              f"{meta.get('jitter')} jitter threads (1000 µs of CPU every 10000 µs, util_max = 0); "
              f"each phase {meta.get('warmup')} s warm-up + {meta.get('phase_seconds')} s measured; "
              "packing (kernel.sched_pack_jitter) alternates on off off on ..., so that a slow drift "
              "(temperature, other load) meets both states alike")
    if meta.get("forced") == "1":
        md.append(f"- **the machine was not idle** (1-minute load {meta.get('load')} on {meta.get('cpus')} "
                  "CPUs, started with --yes): other work is in these figures")
    if reason:
        md.append(f"- turbostat unavailable: {reason}. The placement, throughput and latency figures "
                  "below still come from the kernel and tsbench; frequency and power need a real machine "
                  "(`apt-get install linux-cpupower`, run as root, `modprobe msr`)")
    else:
        md.append(f"- {meta.get('turbostat_state', 'turbostat')}: `--show "
                  "Core,CPU,Busy%,Bzy_MHz,CPU%c1,CPU%c6,PkgWatt --interval 1` over each measured "
                  "window, averaged per phase (summary row)")
    if meta.get("stats_readable") != "1":
        md.append("- the kernel's counters (/sys/kernel/debug/sched/pack_jitter/stats) were not readable: "
                  "n/a below (mount debugfs: `mount -t debugfs none /sys/kernel/debug`)")
    md.append("")

    def trow(vals):
        return [f(vals.get(c), ".0f" if c == "Bzy_MHz" else ".2f") for c in tcols] + (
            [f(vals.get("busy_mhz"), ".0f")] if "Bzy_MHz" in tcols else [])

    thead = [*tcols] + (["busy CPUs' Bzy_MHz"] if "Bzy_MHz" in tcols else [])
    head = ["jitter on busy cores", "spare-core idle", "hog ops/s", "hog vs off", "lat p50 ms", "lat p99 ms",
            "packed", "fallback (idle/full)", *thead]

    md.append("## Packing on vs off\n")
    md.append("| packing | phases | " + " | ".join(head) + " |")
    md.append("|---" * (len(head) + 2) + "|")
    hog_off = mean([p["hog_ops_s"] for p in phases if p["packing"] == "off"])
    for state in ("on", "off"):
        ps = [p for p in phases if p["packing"] == state]
        if not ps:
            continue
        h = lat.pool([p["hist"] for p in ps])
        agg = {c: mean([p.get(c) if p.get(c) is not None else math.nan for p in ps]) for c in tcols}
        agg["busy_mhz"] = mean([p["busy_mhz"] if p["busy_mhz"] is not None else math.nan for p in ps])
        hog = mean([p["hog_ops_s"] for p in ps])
        fb = f"{counter(sum(p['fallback'] for p in ps))} ({counter(sum(p['fallback_idle'] for p in ps))}/" \
             f"{counter(sum(p['fallback_full'] for p in ps))})"
        md.append(f"| {state} | {len(ps)} | {f(mean([p['share_busy'] for p in ps]), '.3f')} | "
                  f"{f(mean([p['spare_idle'] for p in ps]), '.4f')} | {f(hog, '.0f')} | "
                  f"{f(hog / hog_off if hog_off else math.nan, '.3f')} | {ms(h, 0.5)} | {ms(h, 0.99)} | "
                  f"{counter(sum(p['packed'] for p in ps))} | {fb} |" + "".join(f" {c} |" for c in trow(agg)))
    md.append("")
    md.append("Means over the phases of a state; latency pools the phases' histograms (10 µs buckets) "
              "and a figure in brackets has fewer than 100 samples beyond it, so it is not a measurement "
              "of that percentile. Counters are sums over the phases' windows. Jitter on busy cores: "
              "share of the jitter threads' CPU time on the hogs' cores (SMT siblings included). "
              "Spare-core idle: idle share of the other cores (/proc/stat). turbostat: Busy% and the "
              "C-state residencies average over all CPUs, Bzy_MHz is the busy-time weighted "
              "frequency, busy CPUs' Bzy_MHz that of the CPUs more than 50 % busy (the hogs'), "
              "PkgWatt the package power summed over packages.\n")

    md.append("## Per phase\n")
    head2 = ["jitter on busy cores", "spare-core idle", "hog ops/s", "lat p50 ms", "lat p99 ms", "packed",
             "fallback", *thead]
    md.append("| phase | packing | " + " | ".join(head2) + " |")
    md.append("|---" * (len(head2) + 2) + "|")
    for p in phases:
        md.append(f"| {p['phase']} | {p['packing']} | {f(p['share_busy'], '.3f')} | {f(p['spare_idle'], '.4f')} | "
                  f"{f(p['hog_ops_s'], '.0f')} | {ms(p['hist'], 0.5)} | {ms(p['hist'], 0.99)} | "
                  f"{counter(p['packed'])} | {counter(p['fallback'])} |" + "".join(f" {c} |" for c in trow(p)))
    md.append("")

    plot = ts_ok and "Bzy_MHz" in tcols
    if plot:
        with open(os.path.join(d, "power.dat"), "w") as fh:
            for p in ts_ok:
                fh.write(f"{p['phase']} {1 if p['packing'] == 'on' else 0} {p.get('Bzy_MHz') or 'NaN'} "
                         f"{p['busy_mhz'] or 'NaN'} {p.get('PkgWatt') if p.get('PkgWatt') is not None else 'NaN'}\n")
        gp = ("set terminal pngcairo size 720,420 font 'sans,10'\nset output 'power.png'\n"
              "set title 'Frequency and package power per phase (filled: packing on)'\n"
              "set termoption noenhanced\nset offsets 0.5, 0.5, 0, 0\n"
              "set xlabel 'phase'\nset ylabel 'MHz'\nset y2label 'PkgWatt'\nset ytics nomirror\n"
              "set y2tics\nset key bottom right\nset xtics 1\n"
              "plot 'power.dat' using 1:($2==1?$3:1/0) with points pt 7 lc 1 title 'Bzy_MHz, on', "
              "'' using 1:($2==0?$3:1/0) with points pt 6 lc 1 title 'Bzy_MHz, off', "
              "'' using 1:($2==1?$4:1/0) with points pt 9 lc 2 title 'busy CPUs, on', "
              "'' using 1:($2==0?$4:1/0) with points pt 8 lc 2 title 'busy CPUs, off', "
              "'' using 1:($2==1?$5:1/0) axes x1y2 with points pt 5 lc 3 title 'PkgWatt, on', "
              "'' using 1:($2==0?$5:1/0) axes x1y2 with points pt 4 lc 3 title 'PkgWatt, off'\n")
        with open(os.path.join(d, "power.gp"), "w") as fh:
            fh.write(gp)
        if shutil.which("gnuplot"):
            r = subprocess.run(["gnuplot", "power.gp"], cwd=d, capture_output=True, text=True)
            if r.returncode == 0:
                md.append("![frequency and power per phase](power.png)\n")
            else:
                md.append(f"(gnuplot failed: {r.stderr.strip()[:200]}; power.gp and power.dat are in {d})\n")
        else:
            md.append("(no plot: gnuplot is not installed, `apt-get install gnuplot-nox`, then "
                      f"`cd {d} && gnuplot power.gp`)\n")
    else:
        md.append(f"No plot of frequency and power: turbostat unavailable ({reason}).\n")

    md.append("## What to send back\n")
    md.append("The whole directory (`tar czf turbosched-kit.tgz DIR`): report.md, results.csv, power.png "
              "and the raw phase-K.bench / phase-K.turbostat files, plus `lscpu` and the BIOS power "
              "settings if known (turbo, C-states, energy/performance bias).\n")
    with open(os.path.join(d, "report.md"), "w") as fh:
        fh.write("\n".join(md))


if __name__ == "__main__":
    main()
