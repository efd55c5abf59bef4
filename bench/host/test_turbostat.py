#!/usr/bin/env python3
"""Unit tests of bench/host/turbostat.py on recorded-style turbostat output (testdata/).

The samples follow Debian 12's turbostat (linux-cpupower 6.1, turbostat 2022.10.04) as the
kit runs it: --quiet --show Core,CPU,Busy%,Bzy_MHz,CPU%c1,CPU%c6,PkgWatt --interval 1.  Run by
`meson test` (suite unit) and by hand: python3 bench/host/test_turbostat.py
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import turbostat  # noqa: E402


def load(name):
    with open(os.path.join(HERE, "testdata", name)) as f:
        return turbostat.parse(f.read())


class Intel(unittest.TestCase):
    """Header every interval, summary row '-', sibling and package columns cut short."""

    def setUp(self):
        self.p = load("intel-xeon.txt")

    def test_one_summary_per_interval(self):
        self.assertEqual(len(self.p.summary), 3)
        self.assertTrue(self.p.available())
        self.assertIsNone(self.p.reason())

    def test_averages_of_the_summary_rows(self):
        a = self.p.averages()
        self.assertAlmostEqual(a["Busy%"], (26.11 + 26.31 + 26.21) / 3, places=6)
        self.assertAlmostEqual(a["Bzy_MHz"], 4490.0, places=6)
        self.assertAlmostEqual(a["CPU%c1"], (1.35 + 1.21 + 1.28) / 3, places=6)
        self.assertAlmostEqual(a["CPU%c6"], (71.80 + 71.95 + 71.90) / 3, places=6)
        self.assertAlmostEqual(a["PkgWatt"], (38.42 + 38.90 + 38.66) / 3, places=6)

    def test_short_rows_fill_the_leading_columns(self):
        cpus = self.p.cpus[0]
        self.assertEqual(sorted(cpus), list(range(8)))
        self.assertEqual(cpus[4], {"Busy%": 2.41, "Bzy_MHz": 4497.0, "CPU%c1": 97.41})
        self.assertEqual(cpus[1]["CPU%c6"], 99.70)
        self.assertNotIn("PkgWatt", cpus[2])
        self.assertEqual(cpus[0]["PkgWatt"], 38.42)

    def test_busy_cpus_frequency(self):
        # CPUs 0 and 2 (the hogs) are the only ones above 50 % busy: 4500 MHz in each interval.
        self.assertEqual(self.p.busy_cpu_mhz(), 4500.0)


class Amd(unittest.TestCase):
    """No CPU%c6 column at all: the figure is missing, the others are there."""

    def test_missing_column(self):
        p = load("amd-epyc.txt")
        a = p.averages()
        self.assertEqual(len(p.summary), 2)
        self.assertIsNone(a["CPU%c6"])
        self.assertAlmostEqual(a["PkgWatt"], (41.20 + 41.05) / 2, places=6)
        self.assertAlmostEqual(a["Bzy_MHz"], 3879.0, places=6)
        self.assertAlmostEqual(p.busy_cpu_mhz(), 3890.0, places=6)


class SummaryOnly(unittest.TestCase):
    """--Summary without RAPL: one header, every row a summary, no PkgWatt, no CPU rows."""

    def test_every_row_is_a_summary(self):
        p = load("summary-no-pkgwatt.txt")
        a = p.averages()
        self.assertEqual(len(p.summary), 4)
        self.assertIsNone(a["PkgWatt"])
        self.assertAlmostEqual(a["Busy%"], (50.40 + 50.52 + 50.38 + 50.44) / 4, places=6)
        self.assertIsNone(p.busy_cpu_mhz())


class Stopped(unittest.TestCase):
    """Killed mid-interval, with a warning among the rows: the cut summary row is dropped."""

    def test_cut_row_and_warning(self):
        p = load("intel-cut.txt")
        self.assertEqual(len(p.summary), 2)
        self.assertEqual(p.bad_rows, 1)
        self.assertEqual(len(p.errors), 1)
        self.assertIn("msr offset 0x611", p.errors[0])
        self.assertAlmostEqual(p.averages()["PkgWatt"], (38.42 + 38.90) / 2, places=6)


class Unavailable(unittest.TestCase):
    """No figures: the reason is turbostat's own message, without its 'turbostat: ' prefix."""

    def check(self, name, reason):
        p = load(name)
        self.assertFalse(p.available())
        self.assertEqual(p.reason(), reason)
        self.assertEqual(p.averages(), dict.fromkeys(turbostat.COLUMNS))

    def test_guest_without_msr(self):
        self.check("guest-no-msr.txt", 'no /dev/cpu/0/msr, Try "# modprobe msr" : No such file or directory')

    def test_guest_modprobe_noise_first(self):
        self.check("guest-modprobe.txt", 'no /dev/cpu/0/msr, Try "# modprobe msr" : No such file or directory')

    def test_not_permitted(self):
        self.check("no-rlimit.txt", "Failed to set rlimit: Operation not permitted")

    def test_not_supported(self):
        self.check("not-supported.txt", "Processor not supported")

    def test_cpuid(self):
        self.check("cpuid-no-msr.txt", "CPUID: no MSR")

    def test_empty(self):
        self.check("empty.txt", "it printed no measurements")


if __name__ == "__main__":
    unittest.main(verbosity=1)
