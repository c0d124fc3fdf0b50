#!/bin/bash
# runas.sh - who the console's files belong to once it has dropped root.
# Started through sudo it becomes the user who ran sudo, so what it writes
# is that user's and that user's directories are writable; started without
# sudo, it becomes nobody and its files are nobody's; a write refused after
# the drop names the user it runs as and -Z.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root to test dropping root"
getent passwd nobody >/dev/null || skip "no user 'nobody'"
getent passwd daemon >/dev/null || skip "no user 'daemon' to stand for the one who ran sudo"
unset HOPSCOPE_USER SUDO_UID SUDO_GID SUDO_USER
sample=$top_srcdir/share/sample/sample.pcap
chmod 711 "$tmp"

# --- started through sudo: the files are the invoking user's ------------------------
mkdir -m 700 "$tmp/home"
chown daemon: "$tmp/home"
SUDO_UID=$(id -u daemon) SUDO_GID=$(id -g daemon) SUDO_USER=daemon \
	hs --db "$tmp/h.db" -r "$sample" -c "export ndjson $tmp/home/drops.ndjson outcome dropped"
check "sudo: export into the invoking user's own directory works (status $st)" [ "$st" -eq 0 ]
check "sudo: the exported file belongs to the invoking user" \
	[ "$(stat -c %U:%G "$tmp/home/drops.ndjson" 2>/dev/null)" = "daemon:$(id -gn daemon)" ]
check "sudo: the history it made belongs to the invoking user" \
	[ "$(stat -c %U "$tmp/h.db")" = daemon ]
# -Z and HOPSCOPE_USER still decide over it
SUDO_UID=$(id -u daemon) hs -Z nobody --db "$tmp/h2.db" -r "$sample" -c 'capture status'
check "sudo with -Z nobody: nobody it is" [ "$(stat -c %U "$tmp/h2.db")" = nobody ]
SUDO_UID=0 hs --db "$tmp/h3.db" -r "$sample" -c 'capture status'
check "sudo from root: nobody, as without sudo" [ "$(stat -c %U "$tmp/h3.db")" = nobody ]

# --- root without sudo: nobody's files, where nobody may write ---------------------
mkdir -m 1777 "$tmp/pub"
hs --db "$tmp/h6.db" -r "$sample" -c "export ndjson $tmp/pub/all.ndjson"
check "root without sudo: export into a directory anyone may write works (status $st)" \
	[ "$st" -eq 0 ]
check "root without sudo: the exported file belongs to nobody" \
	[ "$(stat -c %U "$tmp/pub/all.ndjson" 2>/dev/null)" = nobody ]
HOPSCOPE_USER=daemon hs --db "$tmp/h7.db" -r "$sample" -c "export ndjson $tmp/home/all.ndjson"
check "root without sudo, HOPSCOPE_USER=daemon: the export is daemon's (status $st)" \
	[ "$(stat -c %U "$tmp/home/all.ndjson" 2>/dev/null)" = daemon ]

# --- a refused write names the user and -Z -------------------------------------------
mkdir -m 700 "$tmp/rootonly"
hs -Z nobody --db "$tmp/h5.db" -r "$sample" -c "export ndjson $tmp/rootonly/x.ndjson"
check "refused export: fails cleanly (status $st)" failed_cleanly
check "refused export: the error names the user and -Z" \
	has "^-c:1: error: .*'$tmp/rootonly/x.ndjson'.*Permission denied (hopscope runs as 'nobody' once it has dropped root; -Z USER runs it as another)$" "$tmp/err"
check "refused export: one line" [ "$(wc -l <"$tmp/err")" -eq 1 ]
check "refused export: nothing written" [ -z "$(ls -A "$tmp/rootonly")" ]
# as root nothing is refused, and nothing is added to a refusal
hs -Z root --db "$tmp/h4.db" -r "$sample" -c "export ndjson $tmp/rootonly/x.ndjson"
check "-Z root: the export succeeds (status $st)" [ "$st" -eq 0 ]
check "-Z root: the export is written" [ -s "$tmp/rootonly/x.ndjson" ]
finish
