! btio_after.f90 - btio_before.f90 ported to libtcio: the same solution
! dump, call for call.  Between the "I/O begins" and "I/O ends" markers
!   MPI_File_open + MPI_File_set_view  ->  tcio_open_comm (offsets in bytes:
!                                          the view's real(8) etype is gone)
!   MPI_File_delete before the open    ->  TCIO_MODE_TRUNC in the mode
!   MPI_File_write_at(fh, off, u(1, 0, j, k, c), count, type, status, ierr)
!                                      ->  rc = tcio_write_at(fh, off * 8,
!                                          u(1, 0, j, k, c), count, type)
!   MPI_File_read_at(...)              ->  rc = tcio_read_at(...), and one
!                                          tcio_fetch before u is used (reads
!                                          are lazy: u is ASYNCHRONOUS)
!   MPI_File_close                     ->  tcio_close
! The buffer is the row's first element, as for MPI (sequence association).
! The file is byte for byte the one btio_before.f90 writes.
!
!   mpifort -I<prefix>/include btio_after.f90 -L<prefix>/lib -ltcio_fortran -ltcio
!   mpiexec -n 4 ./btio_after FILE [N]
!
! The program (see btio_before.f90 for the shape, NAS BT-IO's "simple"
! subtype): every INTERVAL steps the N x N x N solution, five real(8) per
! point, cut into P*P*P cells of which each rank owns P*P, is dumped one
! row of a cell at a time at computed offsets; after the last step every
! dump is read back row by row and checked.
module solution
  implicit none
  integer, parameter :: NSTEPS = 12, INTERVAL = 4, NDUMPS = NSTEPS / INTERVAL
  integer :: n = 24               ! grid points per dimension
  integer :: cs                   ! points per dimension of a cell: n / nprocs
  integer :: ncells               ! cells of this rank: nprocs**2
  integer :: rank, nprocs
  integer, allocatable :: cell_low(:, :)      ! (3, ncells): first grid point
  ! The solution, cell by cell, as BT keeps it.  ASYNCHRONOUS: the reads
  ! into it complete at tcio_fetch (the same declaration as in btio_before.f90).
  real(8), allocatable, asynchronous :: u(:, :, :, :, :)
contains
  ! The exact value of component M at grid point (X, Y, Z) after STEP.
  pure real(8) function value(m, x, y, z, step)
    integer, intent(in) :: m, x, y, z, step
    value = real(z + 128 * (y + 128 * (x + 128 * (m + 8 * step))), 8)
  end function

  ! One step of the "solver": every point gets its value of STEP.
  subroutine advance(step)
    integer, intent(in) :: step
    integer :: c, i, j, k, m
    do c = 1, ncells
      do k = 0, cs - 1
        do j = 0, cs - 1
          do i = 0, cs - 1
            do m = 1, 5
              u(m, i, j, k, c) = value(m, cell_low(1, c) + i, cell_low(2, c) + j, &
                                       cell_low(3, c) + k, step)
            end do
          end do
        end do
      end do
    end do
  end subroutine

  ! How many values of u differ from those of STEP.
  integer function mismatches(step)
    integer, intent(in) :: step
    integer :: c, i, j, k, m
    mismatches = 0
    do c = 1, ncells
      do k = 0, cs - 1
        do j = 0, cs - 1
          do i = 0, cs - 1
            do m = 1, 5
              if (.not. abs(u(m, i, j, k, c) - value(m, cell_low(1, c) + i, cell_low(2, c) + j, &
                                                     cell_low(3, c) + k, step)) <= 0) &
                mismatches = mismatches + 1
            end do
          end do
        end do
      end do
    end do
  end function
end module solution

! ---- I/O begins ----
module dump_io
  use mpi
  use tcio
  use solution
  implicit none
  type(tcio_file) :: fh
contains
  subroutine stop_on_error(rc, what)
    integer, intent(in) :: rc
    character(len=*), intent(in) :: what
    character(len=TCIO_MAX_ERROR_STRING) :: message
    integer :: code, ignored
    if (rc == TCIO_SUCCESS) return
    code = tcio_last_error(message)     ! "rank R: CALL: why"
    write (*, '(3a)') what, ' failed: ', trim(message)
    call MPI_Abort(MPI_COMM_WORLD, 1, ignored)
  end subroutine

  ! The offset of row (j, k) of cell c in dump IDUMP, in real(8) values.
  integer(MPI_OFFSET_KIND) function row_offset(j, k, c, idump)
    integer, intent(in) :: j, k, c, idump
    row_offset = 5_MPI_OFFSET_KIND * (cell_low(1, c) + int(n, MPI_OFFSET_KIND) * &
                 ((cell_low(2, c) + j) + int(n, MPI_OFFSET_KIND) * &
                 ((cell_low(3, c) + k) + int(n, MPI_OFFSET_KIND) * idump)))
  end function

  subroutine open_dumps(fname, mode)
    character(len=*), intent(in) :: fname
    integer, intent(in) :: mode
    integer :: full_mode
    full_mode = mode
    if (iand(mode, MPI_MODE_CREATE) /= 0) full_mode = ior(mode, TCIO_MODE_TRUNC)
    call stop_on_error(tcio_open_comm(MPI_COMM_WORLD, fname, full_mode, MPI_INFO_NULL, fh), &
                       'tcio_open_comm')
  end subroutine

  subroutine write_dump(idump)
    integer, intent(in) :: idump
    integer :: c, j, k
    do c = 1, ncells
      do k = 0, cs - 1
        do j = 0, cs - 1
          call stop_on_error(tcio_write_at(fh, row_offset(j, k, c, idump) * 8, u(1, 0, j, k, c), &
                                           5 * cs, MPI_DOUBLE_PRECISION), 'tcio_write_at')
        end do
      end do
    end do
  end subroutine

  ! u holds dump IDUMP when this returns.
  subroutine read_dump(idump)
    integer, intent(in) :: idump
    integer :: c, j, k
    do c = 1, ncells
      do k = 0, cs - 1
        do j = 0, cs - 1
          call stop_on_error(tcio_read_at(fh, row_offset(j, k, c, idump) * 8, u(1, 0, j, k, c), &
                                          5 * cs, MPI_DOUBLE_PRECISION), 'tcio_read_at')
        end do
      end do
    end do
    call stop_on_error(tcio_fetch(fh), 'tcio_fetch')    ! the reads land in u
  end subroutine

  subroutine close_dumps()
    call stop_on_error(tcio_close(fh), 'tcio_close')
  end subroutine
end module dump_io
! ---- I/O ends ----

program btio
  use mpi
  use solution
  use dump_io
  implicit none
  character(len=1024) :: fname, arg
  integer :: ierr, step, idump, a, b, c, bad, all_bad, nargs
  double precision :: t0, t_write, t_read

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  nargs = command_argument_count()
  if (nargs >= 2) then
    call get_command_argument(2, arg)
    read (arg, *, iostat=ierr) n
    if (ierr /= 0) n = 0
  end if
  if (nargs < 1 .or. nargs > 2 .or. n < nprocs .or. mod(n, nprocs) /= 0) then
    if (rank == 0) write (*, '(a)') 'usage: mpiexec -n P btio FILE [N]   (N a multiple of P, default 24)'
    call MPI_Finalize(ierr)
    stop 2
  end if
  call get_command_argument(1, fname)
  cs = n / nprocs
  ncells = nprocs * nprocs
  allocate(cell_low(3, ncells), u(5, 0:cs - 1, 0:cs - 1, 0:cs - 1, ncells))
  c = 0
  do a = 0, nprocs - 1
    do b = 0, nprocs - 1
      c = c + 1
      cell_low(:, c) = cs * [a, b, modulo(rank - a - b, nprocs)]
    end do
  end do

  ! The run: dump every INTERVAL steps.
  t0 = MPI_Wtime()
  call open_dumps(trim(fname), ior(MPI_MODE_WRONLY, MPI_MODE_CREATE))
  do step = 1, NSTEPS
    call advance(step)
    if (mod(step, INTERVAL) == 0) call write_dump(step / INTERVAL - 1)
  end do
  call close_dumps()
  t_write = MPI_Wtime() - t0

  ! Read every dump back and check it.
  t0 = MPI_Wtime()
  bad = 0
  call open_dumps(trim(fname), MPI_MODE_RDONLY)
  do idump = 0, NDUMPS - 1
    u = -1
    call read_dump(idump)
    bad = bad + mismatches((idump + 1) * INTERVAL)
  end do
  call close_dumps()
  t_read = MPI_Wtime() - t0
  call MPI_Allreduce(bad, all_bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(a,i0,a,i0,a,i0,a,f0.3,a,f0.3,a)') 'btio: ', NDUMPS, &
      ' dumps of ', n, '^3 points, ', all_bad, ' values wrong; write ', t_write, &
      ' s, read back ', t_read, ' s'
  call MPI_Finalize(ierr)
  if (all_bad /= 0) stop 1
end program btio
