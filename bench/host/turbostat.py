#!/usr/bin/env python3
"""Parse what turbostat printed during one phase of bench/host/run.

turbostat (Debian's linux-cpupower; 2022.10.04 in Debian 12) prints, every interval, a header
line of tab-separated column names, a system summary row and one row per CPU.  Its columns
depend on the machine: it silently leaves out what the CPU cannot count (no CPU%c6 on AMD, no
PkgWatt without RAPL), so every figure is optional here.  Rows are cut short on purpose: a
core-scope column (CPU%c6) is printed only on the first thread of a core, a package-scope one
(PkgWatt) only on the first CPU of a package, and they come last, so a short row fills the
header's leading columns.  The summary row has "-" in Core and CPU; without those columns (as
with --Summary) it is the first row after each header.  When turbostat cannot run (no MSRs in a
guest, not root) it prints "turbostat: REASON" and exits: that reason is what the report says.

    python3 turbostat.py FILE     prints the phase's averages, or why there are none
"""
import re
import sys

# What the report shows, in this order; any may be missing on a given machine.
COLUMNS = ("Busy%", "Bzy_MHz", "CPU%c1", "CPU%c6", "PkgWatt")
TOPOLOGY = ("Package", "Die", "Node", "Core", "CPU")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


class Parsed:
    """One turbostat output: samples of the summary row and of each CPU, and its complaints."""

    def __init__(self):
        self.columns = []  # the last header's columns
        self.summary = []  # per interval: {column: value}
        self.cpus = []  # per interval: {cpu: {column: value}} (empty without a CPU column)
        self.errors = []  # lines turbostat printed instead of figures
        self.bad_rows = 0  # rows that fit no header (cut off when turbostat was stopped)

    def available(self):
        return bool(self.summary)

    def reason(self):
        """Why there are no figures: turbostat's own words where it gave any."""
        if self.summary:
            return None
        # Its last own complaint is the fatal one; others come first ("sh: /sbin/modprobe: not
        # found" from the modprobe it tries in a guest without MSRs).
        own = [e for e in self.errors if e.startswith("turbostat: ")]
        if own:
            return own[-1][len("turbostat: "):]
        return self.errors[0] if self.errors else "it printed no measurements"

    def averages(self):
        """The mean of each column of COLUMNS over the summary samples (None where absent)."""
        out = {}
        for c in COLUMNS:
            v = [s[c] for s in self.summary if c in s]
            out[c] = sum(v) / len(v) if v else None
        return out

    def busy_cpu_mhz(self, min_busy=50.0):
        """Mean Bzy_MHz of the CPUs more than @min_busy % busy in an interval (the hogs' CPUs:
        what turbo gives the busy cores, which the summary dilutes), or None."""
        v = [
            row["Bzy_MHz"]
            for interval in self.cpus
            for row in interval.values()
            if row.get("Busy%", 0) > min_busy and "Bzy_MHz" in row
        ]
        return sum(v) / len(v) if v else None


def _is_header(fields):
    return any(f in COLUMNS or f in TOPOLOGY or f.endswith(("%", "MHz", "Watt")) for f in fields) and not any(
        _NUMBER.match(f) for f in fields
    )


def _is_row(fields):
    return all(f == "-" or _NUMBER.match(f) for f in fields)


def parse(text):
    p = Parsed()
    blocks = []  # [header, rows]: a header and the rows that follow it
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        if _is_header(fields):
            blocks.append([fields, []])
            p.columns = fields
        elif not _is_row(fields):
            # turbostat's complaints ("turbostat: no /dev/cpu/0/msr, ..."): they say why the
            # figures are missing.
            p.errors.append(line.strip())
        elif not blocks or len(fields) > len(blocks[-1][0]):
            p.bad_rows += 1
        else:
            blocks[-1][1].append(fields)
    # Without a CPU column the summary is the first row after each header; a header printed
    # only once means --Summary, where every row is a summary.
    every_row_summary = len(blocks) == 1
    for header, rows in blocks:
        for i, fields in enumerate(rows):
            row = dict(zip(header, fields))
            values = {k: float(v) for k, v in row.items() if k not in TOPOLOGY and v != "-"}
            if "CPU" in header:
                is_summary = row.get("CPU") == "-"
            else:
                is_summary = i == 0 or every_row_summary
            if is_summary:
                if len(fields) < len(header):
                    # A summary row always has every column: a short one was cut off when
                    # turbostat was stopped.
                    p.bad_rows += 1
                    continue
                p.summary.append(values)
                p.cpus.append({})
            elif "CPU" in row and p.cpus and row["CPU"] != "-":
                p.cpus[-1][int(row["CPU"])] = values
    return p


def main():
    p = parse(open(sys.argv[1]).read())
    if not p.available():
        print(f"turbostat unavailable: {p.reason()}")
        return 1
    avg = p.averages()
    print(" ".join(f"{c}={'-' if avg[c] is None else f'{avg[c]:.2f}'}" for c in COLUMNS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
