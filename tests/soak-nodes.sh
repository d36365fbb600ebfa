#!/bin/sh
# make check's two-"node" soak: the first SOAK_RUNS (default 6) runs of
# make soak-nodes (tests/soak.sh: 8 ranks on two "nodes", at most 4 slots
# per aggregator and per node, every odd seed with staged forwards), so
# that spills and early drains racing the nodes' forwards and fetches are
# byte-compared in every check, not only when someone runs the soak.
# make soak-nodes runs 12; SOAK_FIRST moves the window of seeds.
. "$(dirname "$0")/skip-in-distcheck.sh"
SOAK_NODES=2 SOAK_NP=8 SOAK_MAX_SLOTS=4 SOAK_RUNS=${SOAK_RUNS:-6}
export SOAK_NODES SOAK_NP SOAK_MAX_SLOTS SOAK_RUNS
exec "$(dirname "$0")/soak.sh"
