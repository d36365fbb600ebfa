#!/bin/sh
# Open MPI only: the MPI suite under each one-sided component other than
# the default osc/sm (OMPI_MCA_osc=pt2pt, ucx, rdma), with the rma
# transport (TCIO_TRANSPORT=rma), whose moves are MPI one-sided
# operations: auto would take shm on one node, whose segment is libtcio's
# own and never touches the component.  The two shm-only cases,
# transport_nodes and shared_slots, are left out.  osc/pt2pt
# and osc/ucx need the target's progress and hold operations at the origin
# until a flush; they hung libtcio's slot locks before the locks turned
# MPI's progress engine while they wait and flushed every release
# (doc/design.md, "Progress inside the MPI library").
#
# Three more legs:
# - osc/rdma again with OMPI_MCA_btl_vader_single_copy_mechanism=none
#   (containers without cross-memory attach; skipped when the caller's
#   settings already say so): there osc/rdma cannot create a window, and
#   every open that creates one must be refused with TCIO_ERR_MPI (see
#   refused_at_open) unless the component can create it after all.  Only
#   osc/rdma without cross-memory attach may refuse: a refused open under
#   any other component fails the test;
# - osc/ucx on two "nodes" (TCIO_TEST_NODES=2, 4 ranks) with UCX for
#   point-to-point too, as a multi-node Open MPI job over UCX runs
#   (pml/ucx, both with UCX's shared-memory transports: the defaults look
#   for InfiniBand devices): the whole suite under auto (the node's
#   combining tier, rma between the nodes).  Before libtcio's waits ran
#   Open MPI's whole progress engine (pml/ucx's MPI_Iprobe turns osc/ucx's
#   worker only every 100th call) this configuration wrote at 1-2 MB/s
#   (doc/records/nodes.md).
# A component this Open MPI does not have is skipped with a message; under
# another MPI the whole test is skipped.
grep -q "^MPI_FLAVOR='openmpi'" ./tests/run-mpi.sh || {
    echo "osc-components.sh: not Open MPI: nothing to test"
    exit 77
}
: "${TCIO_TEST_TIMEOUT:=120}"
export TCIO_TEST_TIMEOUT
# The components this Open MPI has (all three are tried without ompi_info).
components=$(ompi_info --parsable 2>/dev/null |
             sed -n 's/^mca:\(osc\|pml\):\([a-z0-9_]*\):version:"mca:.*/\1\/\2/p')
[ -n "$components" ] || components=$(printf "osc/pt2pt\nosc/ucx\nosc/rdma\npml/ucx\n")
has() {
    echo "$components" | grep -qx "$1"
}

# Whether the run of log $1 is the documented refusal of a component that
# cannot create the rma transport's window here: at least one check
# failed, every failure is an open refused with TCIO_ERR_MPI (15), not a
# hang or a wrong byte, and paper_example, whose every open creates the
# window, is among them.  Checks may pass beside them: those that clear
# TCIO_TRANSPORT (auto is shm on one node: no MPI window) and those whose
# opens fail before the window is made create none (with osc/rdma and
# single_copy_mechanism=none, 6 of 22 passed, none calling
# MPI_Win_allocate).  A refusal where paper_example passed is a failure:
# the component creates windows, so a refusal there is a defect.
refused_at_open() {
    failures=$(grep -c ':F:' "$1")
    refusals=$(grep ':F:' "$1" | grep -c 'tcio_open_comm returned 15 \|open of .*: an MPI operation failed')
    [ "$failures" -gt 0 ] && [ "$failures" -eq "$refusals" ] &&
        grep ':F:paper_example:' "$1" | grep -q 'tcio_open_comm returned 15 '
}

fail=0
no_cma=OMPI_MCA_btl_vader_single_copy_mechanism=none
# Whether osc/rdma runs without cross-memory attach here anyway (the
# caller's settings, or the launcher's, say so): its refusals are then
# the documented ones in every osc/rdma leg.
rdma_without_cma=no
if [ "${OMPI_MCA_btl_vader_single_copy_mechanism:-}" = none ] ||
   grep -q "^MPI_TEST_ENV=.*$no_cma" ./tests/run-mpi.sh; then
    rdma_without_cma=yes
fi

# leg NAME NP LOG REFUSALS SETTING... : the suite on NP ranks under the
# settings; REFUSALS yes accepts refused_at_open's refusals (only osc/rdma
# without cross-memory attach: elsewhere a refused open is a defect).
leg() {
    name=$1 np=$2 log=$3 refusals=$4
    shift 4
    if env "$@" timeout 600 ./tests/run-mpi.sh "$np" ./tests/test_mpi >"$log" 2>&1; then
        echo "$name: $(grep -o 'Checks:.*' "$log")"
    elif [ "$refusals" = yes ] && refused_at_open "$log"; then
        echo "$name: every open that creates the window refused with TCIO_ERR_MPI (15)," \
             "as documented for a component that cannot create it here" \
             "($(grep -c ':F:' "$log") refused; $(grep -o 'Checks:.*' "$log"))"
    else
        echo "$name: FAILED:"
        tail -20 "$log"
        fail=1
    fi
}

one_node="TCIO_TRANSPORT=rma"
for osc in pt2pt ucx rdma; do
    if ! has "osc/$osc"; then
        echo "osc/$osc: not in this Open MPI (ompi_info), skipped"
        continue
    fi
    refusals=no
    [ "$osc" = rdma ] && refusals=$rdma_without_cma
    # transport_nodes and shared_slots test the shm transport.
    leg "osc/$osc" 2 "tests/osc-$osc.out" $refusals $one_node \
        CK_EXCLUDE_TAGS="transport_nodes shared_slots" OMPI_MCA_osc=$osc
done

if ! has osc/rdma; then
    :
elif [ $rdma_without_cma = yes ]; then
    echo "osc/rdma, $no_cma: the leg above ran with it"
else
    leg "osc/rdma, $no_cma" 2 tests/osc-rdma-no-cma.out yes $one_node "$no_cma" \
        CK_EXCLUDE_TAGS="transport_nodes shared_slots" OMPI_MCA_osc=rdma
fi

if has osc/ucx && has pml/ucx; then
    leg "osc/ucx and pml/ucx, two nodes (TCIO_TEST_NODES=2), 4 ranks" 4 tests/osc-ucx-nodes.out \
        no TCIO_TEST_NODES=2 OMPI_MCA_osc=ucx OMPI_MCA_pml=ucx \
        OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any \
        OMPI_MCA_osc_ucx_tls=any OMPI_MCA_osc_ucx_devices=any
else
    echo "osc/ucx with pml/ucx: not in this Open MPI (ompi_info), skipped"
fi
exit $fail
