#!/bin/bash
# completion.sh - the bash completion of hopscope and hopscope-lab
# (share/completion/hopscope) offers what the programs themselves list:
# options from --help, verbs from 'help --json', lab commands and their
# sub-commands from the lab's --help.
. "$(dirname "$0")/lib.sh"

comp=$top_srcdir/share/completion/hopscope
LAB=$top_builddir/hopscope-lab
[ -x "$LAB" ] || hard "'$LAB' is not built"
# shellcheck source=/dev/null
. "$comp" || hard "cannot source '$comp'"

# offers WORD...: complete the command line WORD... (the last word is the
# one being completed) and leave the offers, one a line, in $tmp/out
offers() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	case $1 in
	*hopscope-lab) _hopscope_lab ;;
	*) _hopscope ;;
	esac
	: >"$tmp/out"
	[ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}" >"$tmp/out"
}
offered() { grep -qx -- "$1" "$tmp/out"; }
only() { [ "$(wc -l <"$tmp/out")" -eq "$1" ]; }

offers "$HS" --js
check "--js completes to --json alone" eval 'offered --json && only 1'
offers "$HS" -
check "every option of --help is offered" eval 'offered --db && offered --topo && offered -r && offered --keep-going'
offers "$HS" tra
check "verbs complete from 'help --json'" eval 'offered traces && offered traceroute && only 2'
offers "$HS" -c exp
check "-c completes a verb" eval 'offered export'
offers "$HS" -c qu
check "aliases complete too" eval 'offered quit'
offers "$HS" -i l
check "-i completes interfaces" offered lo
: >"$tmp/cap.pcap"
offers "$HS" -r "$tmp/ca"
check "-r completes files" offered "$tmp/cap.pcap"
offers "$HS" --no-such-option-prefix
check "an unknown prefix offers nothing" only 0

offers "$LAB" ""
check "lab commands from --help" eval 'offered up && offered down && offered traffic && offered fault && offered --state'
offers "$LAB" fault ""
check "fault's sub-commands" eval 'offered drop && offered blackhole && offered loop && offered clear && offered --both'
offers "$LAB" traffic --
check "traffic's options" eval 'offered --flows && offered --rate && offered --duration'
offers "$LAB" --state /tmp up --
check "after --state DIR the command's options" offered --shape
finish
