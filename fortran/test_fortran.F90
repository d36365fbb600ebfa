! test_fortran - the Fortran module on 2 ranks (fortran-api.sh).
!
!   mpiexec -n 2 test_fortran DIR
!
! Every call of the module with `use mpi' integer handles, and with
! `use mpi_f08' handles when the MPI has them; data written through libtcio
! is compared with a plain Fortran stream read of the file (the independent
! reference), data read back with the values written; error paths give the
! documented codes.  Prints one line per failed check and a total; exit
! status 1 when any check failed.

! ---- bookkeeping shared by the two halves ----
module checks
  implicit none
  integer :: failures = 0, checked = 0
  character(len=:), allocatable :: dir
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    checked = checked + 1
    if (.not. ok) then
      failures = failures + 1
      write (*, '(2a)') 'FAIL: ', what
    end if
  end subroutine

  subroutine check_rc(rc, expected, what)
    use tcio, only: tcio_error_string
    integer, intent(in) :: rc, expected
    character(len=*), intent(in) :: what
    character(len=16) :: got, want
    write (got, '(i0)') rc
    write (want, '(i0)') expected
    call check(rc == expected, what // ': returned ' // trim(got) // ' (' // &
        tcio_error_string(rc) // '), expected ' // trim(want))
  end subroutine

  ! tcio_last_error must explain the refusal CODE of CALL (WHAT describes
  ! the case): the same code, a message "rank R: CALL: REASON" whose REASON
  ! is more than tcio_error_string(CODE) and contains WORD (and WORD2).
  subroutine check_reason(code, call, word, what, word2)
    use tcio, only: tcio_last_error, tcio_error_string, TCIO_MAX_ERROR_STRING
    integer, intent(in) :: code
    character(len=*), intent(in) :: call, word, what
    character(len=*), intent(in), optional :: word2
    character(len=TCIO_MAX_ERROR_STRING) :: message
    integer :: got, at
    got = tcio_last_error(message)
    call check_rc(got, code, what // ': tcio_last_error')
    at = index(message, ': ')
    call check(index(message, 'rank ') == 1 .and. at > 0 .and. &
        index(message, ': ' // call // ': ') == at, &
        what // ': the reason names ' // call // ': ' // trim(message))
    if (at > 0) call check(trim(message(at + len(call) + 4:)) /= tcio_error_string(code), &
        what // ': the reason is more than the generic message: ' // trim(message))
    call check(index(message, word) > 0, what // ': the reason names "' // word // '": ' // &
        trim(message))
    if (present(word2)) call check(index(message, word2) > 0, &
        what // ': the reason names "' // word2 // '": ' // trim(message))
  end subroutine

  ! The whole file NAME as bytes, read with plain Fortran stream I/O.
  subroutine read_file(name, bytes)
    character(len=*), intent(in) :: name
    integer(1), allocatable, intent(out) :: bytes(:)
    integer :: unit, size_of_file
    open (newunit=unit, file=name, access='stream', form='unformatted', status='old', &
        action='read')
    inquire (unit=unit, size=size_of_file)
    allocate(bytes(size_of_file))
    if (size_of_file > 0) read (unit) bytes
    close (unit)
  end subroutine
end module checks

! ---- use mpi: integer handles ----
subroutine integer_handle_tests()
  use mpi
  use tcio
  use checks
  implicit none
  interface
    integer(c_int) function test_c_constants(values, n) bind(C)
      use, intrinsic :: iso_c_binding, only: c_int
      integer(c_int) :: values(*)
      integer(c_int), value :: n
    end function
    subroutine test_c_version(buf, n) bind(C)
      use, intrinsic :: iso_c_binding, only: c_int, c_char
      character(kind=c_char) :: buf(*)
      integer(c_int), value :: n
    end subroutine
  end interface
  integer, parameter :: N = 6
  integer :: fortran_values(23), c_values(23), k, rank, nprocs, ierr, info, vector, code
  logical :: found
  character(len=MPI_MAX_INFO_VAL) :: value
  character(len=TCIO_MAX_ERROR_STRING) :: message
  integer :: ints(N, 2), evens(2 * N), back(N, 2), picked(N), scalar_back
  integer, asynchronous :: other(N, 2)
  real(8) :: x, x_back
  integer(1), allocatable :: bytes(:)
  integer(1) :: expected(4 * 4 * N + 8)
  character(len=32) :: c_version
  character(len=:), allocatable :: name
  type(tcio_file) :: fh, fh2, fh3, never_opened
  integer(MPI_OFFSET_KIND) :: block, base, fsize

  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  ! Constants against tcio.h.
  fortran_values = [TCIO_SUCCESS, TCIO_ERR_BAD_HANDLE, TCIO_ERR_BAD_ARG, TCIO_ERR_BAD_TYPE, &
      TCIO_ERR_BAD_MODE, TCIO_ERR_READ_ONLY, TCIO_ERR_WRITE_ONLY, TCIO_ERR_BAD_CONFIG, &
      TCIO_ERR_NO_MEMORY, TCIO_ERR_NO_SUCH_FILE, TCIO_ERR_ACCESS, TCIO_ERR_FILE_EXISTS, &
      TCIO_ERR_OPEN, TCIO_ERR_NO_SPACE, TCIO_ERR_IO, TCIO_ERR_MPI, TCIO_ERR_REMOTE, &
      TCIO_ERR_COUNT, TCIO_MODE_TRUNC, tcio_version_major, tcio_version_minor, &
      tcio_version_patch, TCIO_MAX_ERROR_STRING]
  call check(test_c_constants(c_values, size(c_values)) == size(c_values), 'constant count')
  do k = 1, size(c_values)
    write (c_version, '(a,i0)') 'constant of tcio.h number ', k
    call check(fortran_values(k) == c_values(k), trim(c_version))
  end do
  call test_c_version(c_version, len(c_version))
  call check(c_version == tcio_version_string, 'tcio_version_string is TCIO_VERSION')
  call check(tcio_version() == tcio_version_string, 'tcio_version() of this build')
  call check(tcio_error_string(TCIO_SUCCESS) == 'success', 'tcio_error_string(TCIO_SUCCESS)')
  call check(len(tcio_error_string(TCIO_ERR_COUNT + 5)) > 0, 'tcio_error_string of an unknown code')

  ! A never-opened handle: TCIO_ERR_BAD_HANDLE everywhere.
  call check(.not. tcio_is_open(never_opened), 'tcio_is_open of a fresh handle')
  call check_rc(tcio_write(never_opened, ints, 1, MPI_INTEGER), TCIO_ERR_BAD_HANDLE, 'write, no handle')
  call check_reason(TCIO_ERR_BAD_HANDLE, 'tcio_write', 'NULL', 'write, no handle')
  call check_rc(tcio_read(never_opened, back, 1, MPI_INTEGER), TCIO_ERR_BAD_HANDLE, 'read, no handle')
  call check_rc(tcio_seek(never_opened, 0_MPI_OFFSET_KIND, MPI_SEEK_SET), TCIO_ERR_BAD_HANDLE, &
      'seek, no handle')
  call check_rc(tcio_fetch(never_opened), TCIO_ERR_BAD_HANDLE, 'fetch, no handle')
  call check_rc(tcio_progress(never_opened), TCIO_ERR_BAD_HANDLE, 'progress, no handle')
  call check_rc(tcio_prefetch(never_opened, 0_MPI_OFFSET_KIND, 1_MPI_OFFSET_KIND), &
      TCIO_ERR_BAD_HANDLE, 'prefetch, no handle')

  ! tcio_open of a missing directory fails (on every rank).
  fh = tcio_open(dir // '/no/such/dir/file', MPI_MODE_RDONLY)
  call check(.not. tcio_is_open(fh), 'tcio_open of a missing file')

  ! A bad setting through an info object: TCIO_ERR_BAD_CONFIG, no handle.
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'tcio_aggregators', '5', ierr)
  call check_rc(tcio_open_comm(MPI_COMM_WORLD, dir // '/bad.dat', &
      ior(MPI_MODE_WRONLY, MPI_MODE_CREATE), info, fh), TCIO_ERR_BAD_CONFIG, &
      'open_comm with tcio_aggregators=5 on 2 ranks')
  call check(.not. tcio_is_open(fh), 'no handle after a failed open_comm')
  call MPI_Info_free(info, ierr)
  code = tcio_last_error(message)
  call check_rc(code, TCIO_ERR_BAD_CONFIG, 'tcio_last_error after the bad setting')
  call check(index(message, 'rank ') == 1 .and. index(message, 'tcio_aggregators') > 0, &
      'tcio_last_error names the setting: ' // trim(message))
  call check_rc(tcio_last_error(), TCIO_ERR_BAD_CONFIG, 'tcio_last_error without a message')
  value = 'x'
  code = tcio_last_error(value(1:4))
  call check(value(1:4) == 'rank' .and. value(5:) == '', 'tcio_last_error cuts to len(message)')
  call check_rc(tcio_get_info(never_opened, info), TCIO_ERR_BAD_HANDLE, 'get_info, no handle')
  call check(info == MPI_INFO_NULL, 'get_info, no handle: MPI_INFO_NULL')

  ! Each rank writes a block: a 2-D integer array (tcio_write at the position
  ! set by tcio_seek), the odd elements of EVENS through a vector datatype,
  ! a strided section (packed by the module) and a real(8) scalar.
  do k = 1, N
    ints(k, 1) = 1000 * rank + k
    ints(k, 2) = -(1000 * rank + k)
  end do
  evens = [(100 * rank + k, k = 1, 2 * N)]
  x = 0.5d0 + rank
  block = 4 * (2 * N + N + N) + 8
  base = block * rank
  name = dir // '/ints.dat'
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'tcio_segment_size', '64', ierr)
  call check_rc(tcio_open_comm(MPI_COMM_WORLD, name, ior(ior(MPI_MODE_RDWR, MPI_MODE_CREATE), &
      TCIO_MODE_TRUNC), info, fh), TCIO_SUCCESS, 'open_comm RDWR|CREATE|TRUNC, 64-byte segments')
  call MPI_Info_free(info, ierr)
  call check(tcio_is_open(fh), 'tcio_is_open after open_comm')
  call MPI_Type_vector(N, 1, 2, MPI_INTEGER, vector, ierr)
  call MPI_Type_commit(vector, ierr)
  call check_rc(tcio_seek(fh, base, MPI_SEEK_SET), TCIO_SUCCESS, 'seek')
  call check_rc(tcio_write(fh, ints, 2 * N, MPI_INTEGER), TCIO_SUCCESS, 'write 2-D array')
  call check_rc(tcio_write(fh, evens, 1, vector), TCIO_SUCCESS, 'write vector type')
  call check_rc(tcio_write(fh, evens(2::2), N, MPI_INTEGER), TCIO_SUCCESS, 'write strided section')
  call check_rc(tcio_write_at(fh, base + block - 8, x, 1, MPI_DOUBLE_PRECISION), TCIO_SUCCESS, &
      'write_at scalar')
  ! Rejected writes and reads change nothing.
  ! Each refusal, the module's own and libtcio's, explained.
  call check_rc(tcio_write(fh, ints, 2 * N + 1, MPI_INTEGER), TCIO_ERR_BAD_ARG, &
      'write of more elements than the array has')
  call check_reason(TCIO_ERR_BAD_ARG, 'tcio_write', 'count 13', 'write past the array', &
      'past the end')
  call check_rc(tcio_write_at(fh, base, ints(:, 2), N + 1, MPI_INTEGER), TCIO_ERR_BAD_ARG, &
      'write_at of more elements than the column has')
  call check_reason(TCIO_ERR_BAD_ARG, 'tcio_write_at', 'count 7', 'write_at past a column', &
      'MPI_INTEGER')
  call check_rc(tcio_read(fh, back, 2 * N + 1, MPI_INTEGER), TCIO_ERR_BAD_ARG, &
      'read of more elements than the array has')
  call check_reason(TCIO_ERR_BAD_ARG, 'tcio_read', 'count 13', 'read past the array')
  call check_rc(tcio_read_at(fh, base, back(:, 1), N + 1, MPI_INTEGER), TCIO_ERR_BAD_ARG, &
      'read_at of more elements than the column has')
  call check_reason(TCIO_ERR_BAD_ARG, 'tcio_read_at', 'past the end', 'read_at past a column')
  call check_rc(tcio_write(fh, ints, 1, MPI_DATATYPE_NULL), TCIO_ERR_BAD_TYPE, 'write MPI_DATATYPE_NULL')
  call check_reason(TCIO_ERR_BAD_TYPE, 'tcio_write', 'MPI_DATATYPE_NULL', 'write MPI_DATATYPE_NULL')
  call check_rc(tcio_write(fh, ints, -1, MPI_INTEGER), TCIO_ERR_BAD_ARG, 'write count -1')
  call check_reason(TCIO_ERR_BAD_ARG, 'tcio_write', 'count -1', 'write count -1')
  call check_rc(tcio_write_at(fh, -1_MPI_OFFSET_KIND, ints, 1, MPI_INTEGER), TCIO_ERR_BAD_ARG, &
      'write_at offset -1')
  call check_reason(TCIO_ERR_BAD_ARG, 'tcio_write_at', 'offset -1', 'write_at offset -1')
  call check_rc(tcio_read(fh, other(1, :), 2, MPI_INTEGER), TCIO_ERR_BAD_ARG, &
      'read into a non-contiguous section')
  call check_reason(TCIO_ERR_BAD_ARG, 'tcio_read', 'non-contiguous', 'read into other(1, :)')
  call check_rc(tcio_read_at(fh, base, evens(1::2), 2, MPI_INTEGER), TCIO_ERR_BAD_ARG, &
      'read_at into a non-contiguous section')
  call check_reason(TCIO_ERR_BAD_ARG, 'tcio_read_at', 'non-contiguous', 'read_at into evens(1::2)')
  call check_rc(tcio_seek(fh, 0_MPI_OFFSET_KIND, 99), TCIO_ERR_BAD_ARG, 'seek with a bad whence')
  call check_reason(TCIO_ERR_BAD_ARG, 'tcio_seek', 'whence 99', 'seek with a bad whence')
  call check_rc(tcio_progress(fh), TCIO_SUCCESS, 'progress')
  call check_rc(tcio_get_info(fh, info), TCIO_SUCCESS, 'get_info')
  if (info /= MPI_INFO_NULL) then
    call MPI_Info_get(info, 'tcio_segment_size', MPI_MAX_INFO_VAL, value, found, ierr)
    call check(found .and. value == '64', 'get_info: tcio_segment_size is 64')
    call MPI_Info_get(info, 'tcio_aggregators', MPI_MAX_INFO_VAL, value, found, ierr)
    call check(found .and. verify(trim(value), '0123456789') == 0, 'get_info: tcio_aggregators')
    call MPI_Info_free(info, ierr)
  end if
  call check_rc(tcio_flush(fh), TCIO_SUCCESS, 'flush')
  ! The size, agreed by the flush; a sync; the size extended and cut back
  ! (the buffered blocks below it stay); refusals.
  fsize = -1
  call check_rc(tcio_get_size(fh, fsize), TCIO_SUCCESS, 'get_size after flush')
  call check(fsize == block * nprocs, 'get_size: every rank''s block')
  call check_rc(tcio_sync(fh), TCIO_SUCCESS, 'sync')
  call check_rc(tcio_set_size(fh, block * nprocs + 100), TCIO_SUCCESS, 'set_size up')
  call check_rc(tcio_get_size(fh, fsize), TCIO_SUCCESS, 'get_size after set_size')
  call check(fsize == block * nprocs + 100, 'get_size: the size set')
  call check_rc(tcio_set_size(fh, block * nprocs), TCIO_SUCCESS, 'set_size back')
  call check_rc(tcio_set_size(fh, -1_MPI_OFFSET_KIND), TCIO_ERR_BAD_ARG, 'set_size -1')
  call check_reason(TCIO_ERR_BAD_ARG, 'tcio_set_size', 'negative', 'set_size -1')

  ! Read the next rank's block back: lazy until tcio_fetch.
  base = block * mod(rank + 1, nprocs)
  other = 0
  call check_rc(tcio_prefetch(fh, base, block), TCIO_SUCCESS, 'prefetch')
  call check_rc(tcio_read_at(fh, base, other, 2 * N, MPI_INTEGER), TCIO_SUCCESS, 'read_at 2-D array')
  call check_rc(tcio_seek(fh, base + 4 * 2 * N, MPI_SEEK_SET), TCIO_SUCCESS, 'seek for read')
  call check_rc(tcio_read(fh, picked, N, MPI_INTEGER), TCIO_SUCCESS, 'read')
  call check_rc(tcio_seek(fh, 4_MPI_OFFSET_KIND * N - 4, MPI_SEEK_CUR), TCIO_SUCCESS, 'seek CUR')
  call check_rc(tcio_read(fh, scalar_back, 1, MPI_INTEGER), TCIO_SUCCESS, 'read scalar')
  call check_rc(tcio_read_at(fh, base + block - 8, x_back, 1, MPI_DOUBLE_PRECISION), &
      TCIO_SUCCESS, 'read_at real(8) scalar')
  call check_rc(tcio_fetch(fh), TCIO_SUCCESS, 'fetch')
  k = mod(rank + 1, nprocs)
  back(:, 1) = [(1000 * k + ierr, ierr = 1, N)]
  back(:, 2) = -back(:, 1)
  call check(all(other == back), 'read_at: the next rank''s 2-D array')
  call check(all(picked == [(100 * k + 2 * ierr - 1, ierr = 1, N)]), 'read: the next rank''s vector')
  call check(scalar_back == 100 * k + 2 * N, 'read: last element of the strided section')
  call check(x_back == 0.5d0 + k, 'read_at: the next rank''s real(8)')
  call check_rc(tcio_close(fh), TCIO_SUCCESS, 'close')
  call check(.not. tcio_is_open(fh), 'tcio_is_open after close')
  call check_rc(tcio_flush(fh), TCIO_ERR_BAD_HANDLE, 'flush after close')
  call MPI_Type_free(vector, ierr)

  ! The file against plain stream I/O (rank 0).
  if (rank == 0) then
    call read_file(name, bytes)
    call check(size(bytes) == block * nprocs, 'file size')
    do k = 0, nprocs - 1
      ints(:, 1) = [(1000 * k + ierr, ierr = 1, N)]
      ints(:, 2) = -ints(:, 1)
      evens = [(100 * k + ierr, ierr = 1, 2 * N)]
      x = 0.5d0 + k
      expected = transfer([transfer(ints, expected), transfer(evens(1::2), expected), &
          transfer(evens(2::2), expected), transfer(x, expected)], expected)
      call check(all(bytes(block * k + 1 : block * (k + 1)) == expected), 'bytes of a rank''s block')
    end do
  end if

  ! tcio_open (MPI_COMM_WORLD), read-only: writes are refused; a read
  ! session is collective.
  fh = tcio_open(name, MPI_MODE_RDONLY)
  call check(tcio_is_open(fh), 'tcio_open read-only')
  call check_rc(tcio_write(fh, ints, 1, MPI_INTEGER), TCIO_ERR_READ_ONLY, 'write to a read-only file')
  call check_reason(TCIO_ERR_READ_ONLY, 'tcio_write', 'MPI_MODE_RDONLY', 'write to a read-only file')
  call check_rc(tcio_set_size(fh, 0_MPI_OFFSET_KIND), TCIO_ERR_READ_ONLY, &
      'set_size of a read-only file')
  call check_rc(tcio_sync(fh), TCIO_SUCCESS, 'sync of a read-only file')
  call check_rc(tcio_read_session(fh, 0_MPI_OFFSET_KIND, block), TCIO_SUCCESS, 'read_session')
  back = 0
  call check_rc(tcio_read_at(fh, 0_MPI_OFFSET_KIND, back, 2 * N, MPI_INTEGER), TCIO_SUCCESS, &
      'read_at rank 0''s block')
  call check_rc(tcio_close(fh), TCIO_SUCCESS, 'close read-only')
  call check(all(back(:, 1) == [(ierr, ierr = 1, N)]) .and. all(back(:, 2) == -back(:, 1)), &
      'data completed by tcio_close')

  ! The close in two halves: tcio_close_end refuses an open handle (which
  ! stays open), tcio_close_begin leaves it closing, tcio_close_end frees it.
  name = dir // '/closing.dat'
  fh = tcio_open(name, ior(MPI_MODE_WRONLY, MPI_MODE_CREATE))
  call check(tcio_is_open(fh), 'tcio_open for tcio_close_begin')
  ints(:, 1) = [(1000 * rank + ierr, ierr = 1, N)]
  call check_rc(tcio_write_at(fh, int(4 * N * rank, MPI_OFFSET_KIND), ints, N, MPI_INTEGER), &
      TCIO_SUCCESS, 'write_at before tcio_close_begin')
  call check_rc(tcio_close_end(fh), TCIO_ERR_BAD_HANDLE, 'close_end of an open handle')
  call check(tcio_is_open(fh), 'tcio_is_open after a refused close_end')
  call check_rc(tcio_close_begin(fh), TCIO_SUCCESS, 'close_begin')
  call check(tcio_is_open(fh), 'tcio_is_open between close_begin and close_end')
  call check_rc(tcio_flush(fh), TCIO_ERR_BAD_HANDLE, 'flush of a closing handle')
  call check_rc(tcio_sync(fh), TCIO_ERR_BAD_HANDLE, 'sync of a closing handle')
  call check_rc(tcio_close(fh), TCIO_ERR_BAD_HANDLE, 'tcio_close of a closing handle')
  call check(tcio_is_open(fh), 'tcio_is_open after a refused tcio_close')
  fh2 = fh
  call check_rc(tcio_close_end(fh), TCIO_SUCCESS, 'close_end')
  call check(.not. tcio_is_open(fh), 'tcio_is_open after close_end')
  ! a copy of the handle, closed by now: refused, and reset to "no file",
  ! by tcio_close and by tcio_close_end
  fh3 = fh2
  call check_rc(tcio_close(fh2), TCIO_ERR_BAD_HANDLE, 'tcio_close of a closed copy')
  call check(.not. tcio_is_open(fh2), 'tcio_is_open after tcio_close of a closed copy')
  call check_rc(tcio_close_end(fh3), TCIO_ERR_BAD_HANDLE, 'tcio_close_end of a closed copy')
  call check(.not. tcio_is_open(fh3), 'tcio_is_open after tcio_close_end of a closed copy')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call read_file(name, bytes)
    call check(size(bytes) == 4 * N * nprocs, 'close_begin/close_end: file size')
    if (size(bytes) == 4 * N * nprocs) then
      do k = 0, nprocs - 1
        call check(all(transfer(bytes(4 * N * k + 1 : 4 * N * (k + 1)), ints(:, 1)) == &
            [(1000 * k + ierr, ierr = 1, N)]), 'close_begin/close_end: a rank''s integers')
      end do
    end if
  end if
end subroutine integer_handle_tests

! ---- sequence association: array elements and scalars as buffers ----
! A 3-D array of 5-component cells dumped one row at a time, the buffer
! being the row's first element and the count reaching past it, as MPI
! codes pass buffers (NAS BT-IO's simple subtype): tcio_write_at at
! computed offsets and tcio_write after tcio_seek, read back with
! tcio_read_at and tcio_read into the elements of other arrays, checked
! against the values and against a plain stream read of the file.
subroutine sequence_association_tests()
  use mpi
  use tcio
  use checks
  implicit none
  integer, parameter :: NX = 7, NY = 3, NZ = 2
  integer(MPI_OFFSET_KIND), parameter :: ROW = 5 * NX * 8, REGION = ROW * NY * NZ
  integer(MPI_OFFSET_KIND), parameter :: BLOCK = 2 * REGION + 12   ! + an integer, a real(8)
  real(8) :: u(5, 0:NX - 1, 0:NY - 1, 0:NZ - 1), expected(5, 0:NX - 1, 0:NY - 1, 0:NZ - 1)
  real(8), asynchronous :: by_at(5, 0:NX - 1, 0:NY - 1, 0:NZ - 1)
  real(8), asynchronous :: by_position(5, 0:NX - 1, 0:NY - 1, 0:NZ - 1)
  integer :: tag, tag_back
  real(8) :: scale, scale_back
  integer :: rank, nprocs, next, ierr, j, k, r
  integer(MPI_OFFSET_KIND) :: base, off
  integer(1), allocatable :: bytes(:)
  integer(1), allocatable :: image(:)
  character(len=:), allocatable :: name
  character(len=64) :: what
  type(tcio_file) :: fh

  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call cells(rank, u)
  tag = 1000 + rank
  scale = 0.25d0 * rank
  base = BLOCK * rank
  name = dir // '/rows.dat'
  call check_rc(tcio_open_comm(MPI_COMM_WORLD, name, ior(ior(MPI_MODE_RDWR, MPI_MODE_CREATE), &
      TCIO_MODE_TRUNC), MPI_INFO_NULL, fh), TCIO_SUCCESS, 'rows: open_comm')
  ! Region 1: tcio_write_at, rows in reverse order at computed offsets.
  do k = NZ - 1, 0, -1
    do j = NY - 1, 0, -1
      off = base + ROW * (j + NY * k)
      write (what, '(a,i0,a,i0,a)') 'rows: write_at u(1, 0, ', j, ', ', k, '), count 5 * NX'
      call check_rc(tcio_write_at(fh, off, u(1, 0, j, k), 5 * NX, MPI_DOUBLE_PRECISION), &
          TCIO_SUCCESS, trim(what))
    end do
  end do
  ! Region 2: tcio_write at the position, which each row advances.
  call check_rc(tcio_seek(fh, base + REGION, MPI_SEEK_SET), TCIO_SUCCESS, 'rows: seek')
  do k = 0, NZ - 1
    do j = 0, NY - 1
      call check_rc(tcio_write(fh, u(1, 0, j, k), 5 * NX, MPI_DOUBLE_PRECISION), TCIO_SUCCESS, &
          'rows: write u(1, 0, j, k), count 5 * NX')
    end do
  end do
  ! Scalars, count 1.
  call check_rc(tcio_write(fh, tag, 1, MPI_INTEGER), TCIO_SUCCESS, 'rows: write an integer scalar')
  call check_rc(tcio_write_at(fh, base + 2 * REGION + 4, scale, 1, MPI_DOUBLE_PRECISION), &
      TCIO_SUCCESS, 'rows: write_at a real(8) scalar')
  call check_rc(tcio_flush(fh), TCIO_SUCCESS, 'rows: flush')

  ! The next rank's rows, into the elements of other arrays.
  next = mod(rank + 1, nprocs)
  base = BLOCK * next
  by_at = -1
  by_position = -1
  do k = 0, NZ - 1
    do j = 0, NY - 1
      off = base + ROW * (j + NY * k)
      call check_rc(tcio_read_at(fh, off, by_at(1, 0, j, k), 5 * NX, MPI_DOUBLE_PRECISION), &
          TCIO_SUCCESS, 'rows: read_at by_at(1, 0, j, k), count 5 * NX')
    end do
  end do
  call check_rc(tcio_seek(fh, base + REGION, MPI_SEEK_SET), TCIO_SUCCESS, 'rows: seek for reads')
  do k = 0, NZ - 1
    do j = 0, NY - 1
      call check_rc(tcio_read(fh, by_position(1, 0, j, k), 5 * NX, MPI_DOUBLE_PRECISION), &
          TCIO_SUCCESS, 'rows: read by_position(1, 0, j, k), count 5 * NX')
    end do
  end do
  call check_rc(tcio_read(fh, tag_back, 1, MPI_INTEGER), TCIO_SUCCESS, 'rows: read an integer scalar')
  call check_rc(tcio_read_at(fh, base + 2 * REGION + 4, scale_back, 1, MPI_DOUBLE_PRECISION), &
      TCIO_SUCCESS, 'rows: read_at a real(8) scalar')
  call check_rc(tcio_fetch(fh), TCIO_SUCCESS, 'rows: fetch')
  call cells(next, expected)
  call check(all(by_at == expected), 'rows: read_at per row gives the next rank''s array')
  call check(all(by_position == expected), 'rows: read per row gives the next rank''s array')
  call check(tag_back == 1000 + next, 'rows: the next rank''s integer scalar')
  call check(scale_back == 0.25d0 * next, 'rows: the next rank''s real(8) scalar')
  call check_rc(tcio_close(fh), TCIO_SUCCESS, 'rows: close')

  ! The file against plain stream I/O: each rank's block is its array
  ! twice, its integer and its real(8).
  if (rank == 0) then
    call read_file(name, bytes)
    call check(size(bytes) == BLOCK * nprocs, 'rows: file size')
    if (size(bytes) == BLOCK * nprocs) then
      do r = 0, nprocs - 1
        call cells(r, expected)
        image = [transfer(expected, bytes), transfer(expected, bytes), transfer(1000 + r, bytes), &
            transfer(0.25d0 * r, bytes)]
        call check(size(image) == BLOCK .and. all(bytes(BLOCK * r + 1 : BLOCK * (r + 1)) == image), &
            'rows: a rank''s block in the file')
      end do
    end if
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
contains
  ! The cells of rank R: exact in real(8).
  subroutine cells(r, a)
    integer, intent(in) :: r
    real(8), intent(out) :: a(5, 0:NX - 1, 0:NY - 1, 0:NZ - 1)
    integer :: m, i, jj, kk
    do kk = 0, NZ - 1
      do jj = 0, NY - 1
        do i = 0, NX - 1
          do m = 1, 5
            a(m, i, jj, kk) = 1.0d6 * r + m + 10 * i + 100 * jj + 1000 * kk
          end do
        end do
      end do
    end do
  end subroutine
end subroutine sequence_association_tests

#ifdef TCIO_HAVE_MPI_F08
! ---- use mpi_f08: derived-type handles ----
subroutine f08_handle_tests()
  use mpi_f08
  use tcio
  use checks
  implicit none
  integer, parameter :: N = 5
  type(tcio_file) :: fh
  type(MPI_Datatype) :: pair
  type(MPI_Info) :: info
  real(8) :: values(N), back(N), matrix(4, 3)
  character(len=6) :: word = 'tcio!?'
  character(len=3) :: letters(2) = ['abc', 'def']
  real(8), asynchronous :: mine(N)
  integer(1), allocatable :: bytes(:)
  integer :: rank, k
  logical :: found
  character(len=MPI_MAX_INFO_VAL) :: value
  character(len=:), allocatable :: name
  character(len=8) :: digits

  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  values = [(rank + k / 8.0d0, k = 1, N)]
  ! Every rank on its own file through MPI_COMM_SELF: the communicator
  ! really is converted (on MPI_COMM_WORLD a wrong one could pass unseen).
  write (digits, '(i0)') rank
  name = dir // '/self' // trim(digits) // '.dat'
  call check_rc(tcio_open_comm(MPI_COMM_SELF, name, ior(MPI_MODE_WRONLY, MPI_MODE_CREATE), &
      MPI_INFO_NULL, fh), TCIO_SUCCESS, 'f08: open_comm MPI_COMM_SELF')
  call check_rc(tcio_write(fh, values, N, MPI_DOUBLE_PRECISION), TCIO_SUCCESS, 'f08: write')
  ! A 2-D section with gaps in both dimensions: packed in array element order.
  matrix = reshape([(10.0d0 * rank + k, k = 1, 12)], [4, 3])
  call check_rc(tcio_write(fh, matrix(2:3, 1:3:2), 4, MPI_DOUBLE_PRECISION), TCIO_SUCCESS, &
      'f08: write a 2-D section')
  ! A character scalar: its length is the element size the descriptor gives.
  call check_rc(tcio_write(fh, word, len(word), MPI_CHARACTER), TCIO_SUCCESS, 'f08: write a string')
  ! An array of strings is checked (a scalar string, like any scalar, is
  ! trusted: it may stand for the memory that follows it).
  call check_rc(tcio_write(fh, letters, 2 * len(letters) + 1, MPI_CHARACTER), TCIO_ERR_BAD_ARG, &
      'f08: write past the end of an array of strings')
  call check_reason(TCIO_ERR_BAD_ARG, 'tcio_write', 'count 7', 'f08: past an array of strings', &
      'MPI_CHARACTER')
  call check_rc(tcio_write(fh, values, 1, MPI_DATATYPE_NULL), TCIO_ERR_BAD_TYPE, &
      'f08: write MPI_DATATYPE_NULL')
  call check_rc(tcio_read(fh, back, 1, MPI_DOUBLE_PRECISION), TCIO_ERR_WRITE_ONLY, &
      'f08: read from a write-only file')
  call check_reason(TCIO_ERR_WRITE_ONLY, 'tcio_read', 'MPI_MODE_WRONLY', 'f08: read, write-only')
  call check_rc(tcio_close(fh), TCIO_SUCCESS, 'f08: close')
  call read_file(name, bytes)
  call check(size(bytes) == 8 * (N + 4) + len(word), 'f08: file size')
  if (size(bytes) == 8 * (N + 4) + len(word)) then
    call check(all(bytes(8 * (N + 4) + 1 :) == transfer(word, bytes)), 'f08: the string in the file')
    call check(all(transfer(bytes(1 : 8 * N), back) == values), 'f08: file content')
    call check(all(transfer(bytes(8 * N + 1 : 8 * (N + 4)), back(1:4)) == &
        [matrix(2, 1), matrix(3, 1), matrix(2, 3), matrix(3, 3)]), 'f08: 2-D section in the file')
  end if

  ! On MPI_COMM_WORLD with an info object and a derived datatype.
  name = dir // '/f08.dat'
  call MPI_Info_create(info)
  call MPI_Info_set(info, 'tcio_segments_per_proc', '2')
  call MPI_Type_contiguous(2, MPI_DOUBLE_PRECISION, pair)
  call MPI_Type_commit(pair)
  call check_rc(tcio_open_comm(MPI_COMM_WORLD, name, ior(ior(MPI_MODE_RDWR, MPI_MODE_CREATE), &
      TCIO_MODE_TRUNC), info, fh), TCIO_SUCCESS, 'f08: open_comm with info')
  call MPI_Info_free(info)
  call check_rc(tcio_write_at(fh, int(8 * N * rank, MPI_OFFSET_KIND), values, 2, pair), &
      TCIO_SUCCESS, 'f08: write_at pairs')
  call check_rc(tcio_write_at(fh, int(8 * N * rank + 32, MPI_OFFSET_KIND), values(N), 1, &
      MPI_DOUBLE_PRECISION), TCIO_SUCCESS, 'f08: write_at an element')
  call check_rc(tcio_write_at(fh, 0_MPI_OFFSET_KIND, values, 3, pair), TCIO_ERR_BAD_ARG, &
      'f08: write_at past the end of the array')
  call check_reason(TCIO_ERR_BAD_ARG, 'tcio_write_at', 'count 3', 'f08: write_at past the array', &
      'past the end')
  call check_rc(tcio_get_info(fh, info), TCIO_SUCCESS, 'f08: get_info')
  if (info /= MPI_INFO_NULL) then
    call MPI_Info_get(info, 'tcio_segments_per_proc', MPI_MAX_INFO_VAL, value, found)
    call check(found .and. value == '2', 'f08: get_info: tcio_segments_per_proc is 2')
    call MPI_Info_free(info)
  end if
  call check_rc(tcio_flush(fh), TCIO_SUCCESS, 'f08: flush')
  mine = 0
  call check_rc(tcio_read_at(fh, int(8 * N * rank, MPI_OFFSET_KIND), mine(1), 2, pair), &
      TCIO_SUCCESS, 'f08: read_at pairs into an element')
  call check_rc(tcio_read(fh, mine(N), 1, MPI_DOUBLE_PRECISION), TCIO_SUCCESS, &
      'f08: read (position 0)')
  call check_rc(tcio_close(fh), TCIO_SUCCESS, 'f08: close world')
  call check(all(mine(1:4) == values(1:4)), 'f08: pairs read back')
  call check(mine(N) == 1 / 8.0d0, 'f08: rank 0''s first value at position 0')
  call MPI_Type_free(pair)
end subroutine f08_handle_tests
#endif

! ---- a strided write costs the elements written, not the section ----
! test_fortran_c.c hands the module's stub a section of 2^34 integers (with
! a stride) over 4 real ones: a write of 2 must pack those 2 only and put
! them in the file.
subroutine huge_section_tests()
  use mpi
  use tcio
  use checks
  use, intrinsic :: iso_c_binding, only: c_int, c_char, c_null_char, c_long_long
  implicit none
  interface
    integer(c_int) function test_c_write_from_huge_section(name, offset) bind(C)
      import :: c_int, c_char, c_long_long
      character(kind=c_char) :: name(*)
      integer(c_long_long), value :: offset
    end function
  end interface
  character(len=:), allocatable :: name
  integer(1), allocatable :: bytes(:)
  integer :: rank, nprocs, ierr, k
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  name = dir // '/huge-section.dat'
  call check_rc(test_c_write_from_huge_section(name // c_null_char, int(8 * rank, c_long_long)), &
      TCIO_SUCCESS, 'open, write of 2 elements of a section of 2^34, close')
  if (rank == 0) then
    call read_file(name, bytes)
    call check(size(bytes) == 8 * nprocs, 'huge section: file size')
    do k = 0, nprocs - 1
      call check(all(bytes(8 * k + 1 : 8 * k + 8) == transfer([11, 33], bytes)), &
          'huge section: the 2 elements written')
    end do
  end if
end subroutine huge_section_tests

program test_fortran
  use mpi
  use checks
  implicit none
  integer :: ierr, rank, total, length
  character(len=4096) :: arg

  call MPI_Init(ierr)
  call get_command_argument(1, arg, length)
  if (length == 0) then
    write (*, '(a)') 'usage: mpiexec -n 2 test_fortran DIR'
    call MPI_Finalize(ierr)
    error stop 2
  end if
  dir = trim(arg)
  call integer_handle_tests()
  call sequence_association_tests()
  call huge_section_tests()
#ifdef TCIO_HAVE_MPI_F08
  call f08_handle_tests()
#endif
  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (rank == 0) write (*, '(a,i0,a,i0,a)') 'fortran-api: ', checked, ' checks per rank, ', &
      total, ' failed'
  call MPI_Finalize(ierr)
  if (total /= 0) error stop 1
end program test_fortran
