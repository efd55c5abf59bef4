# Sourced by tests/qemu/boot and tests/e2e/boot: what every test guest of an arch is.
#
# guest_qemu ARCH [THREADS] sets the array qemu (the QEMU command without kernel, initrd, disk or
# console options) and the string guest_append (what the kernel command line must hold).
# THREADS (ppc64le only) is the threads a core: 1 (the default), 2, 4 or 8; more than 1 needs
# QEMU 8.1+.
# guest_qemu_root DIR makes the qemu array run the QEMU unpacked under DIR (tests/qemu-backports).
# guest_splat is the extended regex of console lines that fail a boot.
guest_splat='(WARNING:|BUG:|Oops|Kernel panic|possible recursive locking|possible circular locking|inconsistent lock state|sleeping function called from invalid context|suspicious RCU usage|INFO: task .* blocked|UBSAN:|KASAN:)'

guest_qemu() {
	case "$1" in
	x86_64)
		# 2 sockets x 2 cores x 2 threads, one NUMA node per socket: real SMT siblings.
		qemu=(qemu-system-x86_64 -M q35 -cpu qemu64,vendor=GenuineIntel -accel tcg,thread=multi
			-smp 8,sockets=2,cores=2,threads=2 -m 1G
			-object memory-backend-ram,id=m0,size=512M -object memory-backend-ram,id=m1,size=512M
			-numa node,nodeid=0,cpus=0-3,memdev=m0 -numa node,nodeid=1,cpus=4-7,memdev=m1)
		# tsc=unstable keeps the kernel from enabling the sched_clock_stable static key at
		# late_initcall, the text poke during boot that QEMU 7.2's multi-threaded TCG most
		# often gets wrong (docs/known-problems.md, "stale int3"): measured with
		# tests/qemu/repro-stale-int3 --boot-only, 18 of 100 boots oopsed there without it,
		# 1 of 100 (elsewhere) with it.
		guest_append="console=ttyS0 tsc=unstable"
		;;
	ppc64le)
		local t=${2:-1}
		if [ "$t" != 1 ]; then
			# 2 sockets x 2 cores x T threads, one NUMA node per socket, as on x86_64: SMT
			# pseries under TCG needs QEMU 8.1 or later (the kernel tests boot 10.0 from
			# bookworm-backports, tests/qemu-backports --arch ppc64le).  T = 2 for the kernel
			# tests; 4 and 8, POWER's own SMT modes, for bench/power-smt (NR_CPUS >= 4 T:
			# kernel/build --flavour bench).
			qemu=(qemu-system-ppc64 -M pseries -cpu power9 -accel tcg,thread=multi
				-smp "$((4 * t)),sockets=2,cores=2,threads=$t" -m 1G
				-object memory-backend-ram,id=m0,size=512M -object memory-backend-ram,id=m1,size=512M
				-numa "node,nodeid=0,cpus=0-$((2 * t - 1)),memdev=m0"
				-numa "node,nodeid=1,cpus=$((2 * t))-$((4 * t - 1)),memdev=m1")
		else
			# Debian 12's QEMU 7.2 allows one thread per core on pseries under TCG ("TCG cannot
			# support more than 1 thread/core on a pseries machine"): 4 cores, 2 NUMA nodes.  The
			# end-to-end guest (tests/e2e/run) boots this.
			qemu=(qemu-system-ppc64 -M pseries -cpu power9 -accel tcg,thread=multi
				-smp 4,sockets=1,cores=4,threads=1 -m 1G
				-object memory-backend-ram,id=m0,size=512M -object memory-backend-ram,id=m1,size=512M
				-numa node,nodeid=0,cpus=0-1,memdev=m0 -numa node,nodeid=1,cpus=2-3,memdev=m1)
		fi
		guest_append="console=hvc0"
		;;
	*)
		echo "unknown arch '$1' (x86_64 or ppc64le)" >&2
		return 2
		;;
	esac
}

# guest_qemu_llc N: N x86_64 CPUs, two threads a core, all in one socket, LLC and NUMA node, for
# the benchmark's wake-up cost at server sizes (the kernel needs NR_CPUS >= N: --flavour bench).
guest_qemu_llc() {
	local n=$1
	[ $((n % 2)) = 0 ] && [ "$n" -ge 2 ] || { echo "guest_qemu_llc: $n is not an even CPU count" >&2; return 2; }
	qemu=(qemu-system-x86_64 -M q35 -cpu qemu64,vendor=GenuineIntel -accel tcg,thread=multi
		-smp "$n,sockets=1,cores=$((n / 2)),threads=2" -m 1G)
}

# guest_qemu_root DIR: run the QEMU unpacked under DIR (DIR/usr/bin, firmware from DIR/usr/share)
# instead of the system's, for the qemu array guest_qemu set.
guest_qemu_root() {
	local root=$1
	[ -x "$root/usr/bin/${qemu[0]}" ] ||
		{ echo "guest_qemu_root: $root has no usr/bin/${qemu[0]} (tests/qemu-backports makes it)" >&2; return 2; }
	qemu=("$root/usr/bin/${qemu[0]}" -L "$root/usr/share/qemu" -L "$root/usr/share/seabios"
		"${qemu[@]:1}")
}
