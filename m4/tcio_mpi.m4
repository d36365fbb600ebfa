# TCIO_PROG_MPICC: default CC to the MPI wrapper (mpicc) when the user did
# not choose a compiler.
AC_DEFUN([TCIO_PROG_MPICC], [
  AS_IF([test -z "$CC"], [AC_CHECK_PROGS([CC], [mpicc mpcc mpiicc])])
])

# TCIO_CHECK_MPI: fail early, with a clear message, when CC cannot build
# an MPI-3 program (MPI_Win_allocate is the newest call libtcio needs).
AC_DEFUN([TCIO_CHECK_MPI], [
  AC_MSG_CHECKING([whether $CC builds MPI-3 programs])
  AC_LINK_IFELSE(
    [AC_LANG_PROGRAM([[#include <mpi.h>]],
                     [[void *base; MPI_Win w;
                       MPI_Init(0, 0);
                       MPI_Win_allocate(0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
                       MPI_Finalize();]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([$CC cannot compile and link MPI-3 programs; install MPICH (Debian: mpich libmpich-dev) or set CC=mpicc])])
])
