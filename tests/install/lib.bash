# shellcheck shell=bash
# Shared by tests/install/*.sh: a staged `make install`, and reading the installed units the way
# systemd would run them. Source it after tests/lib.sh.

# install_staged ROOT: `make install DESTDIR=ROOT` of this checkout (the build in $B, the
# default PREFIX); its output goes to ROOT.log. Sets ROOT_UNITDIR to where the units landed.
install_staged() {
	local root=$1
	make -C "$TOP" --no-print-directory install DESTDIR="$root" >"$root.log" 2>&1 || {
		tail -n 20 "$root.log" >&2
		return 1
	}
	ROOT_UNITDIR=$(dirname "$(find "$root" -name attest-verifier.service -print -quit)")
	[[ -d $ROOT_UNITDIR ]]
}

# unit_value UNITFILE KEY: the value of the unit's last KEY= line (systemd: the last wins for
# single-valued settings).
unit_value() {
	sed -n "s/^$2=//p" "$1" | tail -n 1
}

# unit_exec ROOT UNITFILE: the unit's ExecStart= command line, one word per line, with every
# absolute path that exists in the staged tree ROOT rewritten into it: what systemd would run
# on a machine where the tree is installed. Fails on what this reader does not handle
# (ExecStart prefixes such as '-', '@', '+', '!', variables, quoting).
unit_exec() {
	local root=$1 unit=$2 line word
	line=$(unit_value "$unit" ExecStart)
	if [[ -z $line || $line =~ ^[-@+!:] || $line == *'$'* || $line == *\"* || $line == *\'* ]]; then
		echo "unit_exec: cannot read ExecStart='$line' of $unit" >&2
		return 1
	fi
	for word in $line; do
		if [[ $word == /* && -e $root$word ]]; then
			echo "$root$word"
		else
			echo "$word"
		fi
	done
}

# unit_creds UNITFILE: setpriv(1) options that give a process the credentials the unit gives
# its service: DynamicUser= (as the unprivileged user nobody), SupplementaryGroups=,
# CapabilityBoundingSet=, AmbientCapabilities=, NoNewPrivileges=. One option per line.
unit_creds() {
	local unit=$1 caps=() c
	[[ $(unit_value "$unit" DynamicUser) == yes ]] && printf '%s\n' --reuid=65534 --regid=65534
	if [[ -n $(unit_value "$unit" SupplementaryGroups) ]]; then
		echo "--groups=$(unit_value "$unit" SupplementaryGroups | tr ' ' ',')"
	else
		echo --clear-groups
	fi
	for c in $(unit_value "$unit" AmbientCapabilities); do
		c=${c#CAP_}
		caps+=("+${c,,}")
	done
	echo "--inh-caps=-all$(printf ',%s' "${caps[@]}")" | sed 's/,$//'
	echo "--ambient-caps=-all$(printf ',%s' "${caps[@]}")" | sed 's/,$//'
	caps=()
	for c in $(unit_value "$unit" CapabilityBoundingSet); do
		c=${c#CAP_}
		caps+=("+${c,,}")
	done
	echo "--bounding-set=-all$(printf ',%s' "${caps[@]}")" | sed 's/,$//'
	[[ $(unit_value "$unit" NoNewPrivileges) == yes ]] && echo --nnp
	true
}
