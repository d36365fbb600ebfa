#!/bin/sh
# The links of the user's pages lead somewhere: every relative Markdown
# link [text](target) in README.md and doc/ (doc/*.md, doc/perf/*.md,
# doc/records/*.md)
# names a file or directory of the tree, and a "#anchor" in it names a
# heading of the Markdown page it points to (GitHub's rule: lower case,
# punctuation other than "-" and "_" dropped, spaces made "-") or an
# explicit <a id="...">. Links to the web (http:, https:, mailto:) are
# not followed. Lists every broken link as FILE:LINE: TARGET and fails if
# there is one. A release tarball has the user's pages but not the
# records (doc/records/) they link to: there it skips (77).
# Plain sh and awk: it runs where make check runs.
set -eu
src=${srcdir:-$(dirname "$0")/..}
if [ ! -d "$src/doc/records" ]; then
    echo "doc-links.sh: no doc/records/ under $src (a release tarball): skipped"
    exit 77
fi

# The anchors of one Markdown file, one per line.
anchors() {
    awk '
        /^```/ { code = !code; next }
        code { next }
        /^#+ / {
            h = $0
            sub(/^#+ +/, "", h)
            h = tolower(h)
            gsub(/[^a-z0-9 _-]/, "", h)
            gsub(/ /, "-", h)
            print h
        }
        {
            line = $0
            while (match(line, /<a id="[^"]*">/)) {
                print substr(line, RSTART + 7, RLENGTH - 9)
                line = substr(line, RSTART + RLENGTH)
            }
        }' "$1"
}

broken=0
for page in "$src"/README.md "$src"/doc/*.md "$src"/doc/perf/*.md "$src"/doc/records/*.md; do
    [ -f "$page" ] || continue
    dir=$(dirname "$page")
    # FILE LINE TARGET for every link outside code blocks and code spans.
    links=$(awk '
        /^```/ { code = !code; next }
        code { next }
        {
            line = $0
            gsub(/`[^`]*`/, "", line)
            while (match(line, /\]\([^) ]+\)/)) {
                print FNR, substr(line, RSTART + 2, RLENGTH - 3)
                line = substr(line, RSTART + RLENGTH)
            }
        }' "$page")
    [ -n "$links" ] || continue
    while read -r lineno target; do
        case $target in http:*|https:*|mailto:*) continue ;; esac
        path=${target%%#*}
        anchor=""
        case $target in *"#"*) anchor=${target#*#} ;; esac
        if [ -z "$path" ]; then
            file=$page
        else
            file=$dir/$path
        fi
        if [ ! -e "$file" ]; then
            echo "${page#"$src"/}:$lineno: $target (no such file)"
            broken=$((broken + 1))
            continue
        fi
        if [ -n "$anchor" ]; then
            case $file in *.md) ;; *) continue ;; esac
            if ! anchors "$file" | grep -qx -- "$anchor"; then
                echo "${page#"$src"/}:$lineno: $target (no such heading)"
                broken=$((broken + 1))
            fi
        fi
    done <<EOF
$links
EOF
done
if [ "$broken" -gt 0 ]; then
    echo "doc-links.sh: $broken broken links" >&2
    exit 1
fi
echo "doc-links.sh: every relative link of README.md and doc/ leads somewhere"
