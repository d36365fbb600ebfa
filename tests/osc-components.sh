#!/bin/sh
# Open MPI only: the MPI suite at 2 ranks under each one-sided component
# other than the default osc/sm (OMPI_MCA_osc=pt2pt, ucx, rdma), with the
# rma transport (TCIO_TRANSPORT=rma), whose moves are MPI one-sided
# operations: auto would take shm on one node, whose segment is libtcio's
# own and never touches the component.  The two shm-only cases,
# transport_nodes and shared_slots, are left out.  osc/pt2pt
# and osc/ucx need the target's progress and hold operations at the origin
# until a flush; they hung libtcio's slot locks before the locks polled
# with MPI_Iprobe and flushed every release (doc/design.md, "Progress
# inside the MPI library").  A component this Open MPI does not have is
# skipped with a message; under another MPI the whole test is skipped.
grep -q "^MPI_FLAVOR='openmpi'" ./tests/run-mpi.sh || {
    echo "osc-components.sh: not Open MPI: nothing to test"
    exit 77
}
: "${TCIO_TEST_TIMEOUT:=120}"
export TCIO_TEST_TIMEOUT
# The components this Open MPI has (all three are tried without ompi_info).
components=$(ompi_info --parsable 2>/dev/null |
             sed -n 's/^mca:osc:\([a-z0-9_]*\):version:"mca:.*/\1/p')
[ -n "$components" ] || components=$(printf "pt2pt\nucx\nrdma\n")
# Whether every check failed, each with an open refused with TCIO_ERR_MPI
# (osc/rdma where the transport cannot do one-sided copies): the
# documented refusal, not a hang or a wrong byte.  A run in which some
# checks passed and others were refused is a failure: the component
# creates windows, so a refusal there is a defect.
refused_at_open() {
    checks=$(sed -n 's/.*Checks: \([0-9]*\),.*/\1/p' "$1" | tail -n 1)
    failures=$(grep -c ':F:' "$1")
    refusals=$(grep ':F:' "$1" | grep -c 'tcio_open_comm returned 15 \|open of .*: an MPI operation failed')
    [ "$failures" -gt 0 ] && [ "$failures" -eq "$refusals" ] && [ "$failures" -eq "${checks:-0}" ]
}

fail=0
for osc in pt2pt ucx rdma; do
    if ! echo "$components" | grep -qx "$osc"; then
        echo "osc/$osc: not in this Open MPI (ompi_info), skipped"
        continue
    fi
    log=tests/osc-$osc.out
    # transport_nodes and shared_slots test the shm transport.
    if env TCIO_TRANSPORT=rma CK_EXCLUDE_TAGS="transport_nodes shared_slots" OMPI_MCA_osc=$osc \
            timeout 600 ./tests/run-mpi.sh 2 ./tests/test_mpi >"$log" 2>&1; then
        echo "osc/$osc: $(grep -o 'Checks:.*' "$log")"
    elif refused_at_open "$log"; then
        echo "osc/$osc: every open refused with TCIO_ERR_MPI (15), as documented for" \
             "a component that cannot create the window here"
    else
        echo "osc/$osc: FAILED:"
        tail -20 "$log"
        fail=1
    fi
done
exit $fail
