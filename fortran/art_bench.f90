! art_bench_f - the TCIO method of bench/art_bench.c, in Fortran.
!
!   mpiexec -n P art_bench_f -o FILE [-T TREES] [-c CELLS] [-r] [-s]
!
! Builds the same trees as art_bench (same cell counts: the same 64-bit LCG,
! seed 5, and Box-Muller transform; the same byte pattern), dumps them with
! one tcio_write_at per array and restarts: reads every array back with
! tcio_read_at and verifies every byte.  For the same TREES, CELLS and
! number of ranks the file is byte for byte the one `art_bench -m 1' writes
! (tests/fortran-art.sh compares them).
!   -r  restart only: read and verify FILE as written by either program
!   -s  declare each rank's span of the file as a read session first
!   -h, --help  print the usage
! Exit status 0 when every byte was verified, 1 otherwise, 2 for bad options.
program art_bench_f
  use, intrinsic :: iso_fortran_env, only: int8, int64, real64, error_unit
  use mpi
  use tcio
  implicit none

  integer, parameter :: LEVELS = 6
  integer, parameter :: NODES = 63                    ! 1+2+4+8+16+32
  integer, parameter :: STRUCT_ARRAYS = 3
  integer, parameter :: ARRAYS = STRUCT_ARRAYS + 2 * NODES   ! 129

  type :: byte_array
    integer(int8), allocatable :: b(:)
  end type

  type :: tree
    integer(MPI_OFFSET_KIND) :: offset = 0            ! where it starts in the file
    integer :: id = 0
    integer :: nbytes = 0
    integer :: len(ARRAYS) = 0                        ! bytes of each array
    type(byte_array) :: data(ARRAYS)
  end type

  type :: forest
    integer :: rank = 0, nprocs = 1, ntrees = 0
    type(tree), allocatable :: trees(:)
    integer(MPI_OFFSET_KIND) :: total_bytes = 0
  end type

  type(forest) :: dumped
  type(forest), asynchronous :: restarted
  character(len=4096) :: fname
  integer :: ntrees, cells, ierr, rank, rc_dump, rc_restart
  logical :: restart_only, session, ok, all_ok

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call parse_options()

  rc_dump = TCIO_SUCCESS
  if (.not. restart_only) then
    call forest_build(dumped, ntrees, real(cells, real64), .true.)
    rc_dump = tcio_access(dumped, .true.)
  end if
  call forest_build(restarted, ntrees, real(cells, real64), .false.)
  rc_restart = tcio_access(restarted, .false.)
  ok = rc_dump == TCIO_SUCCESS .and. rc_restart == TCIO_SUCCESS
  if (ok) ok = verify(restarted)
  call MPI_Allreduce(ok, all_ok, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (rc_dump /= TCIO_SUCCESS) write (error_unit, '(2a)') 'art_bench_f: dump: ', &
        tcio_error_string(rc_dump)
    if (rc_restart /= TCIO_SUCCESS) write (error_unit, '(2a)') 'art_bench_f: restart: ', &
        tcio_error_string(rc_restart)
    write (*, '(a,i0,a,i0,a,i0,a,l1)') 'art_bench_f: ', ntrees, ' trees, ', &
        restarted%total_bytes, ' bytes, ', restarted%nprocs, ' ranks, verified ', all_ok
  end if
  call MPI_Finalize(ierr)
  if (.not. all_ok) error stop 1

contains

  subroutine parse_options()
    character(len=4096) :: arg, value
    integer :: i, n, status
    ntrees = 1024
    cells = 2048
    fname = ''
    restart_only = .false.
    session = .false.
    i = 1
    do while (i <= command_argument_count())
      call get_command_argument(i, arg)
      select case (arg)
      case ('-h', '--help')
        call usage('')
      case ('-r')
        restart_only = .true.
      case ('-s')
        session = .true.
      case ('-o', '-T', '-c')
        if (i == command_argument_count()) call usage('option ' // trim(arg) // ' needs a value')
        i = i + 1
        call get_command_argument(i, value)
        if (arg == '-o') then
          fname = value
        else
          read (value, *, iostat=status) n
          if (status /= 0) call usage('not a number: ' // trim(value))
          if (arg == '-T') then
            if (n <= 0 .or. n > 2**20) call usage('TREES must be a positive number')
            ntrees = n
          else
            if (n < NODES .or. n > 2**20) call usage('CELLS must be at least 63')
            cells = n
          end if
        end if
      case default
        call usage('unknown option ' // trim(arg))
      end select
      i = i + 1
    end do
    if (fname == '') call usage('option -o is required')
  end subroutine

  ! PROBLEM empty: -h/--help, the usage on standard output, status 0;
  ! otherwise the problem and the usage on standard error, status 2.
  subroutine usage(problem)
    character(len=*), intent(in) :: problem
    character(len=*), parameter :: text = &
        'usage: mpiexec -n P art_bench_f -o FILE [-T TREES] [-c CELLS] [-r] [-s]' // &
        new_line('a') // '  -T TREES  number of trees (default 1024)' // &
        new_line('a') // '  -c CELLS  mean cells per tree (default 2048, at least 63)' // &
        new_line('a') // '  -r        restart only: read and verify FILE' // &
        new_line('a') // '  -s        declare the restart''s read session' // &
        new_line('a') // '  -h, --help  print this help'
    integer :: ierr2
    if (problem == '') then
      if (rank == 0) write (*, '(a)') text
      call MPI_Finalize(ierr2)
      stop
    end if
    if (rank == 0) write (error_unit, '(a/a)') 'art_bench_f: ' // problem, text
    call MPI_Finalize(ierr2)
    stop 2
  end subroutine

  ! ---- the trees: art_bench.c's definition, step for step ----

  ! STATE * 6364136223846793005 + 1442695040888963407 modulo 2**64, the
  ! LCG of art_bench.c.  Fortran has no unsigned integers, so the product
  ! is formed from 16-bit limbs, where nothing can overflow.
  function lcg_next(state) result(next)
    integer(int64), intent(in) :: state
    integer(int64) :: next
    integer(int64), parameter :: MULTIPLIER = 6364136223846793005_int64
    integer(int64), parameter :: INCREMENT = 1442695040888963407_int64
    integer(int64) :: x(0:3), a(0:3), y(0:3), carry
    integer :: i, j, k
    do k = 0, 3
      x(k) = ibits(state, 16 * k, 16)
      a(k) = ibits(MULTIPLIER, 16 * k, 16)
      y(k) = ibits(INCREMENT, 16 * k, 16)
    end do
    do i = 0, 3
      do j = 0, 3 - i
        y(i + j) = y(i + j) + x(i) * a(j)
      end do
    end do
    carry = 0
    next = 0
    do k = 0, 3
      y(k) = y(k) + carry
      carry = ishft(y(k), -16)
      next = ior(next, ishft(iand(y(k), 65535_int64), 16 * k))
    end do
  end function

  ! One normal number: two uniforms from the top 53 bits of the state.
  function normal(state, mu, sigma) result(z)
    integer(int64), intent(inout) :: state
    real(real64), intent(in) :: mu, sigma
    real(real64) :: z, u(2)
    real(real64), parameter :: PI = 3.14159265358979323846_real64
    integer :: i
    do i = 1, 2
      state = lcg_next(state)
      u(i) = (real(ishft(state, -11), real64) + 0.5_real64) / 9007199254740992.0_real64
    end do
    z = mu + sigma * sqrt(-2.0_real64 * log(u(1))) * cos(2.0_real64 * PI * u(2))
  end function

  ! Array lengths of a tree with CELLS cells spread over its 63 nodes.
  subroutine tree_shape(t, cells)
    type(tree), intent(inout) :: t
    integer, intent(in) :: cells
    integer :: n, node_cells
    t%len(1) = (1 + LEVELS) * 4                       ! levels, nodes per level
    t%len(2) = NODES * 4                              ! child links
    t%len(3) = NODES                                  ! refinement flags
    do n = 0, NODES - 1
      node_cells = cells / NODES
      if (n < mod(cells, NODES)) node_cells = node_cells + 1
      t%len(STRUCT_ARRAYS + 2 * n + 1) = node_cells * 8    ! density, double
      t%len(STRUCT_ARRAYS + 2 * n + 2) = node_cells * 4    ! temperature, float
    end do
    t%nbytes = sum(t%len)
  end subroutine

  ! Byte I (from 0) of array A (from 0) of tree ID, as a signed byte.
  integer(int8) function tree_byte(id, a, i)
    integer, intent(in) :: id, a, i
    integer :: v
    v = iand(id * 131 + a * 17 + i * 7 + ishft(i, -8), 255)
    tree_byte = int(v - 256 * (v / 128), int8)
  end function

  subroutine tree_fill(t, with_values)
    type(tree), intent(inout) :: t
    logical, intent(in) :: with_values
    integer :: a, i
    do a = 1, ARRAYS
      allocate(t%data(a)%b(t%len(a)))
      do i = 1, t%len(a)
        if (with_values) then
          t%data(a)%b(i) = tree_byte(t%id, a - 1, i - 1)
        else
          t%data(a)%b(i) = 0
        end if
      end do
    end do
  end subroutine

  ! TREES trees dealt round-robin; the file holds them in global order.
  subroutine forest_build(f, trees, mu, with_values)
    type(forest), intent(inout) :: f
    integer, intent(in) :: trees
    real(real64), intent(in) :: mu
    logical, intent(in) :: with_values
    integer(int64) :: state
    integer(MPI_OFFSET_KIND) :: offset
    type(tree) :: layout
    integer :: id, cells_of_tree, ierr2
    call MPI_Comm_rank(MPI_COMM_WORLD, f%rank, ierr2)
    call MPI_Comm_size(MPI_COMM_WORLD, f%nprocs, ierr2)
    f%ntrees = trees / f%nprocs
    if (f%rank < mod(trees, f%nprocs)) f%ntrees = f%ntrees + 1
    allocate(f%trees(f%ntrees))
    state = 5                                         ! Table IV's seed
    offset = 0
    do id = 0, trees - 1
      cells_of_tree = nint(normal(state, mu, mu / 16.0_real64))
      call tree_shape(layout, max(cells_of_tree, NODES))
      if (mod(id, f%nprocs) == f%rank) then
        associate (t => f%trees(id / f%nprocs + 1))
          t%len = layout%len
          t%nbytes = layout%nbytes
          t%id = id
          t%offset = offset
          call tree_fill(t, with_values)
        end associate
      end if
      offset = offset + layout%nbytes
    end do
    f%total_bytes = offset
  end subroutine

  ! ---- TCIO: one call per array ----

  integer function tcio_access(f, writing) result(rc)
    type(forest), intent(inout), asynchronous :: f
    logical, intent(in) :: writing
    type(tcio_file) :: fh
    integer(MPI_OFFSET_KIND) :: pos, start, length
    integer :: i, a, close_rc
    if (writing) then
      fh = tcio_open(trim(fname), ior(ior(MPI_MODE_WRONLY, MPI_MODE_CREATE), TCIO_MODE_TRUNC))
    else
      fh = tcio_open(trim(fname), MPI_MODE_RDONLY)
    end if
    if (.not. tcio_is_open(fh)) then
      rc = TCIO_ERR_OPEN
      return
    end if
    rc = TCIO_SUCCESS
    if (.not. writing .and. session) then
      start = 0
      length = 0
      if (f%ntrees > 0) then
        start = f%trees(1)%offset
        length = f%trees(f%ntrees)%offset + f%trees(f%ntrees)%nbytes - start
      end if
      rc = tcio_read_session(fh, start, length)
    end if
    do i = 1, f%ntrees
      pos = f%trees(i)%offset
      do a = 1, ARRAYS
        if (rc /= TCIO_SUCCESS) exit
        if (writing) then
          rc = tcio_write_at(fh, pos, f%trees(i)%data(a)%b, f%trees(i)%len(a), MPI_BYTE)
        else
          rc = tcio_read_at(fh, pos, f%trees(i)%data(a)%b, f%trees(i)%len(a), MPI_BYTE)
        end if
        pos = pos + f%trees(i)%len(a)
      end do
    end do
    close_rc = tcio_close(fh)                         ! completes the lazy reads
    if (rc == TCIO_SUCCESS) rc = close_rc
  end function

  logical function verify(f)
    type(forest), intent(in), asynchronous :: f
    integer :: i, a, k
    verify = .true.
    do i = 1, f%ntrees
      do a = 1, ARRAYS
        do k = 1, f%trees(i)%len(a)
          if (f%trees(i)%data(a)%b(k) /= tree_byte(f%trees(i)%id, a - 1, k - 1)) then
            verify = .false.
            return
          end if
        end do
      end do
    end do
  end function

end program art_bench_f
