! fortran_example.f90 - libtcio from Fortran: a shared file of interleaved
! records, written and read back with one small call per record.
!
!   mpifort -I<prefix>/include fortran_example.f90 -L<prefix>/lib -ltcio_fortran -ltcio
!   mpiexec -n 4 ./a.out [FILE]
!
! Records are dealt round-robin to the ranks: record I (from 0) belongs to
! rank mod(I, P) and sits at byte I * RECORD_BYTES of the file, as a code
! that used to write them one by one with Fortran stream I/O from rank 0
! would have laid them out.  Each record is a 4-byte id and three real(8)
! values.  libtcio gathers the small writes into large collective ones.
program fortran_example
  use mpi_f08
  use tcio
  implicit none
  integer, parameter :: NRECORDS = 1000
  integer, parameter :: RECORD_BYTES = 4 + 3 * 8
  type(tcio_file) :: fh
  character(len=1024) :: fname
  integer :: rank, nprocs, i, rc, bad, all_bad
  integer :: id
  real(8) :: values(3)
  integer, allocatable, asynchronous :: ids(:)
  real(8), allocatable, asynchronous :: back(:, :)
  integer(MPI_OFFSET_KIND) :: offset

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  fname = 'fortran_example.dat'
  if (command_argument_count() >= 1) call get_command_argument(1, fname)

  ! Dump: was  write (unit, pos=offset + 1) id, values   (one rank, serial)
  rc = tcio_open_comm(MPI_COMM_WORLD, trim(fname), &
                      ior(ior(MPI_MODE_WRONLY, MPI_MODE_CREATE), TCIO_MODE_TRUNC), &
                      MPI_INFO_NULL, fh)
  call stop_on_error(rc, 'tcio_open_comm')
  do i = rank, NRECORDS - 1, nprocs
    id = i
    values = [real(i, 8), 0.5d0 * i, -1.0d0 * i]
    offset = int(i, MPI_OFFSET_KIND) * RECORD_BYTES
    rc = tcio_write_at(fh, offset, id, 1, MPI_INTEGER)
    if (rc == TCIO_SUCCESS) rc = tcio_write_at(fh, offset + 4, values, 3, MPI_DOUBLE_PRECISION)
    call stop_on_error(rc, 'tcio_write_at')
  end do
  call stop_on_error(tcio_close(fh), 'tcio_close')   ! the file is complete now

  ! Restart: reads are lazy; the buffers hold their data after tcio_close
  ! (or tcio_fetch), hence ASYNCHRONOUS.  Here each rank reads the records
  ! of the next rank.
  allocate(ids(NRECORDS), back(3, NRECORDS))
  ids = -1
  fh = tcio_open(trim(fname), MPI_MODE_RDONLY)
  if (.not. tcio_is_open(fh)) call stop_on_error(tcio_last_error(), 'tcio_open')
  do i = mod(rank + 1, nprocs), NRECORDS - 1, nprocs
    offset = int(i, MPI_OFFSET_KIND) * RECORD_BYTES
    rc = tcio_read_at(fh, offset, ids(i + 1), 1, MPI_INTEGER)
    if (rc == TCIO_SUCCESS) rc = tcio_read_at(fh, offset + 4, back(:, i + 1), 3, MPI_DOUBLE_PRECISION)
    call stop_on_error(rc, 'tcio_read_at')
  end do
  call stop_on_error(tcio_close(fh), 'tcio_close')

  bad = 0
  do i = mod(rank + 1, nprocs), NRECORDS - 1, nprocs
    if (ids(i + 1) /= i .or. .not. all(abs(back(:, i + 1) - [real(i, 8), 0.5d0 * i, -1.0d0 * i]) <= 0)) &
        bad = bad + 1
  end do
  call MPI_Allreduce(bad, all_bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) write (*, '(a,i0,a,i0,a,i0)') 'fortran_example: ', NRECORDS, &
      ' records on ', nprocs, ' ranks; records read back wrong: ', all_bad
  call MPI_Finalize()
  if (all_bad /= 0) error stop 1

contains

  ! On failure say why (tcio_last_error: the setting, file or MPI call that
  ! failed, with the rank) and stop every rank.
  subroutine stop_on_error(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    character(len=TCIO_MAX_ERROR_STRING) :: why
    if (code /= TCIO_SUCCESS) then
      if (tcio_last_error(why) == TCIO_SUCCESS) why = tcio_error_string(code)
      write (*, '(4a)') 'fortran_example: ', what, ' failed: ', trim(why)
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine

end program fortran_example
