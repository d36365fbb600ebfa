! other_mpi_prog.F90 - the Fortran program of tests/other-mpi.sh: compiled
! with the other MPI implementation's mpifort (`use mpi`, which no header
! check sees) against this build's tcio module, its open must be refused
! with TCIO_ERR_MPI and a reason, no file made; a close of the handle then
! returns TCIO_ERR_BAD_HANDLE without reaching the other MPI.
!   other_mpi_prog_f FILE   (exit status 0 when refused so)
program other_mpi_prog
  use mpi
  use tcio
  implicit none
  integer :: ierr, rc, code, close_rc
  logical :: made
  type(tcio_file) :: fh
  character(len=1024) :: fname, why
  call MPI_Init(ierr)
  call get_command_argument(1, fname)
  rc = tcio_open_comm(MPI_COMM_WORLD, trim(fname), ior(MPI_MODE_WRONLY, MPI_MODE_CREATE), &
                      MPI_INFO_NULL, fh)
  code = tcio_last_error(why)
  print '(a, i0, a, a)', 'other_mpi_prog_f: tcio_open_comm returned ', rc, ': ', trim(why)
  inquire (file=trim(fname), exist=made)
  close_rc = tcio_close(fh)
  print '(a, i0)', 'other_mpi_prog_f: tcio_close of the handle returned ', close_rc
  call MPI_Finalize(ierr)
  if (rc /= TCIO_ERR_MPI .or. code /= rc .or. tcio_is_open(fh) .or. made .or. &
      index(why, 'is loaded too') == 0 .or. close_rc /= TCIO_ERR_BAD_HANDLE) stop 1
end program other_mpi_prog
