# bash completion for turboschedctl(8)        -*- shell-script -*-
# SPDX-License-Identifier: GPL-2.0-or-later

_turboschedctl_pids()
{
	# PIDs with their comm would be nicer, but completion must yield bare words.
	COMPREPLY=($(compgen -W "$(cd /proc && compgen -G '[0-9]*')" -- "$cur"))
}

_turboschedctl()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion || return
	else
		# Without the bash-completion package: plain COMP_* variables.
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
	fi

	local commands="tag untag status tasks explain rules reload"
	local global_opts="--json -j --socket --root --help -h --version -V"
	local i cmd=""

	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--socket | --root) ((i++)) ;;
		-*) ;;
		*)
			cmd=${words[i]}
			break
			;;
		esac
	done

	case $prev in
	--socket)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--root)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	--sample | -s)
		COMPREPLY=($(compgen -W "0 100 250 1000" -- "$cur"))
		return
		;;
	esac

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$global_opts" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		fi
		return
	fi

	case $cmd in
	tag | untag)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--thread -t --help" -- "$cur"))
		else
			_turboschedctl_pids
		fi
		;;
	explain)
		[[ $cur == -* ]] && COMPREPLY=($(compgen -W "--help" -- "$cur")) || _turboschedctl_pids
		;;
	status)
		COMPREPLY=($(compgen -W "--sample --help" -- "$cur"))
		;;
	*)
		COMPREPLY=($(compgen -W "--help" -- "$cur"))
		;;
	esac
} &&
	complete -F _turboschedctl turboschedctl
