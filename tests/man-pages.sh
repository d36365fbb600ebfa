#!/bin/sh
# The man pages against the public header, which is the contract:
# - every function that include/tcio.h declares has its page, man/NAME.3,
#   and the page is installed (listed in Makefile.am);
# - every error code that the header's comment on a function names (for
#   "As tcio_X ... Same errors" and "the errors of tcio_X" also tcio_X's)
#   is named on its page;
# - every TCIO_ERR_* name on any page is a code the header defines, and
#   every code the header defines is on tcio_error_string(3);
# - every page of a call is linked from tcio(3).
# Plain sh and awk: it runs where make check runs.
src=${srcdir:-.}
header=$src/include/tcio.h
failed=0
fail() { echo "man-pages.sh: $*"; failed=$((failed + 1)); }

# "NAME CODE CODE ..." per declared function, from the comment before it.
codes_per_function() {
    awk '
    function named(text,    out) {
        out = ""
        while (match(text, /TCIO_ERR_[A-Z][A-Z_]*/)) {
            out = out " " substr(text, RSTART, RLENGTH)
            text = substr(text, RSTART + RLENGTH)
        }
        return out
    }
    /\/\*/ { text = ""; incomment = 1 }
    incomment { text = text " " $0 }
    /\*\// { incomment = 0; last = text; ended = NR; next }
    /^(int|const char|tcio_file)[ *]+tcio_[a-z_]+\(/ {
        name = $0
        sub(/^[^(]*[ *]/, "", name); sub(/\(.*/, "", name)
        block = (ended == NR - 1) ? last : ""
        order[++n] = name
        codes[name] = named(block)
        base[name] = ""
        if (match(block, /As tcio_[a-z_]+/) && block ~ /Same errors/)
            base[name] = substr(block, RSTART + 3, RLENGTH - 3)
        else if (match(block, /the errors of tcio_[a-z_]+/))
            base[name] = substr(block, RSTART + 14, RLENGTH - 14)
    }
    END {
        for (i = 1; i <= n; i++) {
            name = order[i]
            all = codes[name]
            if (base[name] != "")
                all = all " " codes[base[name]]
            print name all
        }
    }' "$header"
}

defined_codes=$(sed -n 's/^    \(TCIO_ERR_[A-Z_]*\)[ =,].*/\1/p' "$header")
[ -n "$defined_codes" ] || fail "no TCIO_ERR_* codes found in $header"
table=$(codes_per_function)
[ -n "$table" ] || fail "no functions found in $header"
nfunctions=0
echo "$table" | {
    while read -r name codes; do
        nfunctions=$((nfunctions + 1))
        page=$src/man/$name.3
        if [ ! -f "$page" ]; then
            fail "$name: no man page man/$name.3"
            continue
        fi
        grep -q "man/$name\.3" "$src/Makefile.am" || fail "$name: man/$name.3 not installed (Makefile.am)"
        grep -q "^\.BR $name (3)" "$src/man/tcio.3" || fail "$name: not linked from tcio(3)"
        case $name in
            tcio_error_string|tcio_version) ;;
            *) [ -n "$codes" ] || fail "$name: the header's comment names no error code" ;;
        esac
        for code in $codes; do
            grep -q "$code\b" "$page" || fail "$name: $code is in the header, not in man/$name.3"
        done
    done
    echo "man-pages.sh: $nfunctions functions checked"
    exit $failed
} || failed=$?

for page in "$src"/man/*.3; do
    for code in $(grep -o 'TCIO_ERR_[A-Z][A-Z_]*' "$page" | sort -u); do
        echo "$defined_codes" | grep -qx "$code" ||
            fail "$(basename "$page"): $code is not a code of the header"
    done
done
for code in $defined_codes; do
    grep -q "$code\b" "$src/man/tcio_error_string.3" ||
        fail "$code is not on tcio_error_string(3)"
done

if [ "$failed" -ne 0 ]; then
    echo "man-pages.sh: $failed check(s) failed"
    exit 1
fi
echo "man-pages.sh: every function's page names the header's error codes"
