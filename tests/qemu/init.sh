#!/bin/sh
# PID 1 of the test initramfs: mount what the tests read, run /suite, power off.
# Each suite line is "NAME VARIANTS COMMAND", VARIANTS being patched, baseline or both; the
# lines for the booted variant run, and their output goes to the console between markers
# that tests/qemu/run-kernel-tests parses.
export PATH=/bin:/sbin:/tests
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t debugfs debugfs /sys/kernel/debug
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
export tsvariant
# pack= lets the harness check that a baseline booted with packing switched off really is.
pack=$(cat /proc/sys/kernel/sched_pack_jitter 2>/dev/null || echo none)
echo "TS-BEGIN variant=$tsvariant cpus=$(nproc) kernel=$(uname -r) pack=$pack"
while read -r name variants cmd; do
	case "$name" in '' | '#'*) continue ;; esac
	[ "$variants" = both ] || [ "$variants" = "$tsvariant" ] || continue
	echo "TS-TEST $name"
	timeout "${tstimeout:-300}" sh -c "$cmd" </dev/null 2>&1
	echo "TS-END $name rc=$?"
done </suite
echo "TS-DONE"
reboot -f
