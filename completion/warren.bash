# bash completion for warren(1): subcommands, each one's options, run ids (from the state
# directory's runs/, live ones from 'warren ps' for kill), image names (its images/) for
# --image, --warm-image and 'image rm', job files for 'job run|check', directories for
# --work/--rootfs/--state, commands after 'run --'.

_warren_state() {
	local i
	for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
		[[ ${COMP_WORDS[i]} == --state ]] && { printf '%s\n' "${COMP_WORDS[i + 1]}"; return; }
		[[ ${COMP_WORDS[i]} == --state=* ]] && { printf '%s\n' "${COMP_WORDS[i]#--state=}"; return; }
	done
	local f v conf=
	if [[ -n ${WARREN_CONFIG-} ]]; then
		[[ $WARREN_CONFIG != none ]] && conf=$WARREN_CONFIG
	else
		conf=/etc/warren/warren.conf
		((EUID == 0)) || conf+=" ${XDG_CONFIG_HOME:-$HOME/.config}/warren/warren.conf"
	fi
	local state=
	for f in $conf; do   # warren.conf's state = DIR, the later file winning
		[[ -r $f ]] || continue
		v=$(sed -n 's/#.*//; s/[[:space:]]*$//; s/^[[:space:]]*state[[:space:]]*=[[:space:]]*//p' "$f" | tail -n 1)
		[[ -n $v ]] && state=$v
	done
	if [[ -n ${WARREN_STATE-} ]]; then
		printf '%s\n' "$WARREN_STATE"
	elif [[ -n $state ]]; then
		printf '%s\n' "$state"
	elif ((EUID == 0)); then
		printf '%s\n' /var/lib/warren
	else
		printf '%s\n' "${XDG_STATE_HOME:-$HOME/.local/state}/warren"
	fi
}

# run ids of the state directory (all of them), or the live ones (live)
_warren_runs() {
	local state
	state=$(_warren_state)
	if [[ ${1-} == live ]]; then
		warren ps --state "$state" 2>/dev/null | awk 'NR > 1 && $1 ~ /^run_/ { print $1 }'
	else
		compgen -G "$state/runs/run_*" | sed 's|.*/||'
	fi
}

# the names of the state directory's images (each a directory with its image.json)
_warren_images() {
	local state
	state=$(_warren_state)
	compgen -G "$state/images/*/image.json" | sed 's|/image\.json$||; s|.*/||'
}

_warren() {
	local cur prev words cword
	_init_completion -s || return
	local cmds="run job logs kill exec end files policy ps show gc selfcheck image history serve submit mcp oci help version"
	local sub= i
	for ((i = 1; i < cword; i++)); do
		[[ ${words[i]} != -* ]] && { sub=${words[i]}; break; }
	done
	if [[ -z $sub ]]; then
		COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
		return
	fi
	# after 'run ... --': the command and its arguments
	local j
	for ((j = i + 1; j < cword; j++)); do
		if [[ $sub == run && ${words[j]} == -- ]]; then
			_command_offset $((j + 1))
			return
		fi
	done
	case $prev in
	--work | --rootfs | --state) _filedir -d; return ;;
	--image | --warm-image) COMPREPLY=($(compgen -W "$(_warren_images)" -- "$cur")); return ;;
	--env-file | --seccomp | --result) _filedir; return ;;
	--user | --env | --pass-env | --time | --cpu-time | --memory | --pids | --output | --scratch | \
	--grace | --protect | --publish | --dns-max-names | --result-fd | --older-than | --session-idle | --session-max)
		return ;;
	--net)
		COMPREPLY=($(compgen -W "none nat nat,lan nat,allow= allow= lan,allow=" -- "$cur"))
		[[ $COMPREPLY == *= ]] && compopt -o nospace
		return ;;
	esac
	local opts=
	case $sub in
	run)
		opts="--rootfs --work --user --env --env-file --pass-env --keep --state --time --cpu-time
		      --memory --pids --output --scratch --grace --seccomp --seccomp-print --allow-nested
		      --require-landlock --protect --core --no-sys --no-refused-writes --net --publish
		      --dns-max-names --result --result-fd --quiet --image --entrypoint --work-ro --workdir --hostname
		      --bind --ro-bind --externals --label --name --db --driver --via --token-file --session
		      --session-idle --session-max --help --" ;;
	job)
		local action=${words[i + 1]-}
		if ((cword == i + 1)); then
			COMPREPLY=($(compgen -W "run check --help" -- "$cur"))
			return
		fi
		case $action in
		run) opts="--work --rootfs --image --keep --json --quiet --prefix --user --result --result-fd --state --work-ro
			   --workdir --hostname --bind --ro-bind --externals --label --name --db --help" ;;
		check) opts="--work --json --help" ;;
		esac
		if [[ $cur != -* ]]; then
			_filedir '@(yaml|yml)'
			return
		fi ;;
	logs) opts="--follow --state --help" ;;
	kill) opts="--state --help" ;;
	exec) opts="--state --via --token-file --env --workdir --timeout --stdin --help" ;;
	end) opts="--state --via --token-file --help" ;;
	files)
		if ((cword == i + 1)); then
			COMPREPLY=($(compgen -W "get put ls --help" -- "$cur"))
			return
		fi
		opts="--mode --parents --json --state --via --token-file --help" ;;
	policy) opts="--write --read --exec --state --help" ;;
	ps) opts="-a --json --state --help" ;;
	show) opts="--json --state --help" ;;
	gc) opts="--older-than --keep-runs --keep-for --orphans --state --help" ;;
	selfcheck) opts="--rootfs --image --state --help" ;;
	image)
		if ((cword == i + 1)); then
			COMPREPLY=($(compgen -W "import pull ls inspect tag rm --help" -- "$cur"))
			return
		fi
		opts="--max-size --max-entries --replace --insecure --creds --authfile --cert-dir --json --state --help" ;;
	oci)
		if ((cword == i + 1)); then
			COMPREPLY=($(compgen -W "create start state kill delete run exec ps pause resume features spec --root --log --log-format --systemd-cgroup --debug --version --help" -- "$cur"))
			return
		fi
		opts="--bundle --pid-file --console-socket --detach --force --all --process --format --root --log --log-format" ;;
	history) opts="--status --label --since --limit --json --state --db --help" ;;
	serve) opts="--listen --slots --state --db --token-file --keep-runs --keep-for --warm --warm-work --warm-image --warm-net --help" ;;
	submit) opts="--via --token-file --work --label --name --env --time --memory --cpu-time --pids
		      --output --scratch --rootfs --image --bind --ro-bind --net --publish --follow --json --job
		      --state --help --" ;;
	mcp) opts="--state --via --token-file --help" ;;
	help) COMPREPLY=($(compgen -W "$cmds" -- "$cur")); return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	# operands before the one being completed (options and their values left out); the first
	local nop=0 first=
	for ((j = i + 1; j < cword; j++)); do
		case ${words[j]} in
		--state | --older-than) ((j++)) ;;
		-*) ;;
		*) ((nop++)) || first=${words[j]} ;;
		esac
	done
	case $sub in
	kill | exec | end) ((nop == 0)) && COMPREPLY=($(compgen -W "$(_warren_runs live)" -- "$cur")) ;;
	show) ((nop == 0)) && COMPREPLY=($(compgen -W "$(_warren_runs)" -- "$cur")) ;;
	logs) ((nop == 0)) && COMPREPLY=($(compgen -W "$(_warren_runs)" -- "$cur")) ;;
	policy) if ((nop == 0)); then COMPREPLY=($(compgen -W "$(_warren_runs)" -- "$cur")); else _filedir; fi ;;
	gc) COMPREPLY=($(compgen -W "$(_warren_runs)" -- "$cur")) ;;
	image)
		case $first in
		rm | inspect) COMPREPLY=($(compgen -W "$(_warren_images)" -- "$cur")) ;;
		tag) ((nop == 1)) && COMPREPLY=($(compgen -W "$(_warren_images)" -- "$cur")) ;;
		import) ((nop == 2)) && _filedir ;;
		esac ;;
	esac
} &&
	complete -F _warren warren
