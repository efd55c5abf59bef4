# Sourced by kernel/build and kernel/check-series: the one way to make a 6.12 source tree.
#
# kernel_tree_extract TARBALL DIR MESSAGE: extract TARBALL into the empty directory DIR and
# commit all of it as one git commit, tagged "base", so that git am can apply the series on top.
kernel_tree_extract() {
	local tarball=$1 dir=$2 message=$3
	tar -xf "$tarball" -C "$dir" --strip-components=1
	(
		cd "$dir"
		git init -q
		# git am ends with "git gc --auto", which would repack the whole tree in the
		# background while the kernel builds, on the same two cores.
		git config gc.auto 0
		# Debian's .gitignore ignores the whole top level: track everything anyway.
		git add -f -A
		git -c user.name=kernel-build -c user.email=build@localhost commit -q -m "$message"
		git tag base
	)
}
