! tcio.F90 - the Fortran interface of libtcio (module tcio).
!
! Every call of include/tcio.h, with the same names, arguments and error
! codes; see doc/fortran.md for the rules and tcio.h for what each call does.
!
!   * Calls that return an int in C are integer functions here, returning
!     TCIO_SUCCESS (0) or a TCIO_ERR_* code.  tcio_open returns a
!     type(tcio_file) that tcio_is_open tells apart from a failed open.
!   * MPI handles: each call that takes a communicator, datatype or info
!     object accepts both the integers of `use mpi' and the derived types of
!     `use mpi_f08' (when the MPI library has mpi_f08).  The C stubs convert
!     them with MPI_Comm_f2c, MPI_Type_f2c and MPI_Info_f2c.
!   * Buffers are TYPE(*), DIMENSION(..) (Fortran 2018, TS 29113): any type,
!     any rank, scalars too, passed without a copy, as MPI takes a choice
!     buffer.  A scalar or an array element stands for the memory that
!     follows it (sequence association): tcio_write_at(fh, off, u(1, 0, j),
!     5 * n, MPI_DOUBLE_PRECISION) writes the row that starts there, as
!     MPI_File_write_at does; that is trusted, not checked.  An array
!     (whole, or a section) is checked: COUNT elements of DATATYPE must fit
!     in it (TCIO_ERR_BAD_ARG otherwise).  Writes take non-contiguous
!     sections too (they are copied, as tcio_write copies anyway); reads are
!     lazy, so their buffer must be contiguous (TCIO_ERR_BAD_ARG otherwise)
!     and should be declared ASYNCHRONOUS: it holds its data only after
!     tcio_fetch, tcio_flush or tcio_close returns.  tcio_last_error
!     explains these refusals of the module like libtcio's own.
!   * tcio_last_error(message) fills a character(len=*) MESSAGE (optional);
!     tcio_version() and tcio_error_string(code) return allocatable strings;
!     the C macro TCIO_VERSION is the parameter tcio_version_string.
!   * Offsets and lengths are integer(MPI_OFFSET_KIND), as in MPI-IO; they
!     reach C as long long (tcio_fortran.c checks that MPI_Offset is one).
! The version macros come from the generated tcio_version.h (C #defines,
! which the preprocessor substitutes here; they are upper case, the
! Fortran names below lower case, and cpp is case-sensitive).
#include "tcio_version.h"
module tcio
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_int, c_long_long, &
      c_char, c_null_char, c_associated, c_f_pointer, c_size_t
  use mpi, only: MPI_OFFSET_KIND
#ifdef TCIO_HAVE_MPI_F08
  use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Info
#endif
  implicit none
  private

  ! ---- constants of tcio.h (tests/test_fortran checks them against C) ----
  integer, parameter, public :: tcio_version_major = TCIO_VERSION_MAJOR
  integer, parameter, public :: tcio_version_minor = TCIO_VERSION_MINOR
  integer, parameter, public :: tcio_version_patch = TCIO_VERSION_PATCH
  ! C's TCIO_VERSION: Fortran names ignore case, so the string cannot share
  ! the name of the function tcio_version.
  character(len=*), parameter, public :: tcio_version_string = TCIO_VERSION
  integer, parameter, public :: TCIO_MODE_TRUNC = 1073741824  ! 0x40000000
  integer, parameter, public :: TCIO_MAX_ERROR_STRING = 512

  integer, parameter, public :: TCIO_SUCCESS = 0
  integer, parameter, public :: TCIO_ERR_BAD_HANDLE = 1
  integer, parameter, public :: TCIO_ERR_BAD_ARG = 2
  integer, parameter, public :: TCIO_ERR_BAD_TYPE = 3
  integer, parameter, public :: TCIO_ERR_BAD_MODE = 4
  integer, parameter, public :: TCIO_ERR_READ_ONLY = 5
  integer, parameter, public :: TCIO_ERR_WRITE_ONLY = 6
  integer, parameter, public :: TCIO_ERR_BAD_CONFIG = 7
  integer, parameter, public :: TCIO_ERR_NO_MEMORY = 8
  integer, parameter, public :: TCIO_ERR_NO_SUCH_FILE = 9
  integer, parameter, public :: TCIO_ERR_ACCESS = 10
  integer, parameter, public :: TCIO_ERR_FILE_EXISTS = 11
  integer, parameter, public :: TCIO_ERR_OPEN = 12
  integer, parameter, public :: TCIO_ERR_NO_SPACE = 13
  integer, parameter, public :: TCIO_ERR_IO = 14
  integer, parameter, public :: TCIO_ERR_MPI = 15
  integer, parameter, public :: TCIO_ERR_REMOTE = 16
  integer, parameter, public :: TCIO_ERR_COUNT = 17

  ! An open file: the C handle.  Default-initialised to "no file".
  type, public :: tcio_file
    private
    type(c_ptr) :: handle = c_null_ptr
  end type tcio_file

  public :: tcio_open, tcio_is_open, tcio_open_comm
  public :: tcio_write, tcio_write_at, tcio_read, tcio_read_at
  public :: tcio_seek, tcio_flush, tcio_fetch, tcio_close
  public :: tcio_sync, tcio_get_size, tcio_set_size
  public :: tcio_close_begin, tcio_close_end
  public :: tcio_prefetch, tcio_read_session, tcio_progress
  public :: tcio_error_string, tcio_last_error, tcio_get_info, tcio_version

  interface tcio_open_comm
    module procedure tcio_open_comm_int
#ifdef TCIO_HAVE_MPI_F08
    module procedure tcio_open_comm_f08
#endif
  end interface
  interface tcio_write
    module procedure tcio_write_int
#ifdef TCIO_HAVE_MPI_F08
    module procedure tcio_write_f08
#endif
  end interface
  interface tcio_write_at
    module procedure tcio_write_at_int
#ifdef TCIO_HAVE_MPI_F08
    module procedure tcio_write_at_f08
#endif
  end interface
  interface tcio_read
    module procedure tcio_read_int
#ifdef TCIO_HAVE_MPI_F08
    module procedure tcio_read_f08
#endif
  end interface
  interface tcio_read_at
    module procedure tcio_read_at_int
#ifdef TCIO_HAVE_MPI_F08
    module procedure tcio_read_at_f08
#endif
  end interface

  interface tcio_get_info
    module procedure tcio_get_info_int
#ifdef TCIO_HAVE_MPI_F08
    module procedure tcio_get_info_f08
#endif
  end interface

  ! ---- the C side: stubs in tcio_fortran.c and libtcio itself ----
  interface
    type(c_ptr) function c_open(fname, mode) bind(C, name="tcio_open")
      import :: c_ptr, c_char, c_int
      character(kind=c_char), intent(in) :: fname(*)
      integer(c_int), value :: mode
    end function
    integer(c_int) function c_open_comm(comm, fname, mode, info, fh) &
        bind(C, name="tcio_f_open_comm")
      import :: c_ptr, c_char, c_int
      integer(c_int), value :: comm, mode, info
      character(kind=c_char), intent(in) :: fname(*)
      type(c_ptr), intent(out) :: fh
    end function
    integer(c_int) function c_write(fh, data, count, datatype) bind(C, name="tcio_f_write")
      import :: c_ptr, c_int
      type(c_ptr), value :: fh
      type(*), dimension(..), intent(in) :: data
      integer(c_int), value :: count, datatype
    end function
    integer(c_int) function c_write_at(fh, offset, data, count, datatype) &
        bind(C, name="tcio_f_write_at")
      import :: c_ptr, c_int, c_long_long
      type(c_ptr), value :: fh
      integer(c_long_long), value :: offset
      type(*), dimension(..), intent(in) :: data
      integer(c_int), value :: count, datatype
    end function
    integer(c_int) function c_read(fh, data, count, datatype) bind(C, name="tcio_f_read")
      import :: c_ptr, c_int
      type(c_ptr), value :: fh
      type(*), dimension(..), intent(inout), asynchronous :: data
      integer(c_int), value :: count, datatype
    end function
    integer(c_int) function c_read_at(fh, offset, data, count, datatype) &
        bind(C, name="tcio_f_read_at")
      import :: c_ptr, c_int, c_long_long
      type(c_ptr), value :: fh
      integer(c_long_long), value :: offset
      type(*), dimension(..), intent(inout), asynchronous :: data
      integer(c_int), value :: count, datatype
    end function
    integer(c_int) function c_seek(fh, offset, whence) bind(C, name="tcio_seek")
      import :: c_ptr, c_int, c_long_long
      type(c_ptr), value :: fh
      integer(c_long_long), value :: offset
      integer(c_int), value :: whence
    end function
    integer(c_int) function c_flush(fh) bind(C, name="tcio_flush")
      import :: c_ptr, c_int
      type(c_ptr), value :: fh
    end function
    integer(c_int) function c_sync(fh) bind(C, name="tcio_sync")
      import :: c_ptr, c_int
      type(c_ptr), value :: fh
    end function
    integer(c_int) function c_get_size(fh, size) bind(C, name="tcio_get_size")
      import :: c_ptr, c_int, c_long_long
      type(c_ptr), value :: fh
      integer(c_long_long), intent(inout) :: size
    end function
    integer(c_int) function c_set_size(fh, size) bind(C, name="tcio_set_size")
      import :: c_ptr, c_int, c_long_long
      type(c_ptr), value :: fh
      integer(c_long_long), value :: size
    end function
    integer(c_int) function c_fetch(fh) bind(C, name="tcio_fetch")
      import :: c_ptr, c_int
      type(c_ptr), value :: fh
    end function
    integer(c_int) function c_close(fh) bind(C, name="tcio_close")
      import :: c_ptr, c_int
      type(c_ptr), value :: fh
    end function
    integer(c_int) function c_handle_state(fh) bind(C, name="tcio_fortran_handle_state")
      import :: c_ptr, c_int
      type(c_ptr), value :: fh
    end function
    integer(c_int) function c_close_begin(fh) bind(C, name="tcio_close_begin")
      import :: c_ptr, c_int
      type(c_ptr), value :: fh
    end function
    integer(c_int) function c_close_end(fh) bind(C, name="tcio_close_end")
      import :: c_ptr, c_int
      type(c_ptr), value :: fh
    end function
    integer(c_int) function c_prefetch(fh, offset, length) bind(C, name="tcio_prefetch")
      import :: c_ptr, c_int, c_long_long
      type(c_ptr), value :: fh
      integer(c_long_long), value :: offset, length
    end function
    integer(c_int) function c_read_session(fh, offset, length) &
        bind(C, name="tcio_read_session")
      import :: c_ptr, c_int, c_long_long
      type(c_ptr), value :: fh
      integer(c_long_long), value :: offset, length
    end function
    integer(c_int) function c_progress(fh) bind(C, name="tcio_progress")
      import :: c_ptr, c_int
      type(c_ptr), value :: fh
    end function
    type(c_ptr) function c_error_string(code) bind(C, name="tcio_error_string")
      import :: c_ptr, c_int
      integer(c_int), value :: code
    end function
    integer(c_int) function c_last_error(buf, length) bind(C, name="tcio_last_error")
      import :: c_int, c_char
      character(kind=c_char) :: buf(*)
      integer(c_int), value :: length
    end function
    integer(c_int) function c_get_info(fh, info) bind(C, name="tcio_f_get_info")
      import :: c_ptr, c_int
      type(c_ptr), value :: fh
      integer(c_int), intent(out) :: info
    end function
    type(c_ptr) function c_version() bind(C, name="tcio_version")
      import :: c_ptr
    end function
    integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
    end function
  end interface

contains

  ! A Fortran string (trailing blanks dropped) as a NUL-terminated C string.
  pure function c_string(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s) // c_null_char
  end function

  ! The NUL-terminated C string at P as a Fortran string.
  function f_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  ! ---- open and close ----

  ! tcio_open: collective on MPI_COMM_WORLD; check the result with tcio_is_open.
  function tcio_open(fname, mode) result(fh)
    character(len=*), intent(in) :: fname
    integer, intent(in) :: mode
    type(tcio_file) :: fh
    fh%handle = c_open(c_string(fname), mode)
  end function

  ! Whether FH holds an open file: false after a failed tcio_open or
  ! tcio_open_comm, after tcio_close or tcio_close_end, and for a
  ! never-opened variable (true between tcio_close_begin and tcio_close_end).
  logical function tcio_is_open(fh)
    type(tcio_file), intent(in) :: fh
    tcio_is_open = c_associated(fh%handle)
  end function

  integer function tcio_open_comm_int(comm, fname, mode, info, fh) result(rc)
    integer, intent(in) :: comm, mode, info
    character(len=*), intent(in) :: fname
    type(tcio_file), intent(out) :: fh
    rc = c_open_comm(comm, c_string(fname), mode, info, fh%handle)
  end function

  ! tcio_close frees the handle even on error; FH is reset to "no file",
  ! except for a closing handle it refuses (TCIO_ERR_BAD_HANDLE), which
  ! stays for tcio_close_end, the only call that can end its close.
  integer function tcio_close(fh) result(rc)
    type(tcio_file), intent(inout) :: fh
    rc = c_close(fh%handle)
    if (rc /= TCIO_ERR_BAD_HANDLE) then
      fh%handle = c_null_ptr
    else if (c_handle_state(fh%handle) /= 2) then
      fh%handle = c_null_ptr
    end if
  end function

  ! tcio_close_begin: FH stays as it is, closing, for tcio_close_end.
  integer function tcio_close_begin(fh) result(rc)
    type(tcio_file), intent(in) :: fh
    rc = c_close_begin(fh%handle)
  end function

  ! tcio_close_end frees the handle even on error (FH is then reset to "no
  ! file"), except for an open handle it refuses (TCIO_ERR_BAD_HANDLE: not
  ! closing), which stays for tcio_close or tcio_close_begin.
  integer function tcio_close_end(fh) result(rc)
    type(tcio_file), intent(inout) :: fh
    rc = c_close_end(fh%handle)
    if (rc /= TCIO_ERR_BAD_HANDLE) then
      fh%handle = c_null_ptr
    else if (c_handle_state(fh%handle) /= 1) then
      fh%handle = c_null_ptr
    end if
  end function

  ! ---- data, integer handles ----

  integer function tcio_write_int(fh, data, count, datatype) result(rc)
    type(tcio_file), intent(in) :: fh
    type(*), dimension(..), intent(in) :: data
    integer, intent(in) :: count, datatype
    rc = c_write(fh%handle, data, count, datatype)
  end function

  integer function tcio_write_at_int(fh, offset, data, count, datatype) result(rc)
    type(tcio_file), intent(in) :: fh
    integer(MPI_OFFSET_KIND), intent(in) :: offset
    type(*), dimension(..), intent(in) :: data
    integer, intent(in) :: count, datatype
    rc = c_write_at(fh%handle, int(offset, c_long_long), data, count, datatype)
  end function

  integer function tcio_read_int(fh, data, count, datatype) result(rc)
    type(tcio_file), intent(in) :: fh
    type(*), dimension(..), intent(inout), asynchronous :: data
    integer, intent(in) :: count, datatype
    rc = c_read(fh%handle, data, count, datatype)
  end function

  integer function tcio_read_at_int(fh, offset, data, count, datatype) result(rc)
    type(tcio_file), intent(in) :: fh
    integer(MPI_OFFSET_KIND), intent(in) :: offset
    type(*), dimension(..), intent(inout), asynchronous :: data
    integer, intent(in) :: count, datatype
    rc = c_read_at(fh%handle, int(offset, c_long_long), data, count, datatype)
  end function

#ifdef TCIO_HAVE_MPI_F08
  ! ---- the same with mpi_f08 handles ----

  integer function tcio_open_comm_f08(comm, fname, mode, info, fh) result(rc)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: fname
    integer, intent(in) :: mode
    type(MPI_Info), intent(in) :: info
    type(tcio_file), intent(out) :: fh
    rc = c_open_comm(comm%MPI_VAL, c_string(fname), mode, info%MPI_VAL, fh%handle)
  end function

  integer function tcio_write_f08(fh, data, count, datatype) result(rc)
    type(tcio_file), intent(in) :: fh
    type(*), dimension(..), intent(in) :: data
    integer, intent(in) :: count
    type(MPI_Datatype), intent(in) :: datatype
    rc = c_write(fh%handle, data, count, datatype%MPI_VAL)
  end function

  integer function tcio_write_at_f08(fh, offset, data, count, datatype) result(rc)
    type(tcio_file), intent(in) :: fh
    integer(MPI_OFFSET_KIND), intent(in) :: offset
    type(*), dimension(..), intent(in) :: data
    integer, intent(in) :: count
    type(MPI_Datatype), intent(in) :: datatype
    rc = c_write_at(fh%handle, int(offset, c_long_long), data, count, datatype%MPI_VAL)
  end function

  integer function tcio_read_f08(fh, data, count, datatype) result(rc)
    type(tcio_file), intent(in) :: fh
    type(*), dimension(..), intent(inout), asynchronous :: data
    integer, intent(in) :: count
    type(MPI_Datatype), intent(in) :: datatype
    rc = c_read(fh%handle, data, count, datatype%MPI_VAL)
  end function

  integer function tcio_read_at_f08(fh, offset, data, count, datatype) result(rc)
    type(tcio_file), intent(in) :: fh
    integer(MPI_OFFSET_KIND), intent(in) :: offset
    type(*), dimension(..), intent(inout), asynchronous :: data
    integer, intent(in) :: count
    type(MPI_Datatype), intent(in) :: datatype
    rc = c_read_at(fh%handle, int(offset, c_long_long), data, count, datatype%MPI_VAL)
  end function
#endif

  ! ---- position, completion, hints ----

  integer function tcio_seek(fh, offset, whence) result(rc)
    type(tcio_file), intent(in) :: fh
    integer(MPI_OFFSET_KIND), intent(in) :: offset
    integer, intent(in) :: whence
    rc = c_seek(fh%handle, int(offset, c_long_long), whence)
  end function

  integer function tcio_flush(fh) result(rc)
    type(tcio_file), intent(in) :: fh
    rc = c_flush(fh%handle)
  end function

  ! Collective: every rank's writes so far into the file, which stays open.
  integer function tcio_sync(fh) result(rc)
    type(tcio_file), intent(in) :: fh
    rc = c_sync(fh%handle)
  end function

  ! Local: the file's size as this rank knows it (agreed at the last flush,
  ! sync or set_size, and this rank's own writes since).  SIZE is set only
  ! on success.
  integer function tcio_get_size(fh, size) result(rc)
    type(tcio_file), intent(in) :: fh
    integer(MPI_OFFSET_KIND), intent(inout) :: size
    integer(c_long_long) :: c_size
    c_size = int(size, c_long_long)
    rc = c_get_size(fh%handle, c_size)
    if (rc == TCIO_SUCCESS) size = int(c_size, MPI_OFFSET_KIND)
  end function

  ! Collective, the same SIZE on every rank: truncate or extend the file.
  integer function tcio_set_size(fh, size) result(rc)
    type(tcio_file), intent(in) :: fh
    integer(MPI_OFFSET_KIND), intent(in) :: size
    rc = c_set_size(fh%handle, int(size, c_long_long))
  end function

  integer function tcio_fetch(fh) result(rc)
    type(tcio_file), intent(in) :: fh
    rc = c_fetch(fh%handle)
  end function

  integer function tcio_prefetch(fh, offset, length) result(rc)
    type(tcio_file), intent(in) :: fh
    integer(MPI_OFFSET_KIND), intent(in) :: offset, length
    rc = c_prefetch(fh%handle, int(offset, c_long_long), int(length, c_long_long))
  end function

  integer function tcio_read_session(fh, offset, length) result(rc)
    type(tcio_file), intent(in) :: fh
    integer(MPI_OFFSET_KIND), intent(in) :: offset, length
    rc = c_read_session(fh%handle, int(offset, c_long_long), &
        int(length, c_long_long))
  end function

  integer function tcio_progress(fh) result(rc)
    type(tcio_file), intent(in) :: fh
    rc = c_progress(fh%handle)
  end function

  ! A one-line English message for any code.
  function tcio_error_string(code) result(message)
    integer, intent(in) :: code
    character(len=:), allocatable :: message
    message = f_string(c_error_string(code))
  end function

  ! The code of this rank's last failure (TCIO_SUCCESS if none) and, in
  ! MESSAGE when given, why it failed (blank-padded, cut to len(MESSAGE);
  ! TCIO_MAX_ERROR_STRING - 1 characters hold any message).  Local.
  integer function tcio_last_error(message) result(code)
    character(len=*), intent(out), optional :: message
    character(kind=c_char) :: buf(TCIO_MAX_ERROR_STRING)
    integer :: i
    code = c_last_error(buf, TCIO_MAX_ERROR_STRING)
    if (present(message)) then
      message = ''
      do i = 1, min(len(message), TCIO_MAX_ERROR_STRING)
        if (buf(i) == c_null_char) exit
        message(i:i) = buf(i)
      end do
    end if
  end function

  ! The settings in effect, as a new info object for MPI_Info_free
  ! (MPI_INFO_NULL on failure).  Local.
  integer function tcio_get_info_int(fh, info) result(rc)
    type(tcio_file), intent(in) :: fh
    integer, intent(out) :: info
    rc = c_get_info(fh%handle, info)
  end function

#ifdef TCIO_HAVE_MPI_F08
  integer function tcio_get_info_f08(fh, info) result(rc)
    type(tcio_file), intent(in) :: fh
    type(MPI_Info), intent(out) :: info
    rc = c_get_info(fh%handle, info%MPI_VAL)
  end function
#endif

  ! The version of the library the program runs with ("MAJOR.MINOR.PATCH").
  function tcio_version() result(version)
    character(len=:), allocatable :: version
    version = f_string(c_version())
  end function

end module tcio
