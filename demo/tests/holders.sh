# shellcheck shell=bash
# holders.sh - sourced by the host audit's tests: start processes that hold
# secret memory (secbuf-hold), each under a name of its own, and stop every
# one of them, by pid, when the test exits.
#   hold NAME [--unlocked | --secretmem | --dontdump]: start one; its pid in
#   $held; 0 once it holds the memory, 77 if the kernel lacks what it
#   needs, 1 if it failed or said nothing in 5 s.
# Needs $bin (the programs) and $dir (a scratch directory).
# shellcheck disable=SC2154 # bin and dir are the sourcing test's
holders=() holds=0
alive() {	# alive PID: running, not a zombie
	[[ $(ps -o stat= -p "$1") == [^Z]* ]]
}
hold() {
	local name=$1 out=$dir/hold.$((holds++)) i
	shift
	"$bin/secbuf-hold" --name "$(printf %s "$name" | od -An -tx1 | tr -d ' \n')" "$@" \
		>"$out" 2>&1 &
	held=$!
	holders+=("$held")
	for ((i = 0; i < 100; i++)); do
		grep -qsx ready "$out" && return 0
		if ! alive "$held"; then
			wait "$held"
			[ $? -eq 77 ] && return 77
			sed 's/^/# /' "$out"
			return 1
		fi
		sleep 0.05
	done
	echo "# $name: not ready in 5 s"
	return 1
}
unhold() {	# every holder, by pid; a bounded wait for each
	local p i
	for p in "${holders[@]}"; do
		kill "$p" 2>/dev/null || continue
		for ((i = 0; i < 100; i++)); do alive "$p" || break; sleep 0.05; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	holders=()
}
