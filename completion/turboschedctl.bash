# bash completion for turboschedctl(8)        -*- shell-script -*-
# SPDX-License-Identifier: GPL-2.0-or-later

_turboschedctl_pids()
{
	# PIDs with their comm would be nicer, but completion must yield bare words.
	COMPREPLY=($(compgen -W "$(cd /proc && compgen -G '[0-9]*')" -- "$cur"))
}

_turboschedctl_tids()
{
	COMPREPLY=($(compgen -W "$(cd /proc && for p in [0-9]*; do
		[[ -d $p/task ]] && (cd "$p/task" && echo [0-9]*)
	done 2>/dev/null)" -- "$cur"))
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

	local commands="tag untag run status tasks explain rules reload"
	local global_opts="--json -j --socket --root --help -h --version -V"
	local i cmd=""

	local thread=""
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--socket | --root) ((i++)) ;;
		--thread | -t) thread=1 ;;
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
	--config | -c)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	esac
	if [[ $cur == --format=* ]]; then
		COMPREPLY=($(compgen -P --format= -W "text json prometheus" -- "${cur#--format=}"))
		return
	fi

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$global_opts" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		fi
		return
	fi

	# Global options are taken after the command too.
	local cmd_globals="--json -j --socket --root --help -h --version -V"
	case $cmd in
	tag | untag)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--thread -t $cmd_globals" -- "$cur"))
		elif [[ -n $thread ]]; then
			_turboschedctl_tids
		else
			_turboschedctl_pids
		fi
		;;
	run)
		# The command to start, then its own arguments.
		if [[ ${words[cword - 1]} == run || ${words[cword - 1]} == -- ]]; then
			COMPREPLY=($(compgen -c -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		;;
	explain)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--config -c $cmd_globals" -- "$cur"))
		else
			_turboschedctl_pids
		fi
		;;
	rules)
		COMPREPLY=($(compgen -W "--config -c $cmd_globals" -- "$cur"))
		;;
	status)
		COMPREPLY=($(compgen -W "--sample -s --watch -w --watch= --format= $cmd_globals" -- "$cur"))
		[[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
		;;
	*)
		COMPREPLY=($(compgen -W "$cmd_globals" -- "$cur"))
		;;
	esac
} &&
	complete -F _turboschedctl turboschedctl
