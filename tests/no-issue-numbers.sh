#!/bin/sh
# No internal issue numbers in what users read: README.md, the pages of
# doc/ (*.md), the man pages, quickstart and the bench/ programs, whose
# --help texts are their leading comments (scripts) or usage strings (C).
# Users cannot see the project's tracker, so "issue 10", "issues 17 and
# 19" or "(issue 25, item 2)" mean nothing to them: name the thing itself
# (the MPI-IO interposer, the combining tier, the rebuilt write path).
# Lists every offender as FILE:LINE: TEXT and fails if there is one; also
# catches a number on the line after "issue" (a wrapped comment).
# Files missing from the tree (a tarball without doc/records/) are skipped.
# Plain sh and awk: it runs where make check runs.
set -eu
src=${srcdir:-$(dirname "$0")/..}

files=""
for f in "$src"/README.md "$src"/doc/*.md "$src"/doc/*/*.md "$src"/man/*.[1-9] \
         "$src"/quickstart "$src"/bench/*; do
    [ -f "$f" ] || continue
    case $f in
        */bench/*.c|*/bench/*.h|*/bench/*.sh) ;;
        */bench/*.*) continue ;;       # objects, libtool files, data
        */bench/*)                     # a script, not a built program
            [ "$(head -c 2 "$f")" = "#!" ] || continue ;;
    esac
    files="$files $f"
done
if [ -z "$files" ]; then
    echo "no-issue-numbers.sh: no README.md, doc/, man/ or bench/ under $src" >&2
    exit 1
fi

# One awk pass over every file: "issue N", "issues N", "issue #N" on a
# line, or "issue"/"issues" ending one line and "#"? N opening the next
# (after comment markers). Case-insensitive; "tissue 5" does not count.
# shellcheck disable=SC2086  # $files is a list of paths without spaces
offenders=$(awk '
    FNR == 1 { prev = "" }
    {
        line = tolower($0)
        if (line ~ /(^|[^a-z0-9_])issues?[ \t]*#?[0-9]/)
            print FILENAME ":" FNR ": " $0
        else if (prev ~ /(^|[^a-z0-9_])issues?[ \t]*$/) {
            rest = line
            sub(/^[ \t]*([#*!]|\/\/|\/\*)*[ \t]*/, "", rest)
            if (rest ~ /^#?[0-9]/)
                print FILENAME ":" FNR ": " $0
        }
        prev = line
    }' $files)

if [ -n "$offenders" ]; then
    echo "no-issue-numbers.sh: internal issue numbers in user-facing text" \
         "(say what the number stood for instead):"
    echo "$offenders"
    exit 1
fi
echo "no-issue-numbers.sh: no issue numbers in README.md, doc/, man/, quickstart, bench/"
