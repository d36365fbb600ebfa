# skip-in-distcheck.sh - sourced first by the test scripts that only the
# main leg of ./quickstart check runs: inside make distcheck, which
# ./quickstart check runs with LIBTCIO_DISTCHECK set, they report a skip
# (exit 77) instead of running a second time.
if [ -n "${LIBTCIO_DISTCHECK:-}" ]; then
    echo "skipped inside make distcheck (LIBTCIO_DISTCHECK, set by ./quickstart check: the main leg ran it)"
    exit 77
fi
