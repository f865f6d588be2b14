#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The driver's files call only files below them: no cycle in the graph
# of calls between them (Documentation/wire.rst, "The layers"). Reads the
# symbols every built object defines and uses (nm), draws the graph file
# to file and fails, naming each call that closes a cycle, if it has one.
#   scripts/layers.sh [--order] [DIR]
# DIR: where the built shca_*.o are (default the driver's directory).
# --order: also print the files by level, the top first (a file's level
# is one more than the highest level of the files it calls).
set -euo pipefail

order=0
if [ "${1:-}" = --order ]; then
	order=1
	shift
fi
dir=${1:-$(cd "$(dirname "$0")/.." && pwd)/drivers/infiniband/sw/softhca}
shopt -s nullglob
objs=("$dir"/shca_*.o)
[ ${#objs[@]} -gt 0 ] || { echo "layers: no shca_*.o in $dir (build first)" >&2; exit 2; }

for o in "${objs[@]}"; do
	f=$(basename "$o" .o)
	nm "$o" | awk -v f="$f" '
		NF == 3 && $2 ~ /^[TDBR]$/ { print "def", $3, f }
		NF == 2 && $1 == "U" { print "use", $2, f }'
done | awk -v order="$order" '
$1 == "def" { def[$2] = $3; files[$3] = 1; next }
{ use[++nu] = $2; user[nu] = $3; files[$3] = 1 }
END {
	for (i = 1; i <= nu; i++) {
		to = def[use[i]]
		if (to == "" || to == user[i])
			continue
		e = user[i] SUBSEP to
		if (!(e in edge)) {
			edge[e] = use[i]
			out[user[i]]++
		} else if (length(edge[e]) < 60) {
			edge[e] = edge[e] " " use[i]
		}
	}
	# levels: a file whose callees all have levels gets the next one
	n = 0
	for (f in files)
		n++
	done = 0
	do {
		progress = 0
		for (f in files) {
			if (f in level)
				continue
			l = 0
			ok = 1
			for (e in edge) {
				split(e, p, SUBSEP)
				if (p[1] != f)
					continue
				if (!(p[2] in level)) { ok = 0; break }
				if (level[p[2]] + 1 > l)
					l = level[p[2]] + 1
			}
			if (ok) { level[f] = l; done++; progress = 1 }
		}
	} while (progress && done < n)
	if (done < n) {
		print "layers: a cycle in the calls between files; the calls of the files in it and above it:"
		for (e in edge) {
			split(e, p, SUBSEP)
			if (!(p[1] in level) && !(p[2] in level))
				print "  " p[1] " -> " p[2] ": " edge[e]
		}
		exit 1
	}
	if (order) {
		max = 0
		for (f in level)
			if (level[f] > max)
				max = level[f]
		for (l = max; l >= 0; l--) {
			line = ""
			for (f in level)
				if (level[f] == l)
					line = line " " f
			print l ":" line
		}
	}
	print "layers: " n " files, no cycle"
}'
