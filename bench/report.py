#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Turn the BENCH lines of the bench guests' consoles into report.md, results.csv and gnuplot
scripts (bench/run runs gnuplot on them).  Standard library only."""

import argparse
import csv
import datetime
import math
import os
import re
import statistics


def parse_console(path, kernel):
    """Every 'BENCH what k=v ...' line of a console, as dicts (what, kernel added)."""
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip().replace("\r", "")
            if not line.startswith("BENCH "):
                continue
            parts = line.split()
            d = {"what": parts[1], "boot": kernel}
            for kv in parts[2:]:
                if "=" in kv:
                    k, v = kv.split("=", 1)
                    d[k] = v
            rows.append(d)
    return rows


def num(d, k):
    try:
        v = float(d.get(k, "nan"))
    except ValueError:
        return math.nan
    return v


def fmt(v, spec=".3f"):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return format(v, spec)


def ratio(a, b):
    if a is None or b is None or math.isnan(a) or math.isnan(b) or b == 0:
        return math.nan
    return a / b


def fallbacks(r):
    """The fall-back count, with its split (no busy core / busy cores full) where the kernel has it."""
    total, idle, full = r.get("fallback"), r.get("fallback_idle"), r.get("fallback_full")
    if idle is None or full is None or str(idle) == "-1":
        return total
    return f"{total} ({idle}/{full})"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    for a in ("out", "console-patched", "console-baseline", "failures", "kernel-patched",
              "kernel-baseline", "icount", "quick", "command", "elapsed", "host-patched",
              "host-baseline", "host-daemon", "console-daemon", "daemon-icount", "commit", "window", "warmup", "run-us", "period-us",
              "msg-repeats", "pipe-rounds", "repeats", "qemu", "started"):
        ap.add_argument("--" + a, required=True)
    a = ap.parse_args()
    rows = (parse_console(a.console_patched, "patched") +
            parse_console(a.console_baseline, "baseline") +
            parse_console(a.console_daemon, "daemon"))
    by = {}
    for r in rows:
        by.setdefault((r["what"], r.get("label", "-")), []).append(r)

    def one(what, label):
        """The row of a case; for a case run several times (labels LABEL.1, LABEL.2, ...), the
        median of each numeric value over the runs and the first run's text values."""
        v = by.get((what, label))
        if v:
            return v[-1]
        runs = [rs[-1] for (w, lb), rs in by.items() if w == what and lb.rsplit(".", 1)[0] == label
                and lb != label]
        if not runs:
            return None
        agg = dict(runs[0])
        agg["runs"] = len(runs)
        for k in runs[0]:
            vals = [r.get(k) for r in runs]
            try:
                nums = [float(x) for x in vals]
            except (TypeError, ValueError):
                continue
            if any(math.isnan(x) for x in nums):
                agg[k] = "nan"
                continue
            m = statistics.median(nums)
            agg[k] = str(int(round(m))) if all(re.fullmatch(r"-?\d+", str(x)) for x in vals) else f"{m:.4f}"
        return agg

    # results.csv: long format, one value a row.
    with open(os.path.join(a.out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["boot", "what", "label", "key", "value"])
        for r in rows:
            if r["what"] in ("res", "tl"):
                continue
            for k, v in r.items():
                if k not in ("what", "boot", "label"):
                    w.writerow([r["boot"], r["what"], r.get("label", "-"), k, v])

    md = []
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    shift = int(a.icount)
    md.append("# TurboSched benchmark report\n")
    if a.quick == "1":
        md.append("**Quick run (`--quick`): short windows and a small daemon bench; a smoke "
                  "test, not the published figures.**\n")
    md.append(f"- run started {a.started}, report made {now}; commit `{a.commit}`")
    md.append(f"- rerun: `{a.command}` (took {a.elapsed} s on the host, guests: patched "
              f"{a.host_patched} s, baseline {a.host_baseline} s, daemon {a.host_daemon} s)")
    md.append(f"- kernels: patched `{a.kernel_patched}`, baseline (unpatched 6.12) "
              f"`{a.kernel_baseline}` (kernel/build cache keys)")
    md.append(f"- emulator: {a.qemu}" + (
        "" if " 7." not in a.qemu else
        " -- **Debian 12's QEMU 7.2: its -icount round robin starves the vCPU after a busy "
        "one (notes, \"Emulator\"); latency and throughput figures measure that, not "
        "the kernel**"))
    md.append(f"- guest: x86_64, QEMU TCG, 8 vCPUs = 2 sockets x 2 cores x 2 SMT threads, "
              f"one NUMA node per socket; `-icount shift={shift},sleep=off` (single-threaded "
              f"TCG, guest time = instructions x {2 ** shift} ns, i.e. "
              f"{1000 // (2 ** shift)} M instructions per guest second shared by all vCPUs), "
              f"so host load does not change the figures")
    md.append(f"- packing cases: N hogs (pinned one per core, spread over the nodes) and 2N "
              f"jitter threads ({a.run_us} µs of CPU every {a.period_us} µs, tagged "
              f"util_max = 0; jitter thread i starts on the node of hog i mod N, then may run "
              f"anywhere), {a.warmup} s warm-up, {a.window} s window; on = patched, "
              f"kernel.sched_pack_jitter=1; off = patched, sysctl 0; base = unpatched kernel. "
              f"On and off alternate in one boot; the baseline boots right after. Every case "
              f"ran {a.repeats} time(s); the tables give the median of each value over the runs "
              f"(results.csv has every run, labels LABEL.1, LABEL.2, ...).")
    md.append("")
    fails = open(a.failures).read().strip() if os.path.exists(a.failures) else ""
    if fails:
        md.append("**Cases that failed in the guest:** " + "; ".join(fails.splitlines()) + "\n")

    # ---- packing ----
    ns = sorted({int(r["hogs"]) for r in rows if r["what"] == "pack" and
                 r.get("label", "").startswith(("on-", "off-", "base-"))})
    md.append("## Packing: tsbench, N hogs + 2N jitter threads\n")
    head = ["N", "kernel", "jitter on busy cores", "spare-core idle", "cores woken",
            "hog ops/s", "hog vs off", "jitter ops/s", "jitter vs off", "lat p50 µs",
            "lat p99 µs", "lat max µs", "overruns", "packed", "fallback (idle/full)",
            "lb refused"]
    trs, targets, plot = [], [], []
    for n in ns:
        off = one("pack", f"off-{n}")
        prow = {}
        for side in ("on", "off", "base"):
            r = one("pack", f"{side}-{n}")
            if not r:
                trs.append([n, side] + ["missing"] * (len(head) - 2))
                continue
            prow[side] = r
            trs.append([n, side, fmt(num(r, "share_busy")), fmt(num(r, "spare_idle"), ".4f"),
                        r.get("cores_woken"), fmt(num(r, "hog_ops_s"), ".0f"),
                        fmt(ratio(num(r, "hog_ops_s"), num(off, "hog_ops_s") if off else None)),
                        fmt(num(r, "jitter_ops_s"), ".0f"),
                        fmt(ratio(num(r, "jitter_ops_s"),
                                  num(off, "jitter_ops_s") if off else None)),
                        fmt(num(r, "lat_p50_us"), ".0f"), fmt(num(r, "lat_p99_us"), ".0f"),
                        fmt(num(r, "lat_max_us"), ".0f"),
                        f"{r.get('overruns')}/{r.get('periods')}",
                        r.get("packed"), fallbacks(r), r.get("lb_refused")])
        plot.append((n, prow))
        on = prow.get("on")
        if on and off:
            targets.append((n, on, off))
    md.append(table(head, trs))
    md.append("")
    md.append("Jitter on busy cores: share of the jitter threads' CPU time (sampled by "
              "themselves) on the hogs' cores, SMT siblings included. Spare-core idle: idle "
              "share of the other cores' CPUs (/proc/stat); n/a at N = 4, where every core has "
              "a hog. Cores woken: cores on which anything but idle ran in the window "
              "(/proc/schedstat, kernel threads included). Latency: actual minus requested "
              "wake-up of the jitter threads' absolute clock_nanosleep. Overruns: periods whose "
              "work ended after the next period start (no latency sample then). Counters: "
              "deltas over the window of debugfs sched/pack_jitter/stats (-1 = not present); "
              "a fall-back found no busy core it may use in the turbo domain (idle) or only "
              "busy cores without room (full).\n")
    md.append("![share](share.png) ![idle](idle.png)\n")
    md.append("![latency](latency.png) ![hog throughput](hog.png)\n")

    # Targets.
    md.append("### Targets (patched kernel, packing on vs off)\n")
    th = ["N", "≥ 95% on busy cores", "spare ≥ 99% idle", "p99 ≤ 2x off", "hog ≥ 0.97x off"]
    tr = []
    for n, on, off in targets:
        sb, si = num(on, "share_busy"), num(on, "spare_idle")
        p99r = ratio(num(on, "lat_p99_us"), num(off, "lat_p99_us"))
        hr = ratio(num(on, "hog_ops_s"), num(off, "hog_ops_s"))

        def mark(ok, text):
            return ("met: " if ok else "**missed**: ") + text

        tr.append([n, mark(sb >= 0.95, fmt(sb)),
                   "n/a (no spare core)" if math.isnan(si) else mark(si >= 0.99, fmt(si, ".4f")),
                   mark(p99r <= 2.0, fmt(p99r, ".2f") + "x"), mark(hr >= 0.97, fmt(hr) + "x")])
    md.append(table(th, tr))
    md.append("")

    # ---- control: the emulated machine's own wake-up delay per vCPU ----
    ctl = [(hj, one("pack", f"ctl-{hj}")) for hj in ("0-1", "0-2", "1-0", "3-4")]
    if any(r for _, r in ctl):
        md.append("### Control: wake-up lateness of the emulated machine, per vCPU\n")
        md.append("Packing off, one hog, the two jitter threads confined to one vCPU "
                  "(`tsbench --jitter-cpus`), so the scheduler has no choice to make: what "
                  "differs between the rows is the emulator's. The vCPU after a busy one in "
                  "QEMU's round robin (CPU 1 after 0, CPU 4 after 3) is the one to watch: on "
                  "x86_64 it is the hog's SMT sibling, where packing puts the jitter threads. "
                  "QEMU 7.2 starves it under -icount (wake-ups milliseconds late); QEMU 8.1 and "
                  "later share the budget (bench/notes.md, \"Emulator\").\n")
        what = {"0-1": "hog's sibling, next in the round robin",
                "0-2": "another core of the hog's node",
                "1-0": "hog's sibling, before it in the round robin",
                "3-4": "next in the round robin, other node, not a sibling"}
        trs = []
        for hj, r in ctl:
            hog, jit = hj.split("-")
            if not r:
                trs.append([hog, jit, what[hj]] + ["missing"] * 4)
                continue
            trs.append([hog, jit, what[hj], fmt(num(r, "lat_p50_us"), ".0f"),
                        fmt(num(r, "lat_p99_us"), ".0f"), fmt(num(r, "lat_max_us"), ".0f"),
                        f"{r.get('overruns')}/{r.get('periods')}"])
        md.append(table(["hog CPU", "jitter CPU", "where", "lat p50 µs", "lat p99 µs",
                         "lat max µs", "overruns"], trs))
        md.append("")

    # ---- rt-app ----
    rt_ns = sorted({int(r["hogs"]) for r in rows if r["what"] == "pack" and
                    r.get("label", "").startswith("rt-")})
    if rt_ns:
        md.append("## rt-app: N hogs + 2N rt-app periodic tasks under `uclampset -M 0`\n")
        md.append("Same hogs; Debian's rt-app runs 2N periodic threads (same run time and "
                  "period) started by `uclampset -M 0 rt-app`, so they inherit util_max = 0. "
                  "rt-app threads cannot sample their CPU, so the share on busy cores is the "
                  "conservative /proc/schedstat estimate: 1 - (run time on spare cores, kernel "
                  "threads included) / (rt-app CPU time). Latency is rt-app's own wu_lat. "
                  "Jitter threads: how many of rt-app's threads the kernel counts as jitter "
                  "(/proc/PID/sched) just after the window.\n")
        head = ["N", "kernel", "jitter threads", "on busy cores (≥)", "spare-core idle", "cores woken",
                "hog ops/s", "hog vs off", "rt-app perf/s", "wu_lat p50 µs", "p99 µs",
                "max µs", "late periods", "packed", "fallback (idle/full)"]
        trs = []
        for n in rt_ns:
            off = one("pack", f"rt-off-{n}")
            for side in ("on", "off", "base"):
                r, lat = one("pack", f"rt-{side}-{n}"), one("rtlat", f"rt-{side}-{n}")
                if not r or not lat:
                    trs.append([n, side] + ["missing"] * (len(head) - 2))
                    continue
                tg = one("rttag", f"rt-{side}-{n}")
                tagged = f"{tg.get('jitter')}/{tg.get('threads')}" if tg else "n/a"
                trs.append([n, side, tagged, fmt(num(r, "share_busy_ss")),
                            fmt(num(r, "spare_idle"), ".4f"), r.get("cores_woken"),
                            fmt(num(r, "hog_ops_s"), ".0f"),
                            fmt(ratio(num(r, "hog_ops_s"), num(off, "hog_ops_s") if off else None)),
                            fmt(num(lat, "perf_per_s"), ".0f"), lat.get("lat_p50_us"),
                            lat.get("lat_p99_us"), lat.get("lat_max_us"),
                            f"{lat.get('overruns')}/{lat.get('periods')}", r.get("packed"),
                            fallbacks(r)])
        md.append(table(head, trs))
        md.append("")

    # ---- messaging overhead ----
    msum = {(r["boot"], r["label"]): r for r in rows if r["what"] == "msgsum"}
    if msum:
        md.append("## Overhead without jitter tasks: tsmsg (messaging and pipe ping-pong)\n")
        md.append(f"`msg`: hackbench-style, 2 groups of 10 senders and 10 receivers over AF_UNIX "
                  f"sockets, 100-byte messages. `pipe`: `perf bench sched pipe`-style, two "
                  f"processes passing one byte back and forth {a.pipe_rounds} times (two "
                  f"wake-ups a round, neither pinned, so every wake-up goes through CFS's CPU "
                  f"selection). {a.msg_repeats} repeats per kernel and case, median. Noise: "
                  f"-icount makes guest time instruction-counted, so the spread below is the "
                  f"workload's own (scheduling order), not the host's. On the patched kernel "
                  f"the plain cases have no tagged task (static key off); `-key` keeps one "
                  f"sleeping tagged task so that the key is on and every wake-up takes the "
                  f"packing check.\n")
        head = ["workload", "kernel", "case", "runs", "median s", "min s", "max s",
                "vs baseline"]
        trs = []
        for w in ("msg", "pipe"):
            base = msum.get(("baseline", w))
            for k in (("baseline", w), ("patched", w), ("patched", w + "-key")):
                r = msum.get(k)
                if not r:
                    continue
                trs.append([w, k[0], k[1], r.get("runs"), fmt(num(r, "median_s"), ".4f"),
                            fmt(num(r, "min_s"), ".4f"), fmt(num(r, "max_s"), ".4f"),
                            fmt(ratio(num(r, "median_s"),
                                      num(base, "median_s") if base else None), ".4f")])
        md.append(table(head, trs))
        md.append("\nTarget: within 1% of the baseline (ratio ≤ 1.01).\n")

    # ---- daemon ----
    dm = {r["what"]: r for r in rows if r["what"].startswith("daemon-")}
    if dm:
        md.append("## Daemon: turboschedd in the patched guest\n")
        md.append("tsdaemon starts `turboschedd --foreground` with one rule (comm = tsd-match, "
                  "re-check every 30 s) and waits for READY=1. Its own boot of the patched kernel, "
                  f"`-icount shift={a.daemon_icount}` ({1000 // 2 ** int(a.daemon_icount)} M "
                  "instructions per guest second for the whole guest: still slower than one "
                  "core of current hardware); all times are guest times.\n")
        trs = []
        s = dm.get("daemon-start")
        if s:
            trs.append(["start", f"READY=1 after {s.get('ready_ms')} ms, RSS {s.get('rss_kib')} KiB", ""])
        lat = dm.get("daemon-latency")
        if lat:
            p99 = num(lat, "p99_us")
            trs.append(["exec → tagged", f"{lat.get('execs')} execs ({lat.get('missed')} not "
                        f"tagged within 5 s): p50 {lat.get('p50_us')} µs, p90 {lat.get('p90_us')} "
                        f"µs, p99 {lat.get('p99_us')} µs, max {lat.get('max_us')} µs",
                        ("met" if p99 < 10000 else "**missed**") + " (p99 < 10 ms)"])
        st = dm.get("daemon-storm")
        if st:
            trs.append(["storm", f"{st.get('procs')} processes in {st.get('seconds')} s "
                        f"({st.get('procs_per_s')}/s), {st.get('long_lived')} lived "
                        f"{st.get('long_ms')} ms: {st.get('long_tagged')} tagged, "
                        f"{st.get('long_missed')} missed, {st.get('failed')} failed; "
                        f"{st.get('events')} events, ENOBUFS rescans {st.get('enobufs_rescans')}; "
                        f"{st.get('late_events')} events done later than 10 ms; daemon CPU "
                        f"{st.get('daemon_cpu_ms')} ms ({st.get('daemon_cpu_pct')}% of the "
                        f"storm), runnable but waiting {st.get('daemon_wait_ms')} ms",
                        ("met" if st.get("long_missed") == "0" and st.get("failed") == "0"
                         else "**missed**") + " (none living past 50 ms missed)"])
        idle = dm.get("daemon-idle")
        if idle:
            # A window of Q seconds holds floor(Q/R) or floor(Q/R) + 1 re-checks of period R.
            # Process events (a kernel thread forking is one) are work, not idle cost: each
            # may wake the daemon once, several may share a wake-up.
            ev = num(idle, "events")
            ok = num(idle, "wakeups") <= num(idle, "expected_wakeups") + 1 + (0 if math.isnan(ev) else ev)
            trs.append(["idle", f"{idle.get('seconds')} s quiet: {idle.get('wakeups')} wake-ups "
                        f"(voluntary context switches; re-check every {idle.get('recheck_s')} s: "
                        f"{idle.get('expected_wakeups')} or one more by phase; process events "
                        f"meanwhile: {idle.get('events', 'n/a')}), "
                        f"{idle.get('preempted', 'n/a')} preemptions while running, "
                        f"{idle.get('cpu_ms')} ms CPU ({idle.get('cpu_pct')}%), RSS "
                        f"{idle.get('rss_kib')} KiB",
                        ("met" if ok else "**missed**") + " (no wake-ups beyond the re-check and the process events)"])
        tk = dm.get("daemon-tasks")
        if tk:
            rss = num(tk, "rss_kib")
            trs.append(["10 000 tasks", f"{tk.get('tasks')} tasks ({tk.get('procs')} x "
                        f"{tk.get('threads')} threads), all in the registry "
                        f"{tk.get('all_tagged_after_spawn_s')} s after the spawn; RSS "
                        f"{tk.get('rss_kib')} KiB (idle {tk.get('rss_idle_kib')}, peak "
                        f"{tk.get('hwm_kib')}); `turboschedctl tasks` {tk.get('ctl_tasks_ms')} ms "
                        f"median of 3 ({tk.get('ctl_tasks_ms_runs')}), {tk.get('ctl_tasks_lines')} "
                        f"lines, `ps -eLo tid,psr,comm` {tk.get('ps_ms', 'n/a')} ms "
                        f"({tk.get('ps_ms_runs', 'n/a')}), ratio {tk.get('ctl_tasks_over_ps', 'n/a')}; "
                        f"registry empty {tk.get('untracked_after_exit_s')} s after exit",
                        ("met" if rss < 4096 else "**missed**") + " (RSS < 4 MiB); "
                        + ("met" if num(tk, "ctl_tasks_over_ps") <= 1.5 else "**missed**")
                        + " (`tasks` within 1.5x of ps)"])
        sp = dm.get("daemon-stop")
        if sp:
            trs.append(["stop", f"SIGTERM → exit {sp.get('exit')} in {sp.get('stop_ms')} ms", ""])
        md.append(table(["part", "measured", "target"], trs))
        md.append("")
    elif a.quick != "1":
        md.append("## Daemon\n\nNo daemon figures in this run (see the failures above).\n")

    md.append("## Raw data\n")
    md.append("`results.csv` holds every value of every BENCH line (boot, what, label, key, "
              "value); the guest consoles stay in `out/bench/`.\n")
    notes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "notes.md")
    if os.path.exists(notes):
        md.append(open(notes).read())
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")

    # ---- plots ----
    with open(os.path.join(a.out, "pack.dat"), "w") as f:
        f.write("# N share_on share_off share_base idle_on idle_off idle_base "
                "p99_on p99_off p99_base hog_on hog_base\n")
        for n, p in plot:
            def g(side, k):
                r = p.get(side)
                v = num(r, k) if r else math.nan
                return "NaN" if math.isnan(v) else f"{v:.4f}"
            off_h = num(p["off"], "hog_ops_s") if "off" in p else math.nan
            hr = [ratio(num(p[s], "hog_ops_s"), off_h) if s in p else math.nan
                  for s in ("on", "base")]
            f.write(" ".join([str(n)] + [g(s, "share_busy") for s in ("on", "off", "base")] +
                             [g(s, "spare_idle") for s in ("on", "off", "base")] +
                             [g(s, "lat_p99_us") for s in ("on", "off", "base")] +
                             ["NaN" if math.isnan(x) else f"{x:.4f}" for x in hr]) + "\n")
    common = ("set terminal pngcairo size 640,400 font 'sans,10'\n"
              "set style data histogram\nset style histogram clustered gap 1\n"
              "set style fill solid 0.8 border -1\nset key top left\nset grid ytics\n"
              "set xlabel 'N hogs (2N jitter threads)'\n")
    plots = {
        "share": ("Jitter CPU time on busy cores (target 0.95 dashed)", "share", "[0:1.05]",
                  2, ["on", "off", "baseline"], 0.95),
        "idle": ("Idle share of the spare cores (target 0.99 dashed)", "idle share",
                 "[0:1.05]", 5, ["on", "off", "baseline"], 0.99),
        "latency": ("Jitter wake-up latency p99", "µs (guest time)", "[0:*]", 8,
                    ["on", "off", "baseline"], None),
        "hog": ("Hog throughput vs packing off (target 0.97 dashed)", "ratio", "[0:1.2]", 11,
                ["on", "baseline"], 0.97),
    }
    for name, (title, ylabel, yr, col, sides, target) in plots.items():
        line = (f"set arrow from graph 0, first {target} to graph 1, first {target} nohead "
                f"dashtype 2 lw 1.5\n" if target else "")
        using = ", ".join(f"'pack.dat' using {col + i}:xtic(1) title '{s}'"
                          for i, s in enumerate(sides))
        with open(os.path.join(a.out, name + ".gp"), "w") as f:
            f.write(common + line + f"set output '{name}.png'\nset title '{title}'\n"
                    f"set ylabel '{ylabel}'\nset yrange {yr}\nplot {using}\n")


if __name__ == "__main__":
    main()
