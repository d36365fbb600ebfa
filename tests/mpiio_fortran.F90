! mpiio_fortran - a plain Fortran MPI-IO program that writes a shared file in
! small pieces and checks it (the Fortran programs of
! tests/mpiio-programs.sh, run with and without the interposer
! libtcio_mpiio.so).  One source, compiled three ways, one per Fortran
! binding of MPI:
!   -DMPIIO_MPIF_H     include 'mpif.h'   (tests/mpiio_fh)
!   -DMPIIO_USE_MPI    use mpi            (tests/mpiio_fmod)
!   -DMPIIO_USE_F08    use mpi_f08        (tests/mpiio_f08)
! The bindings turn the Fortran handle into a C MPI_File (MPI_File_f2c,
! PMPI_File_f2c in Open MPI) on every call.  Open MPI's bindings call the
! PMPI_File_* entry points, MPICH's mpif.h and mpi module the MPI_File_*
! ones, its mpi_f08 module PMPI_ names for the calls without a buffer and
! MPI_ names for the data calls (doc/portability.md): each program shows
! whether an interposer catches that binding's calls.
!
!   mpiexec -n P tests/mpiio_fh FILE
!
! Every rank computes the whole expected file (IMAGE) from a fixed seed,
! and every buffer is a piece of IMAGE (or a character array the size of
! one): one buffer type for every call, so that mpif.h's calls without
! interfaces draw no type-mismatch warning, while the datatypes of the
! calls and the views are still doubles and integers.
! The file is four regions, one after another, each cut into pieces of
! pseudo-random sizes (a simple LCG, the same on every rank), piece i
! written by rank mod(i + region, P):
!   A  bytes, MPI_FILE_WRITE_AT at byte offsets (the default view)
!   B  bytes, MPI_FILE_SEEK + MPI_FILE_WRITE through the individual file
!      pointer (MPI_FILE_GET_POSITION checked after each)
!   C  doubles, under a view with displacement and etype
!      MPI_DOUBLE_PRECISION, MPI_FILE_WRITE_AT at offsets in etypes
!      (MPI_FILE_GET_BYTE_OFFSET checked)
!   D  integers, under a view with etype MPI_INTEGER, SEEK + WRITE
! Then MPI_FILE_SYNC, MPI_BARRIER, MPI_FILE_SYNC (MPI's rule for another
! rank to see the writes), MPI_FILE_GET_SIZE on every rank, and each rank
! reads the pieces written by the rank before it with MPI_FILE_READ_AT
! (bytes in the default view, doubles again under C's view), checking the
! bytes and MPI_GET_COUNT.  After MPI_FILE_CLOSE rank 0 reads the whole
! file with Fortran stream I/O (access='stream', nothing of MPI-IO) and
! compares it with IMAGE.  Any mismatch: a message and exit status 1.
! The file is kept (the test compares the files of its runs and removes
! them).
#if defined(MPIIO_USE_F08)
#  define FILE_T type(MPI_File)
#  define STATUS_T type(MPI_Status)
#  define DTYPE_T type(MPI_Datatype)
#  define BINDING 'use mpi_f08'
#elif defined(MPIIO_USE_MPI)
#  define FILE_T integer
#  define STATUS_T integer, dimension(MPI_STATUS_SIZE)
#  define DTYPE_T integer
#  define BINDING 'use mpi'
#else
#  define FILE_T integer
#  define STATUS_T integer, dimension(MPI_STATUS_SIZE)
#  define DTYPE_T integer
#  define BINDING 'mpif.h'
#endif
program mpiio_fortran
#if defined(MPIIO_USE_F08)
  use mpi_f08
#elif defined(MPIIO_USE_MPI)
  use mpi
#endif
  implicit none
#if !defined(MPIIO_USE_F08) && !defined(MPIIO_USE_MPI)
  include 'mpif.h'
#endif
  integer, parameter :: ofs = MPI_OFFSET_KIND
  integer, parameter :: dp = kind(1.0d0)
  ! Pieces per rank in each region, and the largest piece (bytes in A and
  ! B; a multiple of 8, the largest piece in C and D too).
  integer, parameter :: per_rank = 6, max_piece = 296
  integer, parameter :: nregions = 4
  character(len=4096) :: path
  integer :: ierr, rank, nprocs, npieces, r, i, failures, total_fail
  integer(ofs) :: region_start(nregions + 1), fsize
  integer(ofs), allocatable :: start(:, :)   ! (piece, region): in bytes
  integer, allocatable :: length(:, :)       ! in bytes (multiple of the
                                             ! element size in C and D)
  character(len=1), allocatable :: image(:)
  integer(8) :: lcg
  FILE_T :: fh, fh_copy

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (command_argument_count() /= 1) then
    if (rank == 0) write (*, '(a)') 'usage: mpiexec -n P mpiio_fortran FILE'
    call MPI_Finalize(ierr)
    stop 2
  end if
  call get_command_argument(1, path)
  failures = 0

  ! ---- the layout and the expected file, the same on every rank
  npieces = per_rank * nprocs
  allocate (start(npieces, nregions), length(npieces, nregions))
  lcg = 20261125_8
  region_start(1) = 0
  do r = 1, nregions
    start(1, r) = region_start(r)
    do i = 1, npieces
      if (r <= 2) then
        length(i, r) = 1 + next_random(max_piece)
      else if (r == 3) then
        length(i, r) = 8 * (1 + next_random(max_piece / 8))
      else
        length(i, r) = 4 * (1 + next_random(max_piece / 4))
      end if
      if (i > 1) start(i, r) = start(i - 1, r) + length(i - 1, r)
    end do
    region_start(r + 1) = start(npieces, r) + length(npieces, r)
  end do
  allocate (image(region_start(nregions + 1)))
  call fill_image()

  ! ---- write
  if (rank == 0) call MPI_File_delete(trim(path), MPI_INFO_NULL, ierr)  ! may not exist
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_open(MPI_COMM_WORLD, trim(path), MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  call check(ierr, 'MPI_File_open')
  ! Handles are plain values in every binding: a copy names the same file
  ! (the bindings convert either with MPI_File_f2c).
  fh_copy = fh
  call write_bytes_at(1)
  call write_bytes_seek(2)
  call write_doubles_view(3)
  call write_integers_view(4)
  call MPI_File_set_view(fh, 0_ofs, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL, ierr)
  call check(ierr, 'MPI_File_set_view (bytes)')

  ! ---- sync-barrier-sync, then every rank sees every rank's writes
  call MPI_File_sync(fh, ierr)
  call check(ierr, 'MPI_File_sync')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(fh_copy, ierr)
  call check(ierr, 'MPI_File_sync (second)')
  call MPI_File_get_size(fh, fsize, ierr)
  call check(ierr, 'MPI_File_get_size')
  if (fsize /= region_start(nregions + 1)) then
    write (*, '(a,i0,a,i0,a,i0)') 'mpiio_fortran: rank ', rank, ': MPI_FILE_GET_SIZE ', &
        fsize, ' after sync, expected ', region_start(nregions + 1)
    failures = failures + 1
  end if
  do r = 1, nregions
    call read_back_bytes(r)
  end do
  call read_back_doubles_view(3)
  call MPI_File_close(fh, ierr)
  call check(ierr, 'MPI_File_close')

  ! ---- the whole file through Fortran's own I/O, on rank 0
  if (rank == 0) call compare_stream()
  call MPI_Allreduce(failures, total_fail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (total_fail == 0) then
      write (*, '(a,a,a,i0,a,i0,a)') 'mpiio_fortran (', BINDING, '): ', nprocs, &
          ' ranks, ', region_start(nregions + 1), ' bytes: all checks passed'
    else
      write (*, '(a,a,a,i0,a)') 'mpiio_fortran (', BINDING, '): ', total_fail, ' check(s) failed'
    end if
  end if
  call MPI_Finalize(ierr)
  if (total_fail /= 0) stop 1

contains

  ! 0 .. n-1 from the LCG (the constants of C's example rand()).
  integer function next_random(n)
    integer, intent(in) :: n
    lcg = mod(lcg * 1103515245_8 + 12345_8, 2147483648_8)
    next_random = int(mod(lcg / 65536_8, int(n, 8)))
  end function

  integer function owner(i, r)
    integer, intent(in) :: i, r
    owner = mod(i + r, nprocs)
  end function

  subroutine fill_image()
    integer :: j, k
    real(dp) :: d
    integer :: n
    do r = 1, nregions
      do i = 1, npieces
        if (r <= 2) then
          do j = 1, length(i, r)
            image(start(i, r) + j) = char(mod(i * 31 + j * 7 + r * 101, 256))
          end do
        else if (r == 3) then
          do k = 0, length(i, r) / 8 - 1
            d = double_value(i, k)
            image(start(i, r) + 8 * k + 1:start(i, r) + 8 * k + 8) = transfer(d, image(1:8))
          end do
        else
          do k = 0, length(i, r) / 4 - 1
            n = integer_value(i, k)
            image(start(i, r) + 4 * k + 1:start(i, r) + 4 * k + 4) = transfer(n, image(1:4))
          end do
        end if
      end do
    end do
  end subroutine

  real(dp) function double_value(i, k)
    integer, intent(in) :: i, k
    double_value = real(i, dp) * 1000.0_dp + real(k, dp) + 0.25_dp
  end function

  integer function integer_value(i, k)
    integer, intent(in) :: i, k
    integer_value = -(i * 100000 + k)
  end function

  subroutine check(err, what)
    integer, intent(in) :: err
    character(len=*), intent(in) :: what
    if (err /= MPI_SUCCESS) then
      write (*, '(a,i0,a,a,a,i0)') 'mpiio_fortran: rank ', rank, ': ', what, ' returned ', err
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine

  subroutine expect_count(st, dtype, n, what)
    STATUS_T, intent(in) :: st
    DTYPE_T, intent(in) :: dtype
    integer, intent(in) :: n
    character(len=*), intent(in) :: what
    integer :: got
    call MPI_Get_count(st, dtype, got, ierr)
    if (got /= n) then
      write (*, '(a,i0,a,a,a,i0,a,i0)') 'mpiio_fortran: rank ', rank, ': ', what, &
          ': MPI_GET_COUNT ', got, ', expected ', n
      failures = failures + 1
    end if
  end subroutine

  subroutine write_bytes_at(reg)
    integer, intent(in) :: reg
    STATUS_T :: st
    do i = 1, npieces
      if (owner(i, reg) /= rank) cycle
      call MPI_File_write_at(fh, start(i, reg), image(start(i, reg) + 1:), length(i, reg), &
                             MPI_BYTE, st, ierr)
      call check(ierr, 'MPI_File_write_at')
      call expect_count(st, MPI_BYTE, length(i, reg), 'MPI_File_write_at')
    end do
  end subroutine

  subroutine write_bytes_seek(reg)
    integer, intent(in) :: reg
    STATUS_T :: st
    integer(ofs) :: pos
    do i = 1, npieces
      if (owner(i, reg) /= rank) cycle
      call MPI_File_seek(fh, start(i, reg), MPI_SEEK_SET, ierr)
      call check(ierr, 'MPI_File_seek')
      call MPI_File_write(fh, image(start(i, reg) + 1:), length(i, reg), MPI_BYTE, st, ierr)
      call check(ierr, 'MPI_File_write')
      call MPI_File_get_position(fh, pos, ierr)
      call check(ierr, 'MPI_File_get_position')
      if (pos /= start(i, reg) + length(i, reg)) then
        write (*, '(a,i0,a,i0,a,i0)') 'mpiio_fortran: rank ', rank, &
            ': MPI_FILE_GET_POSITION after a write ', pos, ', expected ', start(i, reg) + length(i, reg)
        failures = failures + 1
      end if
    end do
  end subroutine

  ! Region REG under a view of doubles whose displacement is the region's
  ! start (any byte: the view does not need alignment); offsets in etypes.
  subroutine write_doubles_view(reg)
    integer, intent(in) :: reg
    STATUS_T :: st
    integer :: n
    integer(ofs) :: at, byte
    call MPI_File_set_view(fh, region_start(reg), MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, &
                           'native', MPI_INFO_NULL, ierr)
    call check(ierr, 'MPI_File_set_view (doubles)')
    do i = 1, npieces
      if (owner(i, reg) /= rank) cycle
      n = length(i, reg) / 8
      at = (start(i, reg) - region_start(reg)) / 8
      call MPI_File_write_at(fh, at, image(start(i, reg) + 1:), n, MPI_DOUBLE_PRECISION, st, ierr)
      call check(ierr, 'MPI_File_write_at (doubles)')
      call expect_count(st, MPI_DOUBLE_PRECISION, n, 'MPI_File_write_at (doubles)')
      call MPI_File_get_byte_offset(fh, at, byte, ierr)
      call check(ierr, 'MPI_File_get_byte_offset')
      if (byte /= start(i, reg)) then
        write (*, '(a,i0,a,i0,a,i0)') 'mpiio_fortran: rank ', rank, &
            ': MPI_FILE_GET_BYTE_OFFSET ', byte, ', expected ', start(i, reg)
        failures = failures + 1
      end if
    end do
  end subroutine

  subroutine write_integers_view(reg)
    integer, intent(in) :: reg
    STATUS_T :: st
    integer :: n
    call MPI_File_set_view(fh, region_start(reg), MPI_INTEGER, MPI_INTEGER, 'native', &
                           MPI_INFO_NULL, ierr)
    call check(ierr, 'MPI_File_set_view (integers)')
    do i = 1, npieces
      if (owner(i, reg) /= rank) cycle
      n = length(i, reg) / 4
      call MPI_File_seek(fh, (start(i, reg) - region_start(reg)) / 4, MPI_SEEK_SET, ierr)
      call check(ierr, 'MPI_File_seek (integers)')
      call MPI_File_write(fh, image(start(i, reg) + 1:), n, MPI_INTEGER, st, ierr)
      call check(ierr, 'MPI_File_write (integers)')
      call expect_count(st, MPI_INTEGER, n, 'MPI_File_write (integers)')
    end do
  end subroutine

  ! Each rank reads the pieces of region REG that the rank before it wrote.
  subroutine read_back_bytes(reg)
    integer, intent(in) :: reg
    STATUS_T :: st
    character(len=1), allocatable :: got(:)
    do i = 1, npieces
      if (owner(i, reg) /= mod(rank + nprocs - 1, nprocs)) cycle
      allocate (got(length(i, reg)))
      got = ' '
      call MPI_File_read_at(fh, start(i, reg), got, length(i, reg), MPI_BYTE, st, ierr)
      call check(ierr, 'MPI_File_read_at')
      call expect_count(st, MPI_BYTE, length(i, reg), 'MPI_File_read_at')
      if (any(got /= image(start(i, reg) + 1:start(i, reg) + length(i, reg)))) then
        write (*, '(a,i0,a,i0,a,i0,a,i0)') 'mpiio_fortran: rank ', rank, &
            ': MPI_FILE_READ_AT after sync: wrong bytes in piece ', i, ' of region ', reg, &
            ' (written by rank ', owner(i, reg)
        failures = failures + 1
      end if
      deallocate (got)
    end do
  end subroutine

  subroutine read_back_doubles_view(reg)
    integer, intent(in) :: reg
    STATUS_T :: st
    character(len=1), allocatable :: got(:)
    integer :: n
    call MPI_File_set_view(fh, region_start(reg), MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, &
                           'native', MPI_INFO_NULL, ierr)
    call check(ierr, 'MPI_File_set_view (doubles, read)')
    do i = 1, npieces
      if (owner(i, reg) /= mod(rank + nprocs - 1, nprocs)) cycle
      n = length(i, reg) / 8
      allocate (got(8 * n))
      got = ' '
      call MPI_File_read_at(fh, (start(i, reg) - region_start(reg)) / 8, got, n, &
                            MPI_DOUBLE_PRECISION, st, ierr)
      call check(ierr, 'MPI_File_read_at (doubles)')
      call expect_count(st, MPI_DOUBLE_PRECISION, n, 'MPI_File_read_at (doubles)')
      if (any(got /= image(start(i, reg) + 1:start(i, reg) + length(i, reg)))) then
        write (*, '(a,i0,a,i0)') 'mpiio_fortran: rank ', rank, &
            ': MPI_FILE_READ_AT under the view of doubles: wrong values in piece ', i
        failures = failures + 1
      end if
      deallocate (got)
    end do
  end subroutine

  ! The file as Fortran's runtime reads it (no MPI-IO), against IMAGE.
  subroutine compare_stream()
    character(len=1), allocatable :: file(:)
    integer :: u, ios
    integer(ofs) :: bytes, first
    inquire (file=trim(path), size=bytes)
    if (bytes /= size(image, kind=ofs)) then
      write (*, '(a,i0,a,i0)') 'mpiio_fortran: the file has ', bytes, ' bytes, expected ', size(image, kind=ofs)
      failures = failures + 1
      return
    end if
    allocate (file(bytes))
    open (newunit=u, file=trim(path), access='stream', form='unformatted', status='old', &
          action='read', iostat=ios)
    if (ios == 0) read (u, iostat=ios) file
    if (ios /= 0) then
      write (*, '(a,i0)') 'mpiio_fortran: reading the file with stream I/O failed: iostat ', ios
      failures = failures + 1
      return
    end if
    close (u)
    if (any(file /= image)) then
      first = findloc(file /= image, .true., dim=1, kind=ofs)
      write (*, '(a,i0,a,i0,a,i0)') 'mpiio_fortran: the file differs from the expected bytes at byte ', &
          first - 1, ': ', ichar(file(first)), ' instead of ', ichar(image(first))
      failures = failures + 1
    end if
  end subroutine

end program mpiio_fortran
