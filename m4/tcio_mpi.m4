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

# TCIO_MPI_FLAVOR: which MPI implementation is behind $CC, from the macros
# its mpi.h defines (Open MPI: OMPI_MAJOR_VERSION; MPICH and the MPIs built
# on it - Intel MPI, MVAPICH, Cray MPICH: MPICH_VERSION).  Sets MPI_FLAVOR
# to openmpi, mpich or unknown.
AC_DEFUN([TCIO_MPI_FLAVOR], [
  AC_MSG_CHECKING([which MPI implementation $CC uses])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#ifndef OMPI_MAJOR_VERSION
# error not Open MPI
#endif]])], [MPI_FLAVOR=openmpi],
    [AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#ifndef MPICH_VERSION
# error not MPICH
#endif]])], [MPI_FLAVOR=mpich], [MPI_FLAVOR=unknown])])
  AC_MSG_RESULT([$MPI_FLAVOR])
  AC_SUBST([MPI_FLAVOR])
])

# _TCIO_MPIEXEC_FLAVOR(PROGRAM): the implementation a launcher belongs to,
# from its --version text (Open MPI: "(OpenRTE)" or "Open MPI"; MPICH's
# Hydra: "HYDRA").  Prints openmpi, mpich or unknown.
AC_DEFUN([_TCIO_MPIEXEC_FLAVOR], [`$1 --version 2>&1 </dev/null | awk '
    /OpenRTE|Open MPI|Open-MPI/ { print "openmpi"; found = 1; exit }
    /HYDRA|MPICH/ { print "mpich"; found = 1; exit }
    END { if (!found) print "unknown" }'`])

# TCIO_PROG_MPIEXEC: the launcher that belongs to the MPI behind $CC.  A
# launcher of another MPI starts every rank as a singleton (MPI_COMM_WORLD
# of size 1), and tests then pass while testing nothing in parallel, so:
# MPIEXEC given by the user is taken as is (but checked when its flavour
# can be told); otherwise the candidates are the launcher with the
# compiler's suffix (mpicc.openmpi -> mpiexec.openmpi), the implementation's
# own names, and mpiexec/mpirun beside the compiler and on PATH, and the
# first whose --version names the same implementation wins.  Also sets
# MPIEXEC_FLAGS (what every launch needs: --oversubscribe for Open MPI, so
# that tests may run more ranks than cores).
AC_DEFUN([TCIO_PROG_MPIEXEC], [
  AC_REQUIRE([TCIO_MPI_FLAVOR])
  AC_ARG_VAR([MPIEXEC], [command that launches MPI programs for make check and the benchmark scripts (default: the launcher of the MPI behind CC)])
  AC_ARG_VAR([MPIEXEC_FLAGS], [options given to MPIEXEC before -n (default: --oversubscribe for Open MPI, none otherwise)])
  AC_MSG_CHECKING([for the mpiexec of $CC])
  tcio_cc_word=`set x $CC; echo "$[2]"`
  tcio_cc_path=`command -v "$tcio_cc_word" 2>/dev/null`
  tcio_cc_dir=`AS_DIRNAME(["${tcio_cc_path:-$tcio_cc_word}"])`
  tcio_cc_base=`basename "$tcio_cc_word"`
  tcio_cc_suffix=
  case $tcio_cc_base in
    *.*) tcio_cc_suffix=.`echo "$tcio_cc_base" | sed 's/^[[^.]]*\.//'` ;;
  esac
  AS_IF([test -n "$MPIEXEC"], [
    tcio_launcher_flavor=_TCIO_MPIEXEC_FLAVOR([$MPIEXEC])
    AC_MSG_RESULT([$MPIEXEC (given; $tcio_launcher_flavor)])
    AS_IF([test "$MPI_FLAVOR" != unknown && test "$tcio_launcher_flavor" != unknown &&
           test "$tcio_launcher_flavor" != "$MPI_FLAVOR"],
      [AC_MSG_ERROR([MPIEXEC=$MPIEXEC is $tcio_launcher_flavor's launcher, but $CC uses $MPI_FLAVOR: every rank would run alone])])
  ], [
    case $MPI_FLAVOR in
      openmpi) tcio_names="mpiexec.openmpi mpirun.openmpi" ;;
      mpich)   tcio_names="mpiexec.mpich mpirun.mpich mpiexec.hydra" ;;
      *)       tcio_names= ;;
    esac
    tcio_candidates=
    AS_IF([test -n "$tcio_cc_suffix"],
      [tcio_candidates="$tcio_cc_dir/mpiexec$tcio_cc_suffix $tcio_cc_dir/mpirun$tcio_cc_suffix"])
    tcio_candidates="$tcio_candidates $tcio_names $tcio_cc_dir/mpiexec $tcio_cc_dir/mpirun mpiexec mpirun"
    for tcio_c in $tcio_candidates; do
      tcio_p=`command -v "$tcio_c" 2>/dev/null` || continue
      test -n "$tcio_p" || continue
      tcio_launcher_flavor=_TCIO_MPIEXEC_FLAVOR([$tcio_p])
      AS_IF([test "$MPI_FLAVOR" = unknown || test "$tcio_launcher_flavor" = "$MPI_FLAVOR"],
            [MPIEXEC=$tcio_p; break])
    done
    AS_IF([test -z "$MPIEXEC"],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([no mpiexec of $MPI_FLAVOR found for $CC; set MPIEXEC to its launcher])])
    AC_MSG_RESULT([$MPIEXEC ($tcio_launcher_flavor)])
    AS_IF([test "$MPI_FLAVOR" = unknown],
      [AC_MSG_WARN([cannot tell which MPI $CC uses: make check takes $MPIEXEC and checks that it starts the ranks it is asked for])])
  ])
  AS_IF([test "${MPIEXEC_FLAGS+set}" != set],
    [AS_CASE([$MPI_FLAVOR], [openmpi], [MPIEXEC_FLAGS=--oversubscribe], [MPIEXEC_FLAGS=])])
])

# TCIO_CHECK_PNETCDF: PnetCDF for tcio_bench's method 4, only when it was
# built with the MPI behind $CC.  A PnetCDF of another MPI (Debian's is
# built with Open MPI) still links, its libmpi pulled in beside $CC's, and
# then fails at run time: so the test program's shared libraries (ldd) must
# name no MPI library that a plain MPI program does not.  Sets
# PNETCDF_CPPFLAGS and PNETCDF_LIBS, and have_pnetcdf to yes or why not.
AC_DEFUN([TCIO_CHECK_PNETCDF], [
  AC_ARG_WITH([pnetcdf],
    [AS_HELP_STRING([--without-pnetcdf], [do not build tcio_bench's PnetCDF method])],
    [], [with_pnetcdf=check])
  have_pnetcdf="no (--without-pnetcdf)"
  PNETCDF_CPPFLAGS=
  PNETCDF_LIBS=
  AS_IF([test "x$with_pnetcdf" != xno], [
    have_pnetcdf="no (pnetcdf.h or -lpnetcdf not found)"
    tcio_mpi_sonames() {
      ldd "$[1]" 2>/dev/null | awk '{ print $[1] }' | grep -E '^lib(mpi|mpich|mpich[a-z]*)\.so' | sort -u
    }
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[MPI_Init(0, 0); MPI_Finalize();]])],
      [tcio_plain_mpi=`tcio_mpi_sonames conftest$EXEEXT`])
    tcio_save_LIBS=$LIBS
    LIBS="-lpnetcdf $LIBS"
    AC_MSG_CHECKING([for PnetCDF built with this MPI])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <pnetcdf.h>]],
                     [[int id; return ncmpi_create(MPI_COMM_WORLD, "x", NC_CLOBBER, MPI_INFO_NULL, &id);]])],
      [tcio_with_pnetcdf=`tcio_mpi_sonames conftest$EXEEXT`
       AS_IF([test "x$tcio_with_pnetcdf" = "x$tcio_plain_mpi"],
             [have_pnetcdf=yes],
             [have_pnetcdf="no (built with another MPI: it brings "`echo $tcio_with_pnetcdf`" where this MPI has "`echo $tcio_plain_mpi`")"])])
    LIBS=$tcio_save_LIBS
    AC_MSG_RESULT([$have_pnetcdf])
  ])
  AS_IF([test "x$have_pnetcdf" = xyes],
    [PNETCDF_CPPFLAGS=-DTCIO_HAVE_PNETCDF PNETCDF_LIBS=-lpnetcdf],
    [AS_IF([test "x$with_pnetcdf" = xyes], [AC_MSG_ERROR([--with-pnetcdf: $have_pnetcdf])])])
  AC_SUBST([PNETCDF_CPPFLAGS])
  AC_SUBST([PNETCDF_LIBS])
])
