# TCIO_CHECK_HDF5: parallel HDF5 for the MPI behind $CC, for
# bench/h5_pieces (a plain HDF5 program that writes small hyperslabs
# through HDF5's MPI-IO driver; tests/mpiio-programs.sh runs it).
#
# Debian installs one HDF5 per MPI side by side (libhdf5-mpich-dev,
# libhdf5-openmpi-dev), each with its pkg-config file hdf5-mpich /
# hdf5-openmpi; hdf5.pc is an alternative that follows the machine's
# default MPI, which need not be the MPI of $CC.  So the package named
# after MPI_FLAVOR is tried first, then plain hdf5 (other systems, or
# HDF5_CFLAGS/HDF5_LIBS given by the user).  Whatever is found must be
# parallel (H5Pset_fapl_mpio links) and must bring no MPI library that a
# plain program of $CC does not (the check of TCIO_CHECK_PNETCDF): an HDF5
# of the other MPI links, then fails at run time.
#
# Sets HDF5_CFLAGS, HDF5_LIBS, the automake conditional HAVE_HDF5, and
# have_hdf5 to yes or why not.  H5DIFF: the h5diff program (hdf5-tools),
# with which the test compares files; empty if not found.
AC_DEFUN([TCIO_CHECK_HDF5], [
  AC_REQUIRE([TCIO_MPI_FLAVOR])
  AC_REQUIRE([PKG_PROG_PKG_CONFIG])
  AC_ARG_WITH([hdf5],
    [AS_HELP_STRING([--without-hdf5], [do not build the parallel HDF5 program bench/h5_pieces])],
    [], [with_hdf5=check])
  AC_ARG_VAR([HDF5_CFLAGS], [C compiler flags for parallel HDF5, overriding pkg-config])
  AC_ARG_VAR([HDF5_LIBS], [linker flags for parallel HDF5, overriding pkg-config])
  have_hdf5="no (--without-hdf5)"
  AS_IF([test "x$with_hdf5" != xno], [
    have_hdf5="no (no pkg-config package hdf5-$MPI_FLAVOR or hdf5; Debian: libhdf5-$MPI_FLAVOR-dev)"
    tcio_hdf5_pkg=
    AS_IF([test -n "$HDF5_CFLAGS$HDF5_LIBS"], [tcio_hdf5_pkg="HDF5_CFLAGS/HDF5_LIBS"],
      [for tcio_p in hdf5-$MPI_FLAVOR hdf5; do
         AS_IF([test -n "$PKG_CONFIG" && $PKG_CONFIG --exists "$tcio_p" 2>/dev/null],
           [tcio_hdf5_pkg=$tcio_p
            HDF5_CFLAGS=`$PKG_CONFIG --cflags "$tcio_p"`
            HDF5_LIBS=`$PKG_CONFIG --libs "$tcio_p"`
            break])
       done])
    AS_IF([test -n "$tcio_hdf5_pkg"], [
      tcio_hdf5_sonames() {
        ldd "$[1]" 2>/dev/null | awk '{ print $[1] }' | grep -E '^lib(mpi|mpich|mpich[a-z]*)\.so' | sort -u
      }
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[MPI_Init(0, 0); MPI_Finalize();]])],
        [tcio_plain_mpi=`tcio_hdf5_sonames conftest$EXEEXT`])
      tcio_save_CPPFLAGS=$CPPFLAGS tcio_save_LIBS=$LIBS
      CPPFLAGS="$CPPFLAGS $HDF5_CFLAGS" LIBS="$HDF5_LIBS $LIBS"
      AC_MSG_CHECKING([for parallel HDF5 built with this MPI ($tcio_hdf5_pkg)])
      have_hdf5="no ($tcio_hdf5_pkg: H5Pset_fapl_mpio does not link: not a parallel HDF5)"
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <hdf5.h>]],
                       [[hid_t p = H5Pcreate(H5P_FILE_ACCESS);
                         return H5Pset_fapl_mpio(p, MPI_COMM_WORLD, MPI_INFO_NULL) < 0;]])],
        [tcio_with_hdf5=`tcio_hdf5_sonames conftest$EXEEXT`
         AS_IF([test "x$tcio_with_hdf5" = "x$tcio_plain_mpi"],
               [have_hdf5=yes],
               [have_hdf5="no ($tcio_hdf5_pkg is built with another MPI: it brings "`echo $tcio_with_hdf5`" where this MPI has "`echo $tcio_plain_mpi`")"])])
      CPPFLAGS=$tcio_save_CPPFLAGS LIBS=$tcio_save_LIBS
      AC_MSG_RESULT([$have_hdf5])
    ])
  ])
  AS_IF([test "x$have_hdf5" != xyes], [
    AS_IF([test "x$with_hdf5" = xyes], [AC_MSG_ERROR([--with-hdf5: $have_hdf5])])
    HDF5_CFLAGS= HDF5_LIBS=])
  AM_CONDITIONAL([HAVE_HDF5], [test "x$have_hdf5" = xyes])
  AC_SUBST([HDF5_WHY], ["$have_hdf5"])
  AC_PATH_PROG([H5DIFF], [h5diff])
])
