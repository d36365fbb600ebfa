# Fortran module: configure.ac runs TCIO_FORTRAN_COMPILER, AC_PROG_FC([false])
# and TCIO_FORTRAN in this order (AC_PROG_FC at the top level, where libtool
# hooks its Fortran set-up onto it).
#
# TCIO_FORTRAN_COMPILER: choose FC, the Fortran compiler for the MPI of CC,
# unless --disable-fortran.
#
# The MPI Fortran wrapper is taken from the name of the C wrapper, so that
# CC=mpicc.mpich pairs with mpifort.mpich/mpif90.mpich, mpicc.openmpi with
# mpifort.openmpi/mpif90.openmpi, plain mpicc with mpifort/mpif90 (a path
# is kept: /opt/mpi/bin/mpicc pairs with /opt/mpi/bin/mpifort first).  FC
# set by the user wins.  The compiler is then checked to compile `use mpi'
# programs of the same MPI as CC: MPI_VERSION, MPI_SUBVERSION and
# MPI_MAX_LIBRARY_VERSION_STRING (which differs between MPICH and Open MPI)
# must agree between mpi.h and the Fortran mpi module (TCIO_FORTRAN).  The C stubs read
# Fortran array descriptors, so CC must also provide ISO_Fortran_binding.h
# of the same compiler family.  Sets BUILD_FORTRAN (automake conditional),
# TCIO_BUILD_FORTRAN=yes/no (AC_SUBST) and TCIO_FC_DEFS (-DTCIO_HAVE_MPI_F08 when
# the module can offer the mpi_f08 handle types).
AC_DEFUN([TCIO_FORTRAN_COMPILER], [
  AC_ARG_ENABLE([fortran],
    [AS_HELP_STRING([--disable-fortran],
      [do not build the Fortran module (default: build it when a Fortran
       compiler for the MPI of CC is found; --enable-fortran makes a
       missing one an error)])],
    [], [enable_fortran=check])
  tcio_fortran=no
  tcio_have_f08=no
  tcio_fortran_why="disabled"
  TCIO_FC_DEFS=
  AS_IF([test "x$enable_fortran" != xno], [
    AS_IF([test -z "$FC"], [
      tcio_cc_word=`echo "$CC" | sed 's/ .*//'`
      tcio_cc_dir=`AS_DIRNAME(["$tcio_cc_word"])`
      tcio_cc_base=`basename "$tcio_cc_word"`
      AS_CASE([$tcio_cc_base],
        [mpicc.*], [tcio_sfx=".${tcio_cc_base#mpicc.}"
                    tcio_fc_names="mpifort$tcio_sfx mpif90$tcio_sfx"],
        [mpiicc*], [tcio_fc_names="mpiifort mpiifx"],
        [tcio_fc_names="mpifort mpif90"])
      tcio_fc_try=
      AS_CASE([$tcio_cc_word], [*/*],
        [for tcio_n in $tcio_fc_names; do tcio_fc_try="$tcio_fc_try $tcio_cc_dir/$tcio_n"; done])
      tcio_fc_try="$tcio_fc_try $tcio_fc_names"
      AC_MSG_CHECKING([for the MPI Fortran compiler of $CC])
      for tcio_n in $tcio_fc_try; do
        AS_CASE([$tcio_n],
          [*/*], [AS_IF([test -x "$tcio_n"], [FC=$tcio_n])],
          [AS_IF([command -v "$tcio_n" >/dev/null 2>&1], [FC=$tcio_n])])
        test -n "$FC" && break
      done
      AS_IF([test -n "$FC"], [AC_MSG_RESULT([$FC])], [AC_MSG_RESULT([none])])
    ])
  ])
  # AC_PROG_FC follows, unconditionally (automake needs FC for the Fortran
  # sources even when they are not built); with no compiler to be used FC
  # is `false', which makes the checks of TCIO_FORTRAN fail softly.
  AS_IF([test "x$enable_fortran" = xno || test -z "$FC"], [FC=false])
])

AC_DEFUN([TCIO_FORTRAN], [
  AS_IF([test "x$FC" != xfalse], [
    AC_LANG_PUSH([Fortran])
    AC_MSG_CHECKING([whether $FC compiles and links `use mpi' programs])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([], [[      use mpi
      integer :: ierr
      call MPI_Init(ierr)
      call MPI_Finalize(ierr)]])],
      [AC_MSG_RESULT([yes]); tcio_fortran=yes],
      [AC_MSG_RESULT([no]); tcio_fortran_why="$FC cannot build MPI programs"])
    AS_IF([test "x$tcio_fortran" = xyes],
      [AC_FC_SRCEXT([F90], [],
        [tcio_fortran=no; tcio_fortran_why="$FC cannot compile .F90 files"])])
    AC_LANG_POP([Fortran])
  ], [test "x$enable_fortran" != xno],
     [tcio_fortran_why="no MPI Fortran compiler found for $CC (set FC)"])
  AS_IF([test "x$tcio_fortran" = xyes], [
    AC_COMPUTE_INT([tcio_c_mpi_version], [MPI_VERSION], [[#include <mpi.h>]], [tcio_c_mpi_version=0])
    AC_COMPUTE_INT([tcio_c_mpi_subversion], [MPI_SUBVERSION], [[#include <mpi.h>]], [tcio_c_mpi_subversion=0])
    AC_COMPUTE_INT([tcio_c_mpi_libstr], [MPI_MAX_LIBRARY_VERSION_STRING], [[#include <mpi.h>]], [tcio_c_mpi_libstr=0])
    AC_LANG_PUSH([Fortran])
    AC_MSG_CHECKING([whether $FC uses the same MPI as $CC])
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [[      use mpi
      integer, parameter :: same = 1 / merge(1, 0, &
          MPI_VERSION == $tcio_c_mpi_version .and. &
          MPI_SUBVERSION == $tcio_c_mpi_subversion .and. &
          MPI_MAX_LIBRARY_VERSION_STRING == $tcio_c_mpi_libstr - 1)
      print *, same]])],
      [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no]); tcio_fortran=no
       tcio_fortran_why="$FC and $CC belong to different MPI libraries (set FC)"])
    AC_LANG_POP([Fortran])
  ])
  AS_IF([test "x$tcio_fortran" = xyes], [
    AC_CHECK_HEADER([ISO_Fortran_binding.h], [],
      [tcio_fortran=no; tcio_fortran_why="$CC has no ISO_Fortran_binding.h"])
  ])
  AS_IF([test "x$tcio_fortran" = xyes], [
    AC_LANG_PUSH([Fortran])
    AC_MSG_CHECKING([whether $FC supports assumed-type, assumed-rank dummies])
    AC_COMPILE_IFELSE([[module conftest_mod
  use, intrinsic :: iso_c_binding
  interface
    integer(c_int) function f(a) bind(C)
      import :: c_int
      type(*), dimension(..), intent(in) :: a
    end function
  end interface
end module]],
      [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no]); tcio_fortran=no
       tcio_fortran_why="$FC lacks TYPE(*), DIMENSION(..) (Fortran 2018 / TS 29113)"])
    rm -f conftest_mod.mod
    tcio_have_f08=no
    AC_MSG_CHECKING([whether $FC has the mpi_f08 module])
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [[      use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Info, MPI_COMM_WORLD
      type(MPI_Comm) :: c
      c = MPI_COMM_WORLD
      print *, c%MPI_VAL]])],
      [tcio_have_f08=yes])
    AC_MSG_RESULT([$tcio_have_f08])
    AC_LANG_POP([Fortran])
  ])
  AS_IF([test "x$tcio_fortran" = xyes && test "x$tcio_have_f08" = xyes],
    [TCIO_FC_DEFS=-DTCIO_HAVE_MPI_F08
     tcio_fortran_why="with mpi_f08 handles"],
    [test "x$tcio_fortran" = xyes], [tcio_fortran_why="integer handles only (no mpi_f08)"])
  AS_IF([test "x$enable_fortran" = xyes && test "x$tcio_fortran" != xyes],
    [AC_MSG_ERROR([--enable-fortran: $tcio_fortran_why])])
  AC_SUBST([TCIO_FC_DEFS])
  AM_CONDITIONAL([BUILD_FORTRAN], [test "x$tcio_fortran" = xyes])
  AM_CONDITIONAL([BUILD_FORTRAN_F08], [test "x$tcio_fortran$tcio_have_f08" = xyesyes])
  AC_SUBST([TCIO_BUILD_FORTRAN], [$tcio_fortran])
])
