/* calls.h - every MPI name the interposer defines (the MPI-IO calls,
 * MPI_Finalize and MPI_Barrier, whose program calls flush the files they
 * order: served.c), once, with its
 * parameters and the arguments that forward them (Darshan's way: one
 * list from which real.c makes the real entry points and wrappers.c the
 * MPI_ and PMPI_ definitions).  The MPI_File_* names not listed here
 * (get_view, get_amode, get_group, get_info, set_info, get_errhandler,
 * set_errhandler, c2f, f2c, get_type_extent, get_position_shared, ...)
 * are not defined: they reach the MPI library directly and act on the
 * real handle, whose state the interposer keeps right (doc/mpiio.md). */
#ifndef TMI_CALLS_H
#define TMI_CALLS_H

#include <mpi.h>

#define TMI_P_DATA_AT(buf_t, cnt_t, last_t, last) \
    (MPI_File fh, MPI_Offset offset, buf_t buf, cnt_t count, MPI_Datatype datatype, last_t last)
#define TMI_P_DATA(buf_t, cnt_t, last_t, last) \
    (MPI_File fh, buf_t buf, cnt_t count, MPI_Datatype datatype, last_t last)
#define TMI_A_DATA_AT(last) (fh, offset, buf, count, datatype, last)
#define TMI_A_DATA(last) (fh, buf, count, datatype, last)

/* The data calls of one count type CT (int, or MPI_Count for MPI 4's
 * large-count _c forms); SUF is the name's suffix. */
#define TMI_DATA_CALLS(X, CT, SUF)                                                          \
    X(File_write_at##SUF, TMI_P_DATA_AT(const void *, CT, MPI_Status *, status),           \
      TMI_A_DATA_AT(status))                                                                \
    X(File_read_at##SUF, TMI_P_DATA_AT(void *, CT, MPI_Status *, status),                  \
      TMI_A_DATA_AT(status))                                                                \
    X(File_write_at_all##SUF, TMI_P_DATA_AT(const void *, CT, MPI_Status *, status),       \
      TMI_A_DATA_AT(status))                                                                \
    X(File_read_at_all##SUF, TMI_P_DATA_AT(void *, CT, MPI_Status *, status),              \
      TMI_A_DATA_AT(status))                                                                \
    X(File_write##SUF, TMI_P_DATA(const void *, CT, MPI_Status *, status),                 \
      TMI_A_DATA(status))                                                                   \
    X(File_read##SUF, TMI_P_DATA(void *, CT, MPI_Status *, status), TMI_A_DATA(status))    \
    X(File_write_all##SUF, TMI_P_DATA(const void *, CT, MPI_Status *, status),             \
      TMI_A_DATA(status))                                                                   \
    X(File_read_all##SUF, TMI_P_DATA(void *, CT, MPI_Status *, status), TMI_A_DATA(status)) \
    X(File_iwrite_at##SUF, TMI_P_DATA_AT(const void *, CT, MPI_Request *, request),        \
      TMI_A_DATA_AT(request))                                                               \
    X(File_iread_at##SUF, TMI_P_DATA_AT(void *, CT, MPI_Request *, request),               \
      TMI_A_DATA_AT(request))                                                               \
    X(File_iwrite_at_all##SUF, TMI_P_DATA_AT(const void *, CT, MPI_Request *, request),    \
      TMI_A_DATA_AT(request))                                                               \
    X(File_iread_at_all##SUF, TMI_P_DATA_AT(void *, CT, MPI_Request *, request),           \
      TMI_A_DATA_AT(request))                                                               \
    X(File_iwrite##SUF, TMI_P_DATA(const void *, CT, MPI_Request *, request),              \
      TMI_A_DATA(request))                                                                  \
    X(File_iread##SUF, TMI_P_DATA(void *, CT, MPI_Request *, request), TMI_A_DATA(request)) \
    X(File_iwrite_all##SUF, TMI_P_DATA(const void *, CT, MPI_Request *, request),          \
      TMI_A_DATA(request))                                                                  \
    X(File_iread_all##SUF, TMI_P_DATA(void *, CT, MPI_Request *, request),                 \
      TMI_A_DATA(request))                                                                  \
    X(File_write_at_all_begin##SUF,                                                         \
      (MPI_File fh, MPI_Offset offset, const void *buf, CT count, MPI_Datatype datatype),   \
      (fh, offset, buf, count, datatype))                                                   \
    X(File_read_at_all_begin##SUF,                                                          \
      (MPI_File fh, MPI_Offset offset, void *buf, CT count, MPI_Datatype datatype),         \
      (fh, offset, buf, count, datatype))                                                   \
    X(File_write_all_begin##SUF,                                                            \
      (MPI_File fh, const void *buf, CT count, MPI_Datatype datatype),                      \
      (fh, buf, count, datatype))                                                           \
    X(File_read_all_begin##SUF, (MPI_File fh, void *buf, CT count, MPI_Datatype datatype),  \
      (fh, buf, count, datatype))                                                           \
    /* shared and ordered: refused or handed over */                                        \
    X(File_write_shared##SUF, TMI_P_DATA(const void *, CT, MPI_Status *, status),          \
      TMI_A_DATA(status))                                                                   \
    X(File_read_shared##SUF, TMI_P_DATA(void *, CT, MPI_Status *, status),                 \
      TMI_A_DATA(status))                                                                   \
    X(File_iwrite_shared##SUF, TMI_P_DATA(const void *, CT, MPI_Request *, request),       \
      TMI_A_DATA(request))                                                                  \
    X(File_iread_shared##SUF, TMI_P_DATA(void *, CT, MPI_Request *, request),              \
      TMI_A_DATA(request))                                                                  \
    X(File_write_ordered##SUF, TMI_P_DATA(const void *, CT, MPI_Status *, status),         \
      TMI_A_DATA(status))                                                                   \
    X(File_read_ordered##SUF, TMI_P_DATA(void *, CT, MPI_Status *, status),                \
      TMI_A_DATA(status))                                                                   \
    X(File_write_ordered_begin##SUF,                                                        \
      (MPI_File fh, const void *buf, CT count, MPI_Datatype datatype),                      \
      (fh, buf, count, datatype))                                                           \
    X(File_read_ordered_begin##SUF,                                                         \
      (MPI_File fh, void *buf, CT count, MPI_Datatype datatype), (fh, buf, count, datatype))

#define TMI_CALLS(X)                                                                        \
    X(File_open,                                                                            \
      (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh),        \
      (comm, filename, amode, info, fh))                                                    \
    X(File_close, (MPI_File *fh), (fh))                                                     \
    X(File_sync, (MPI_File fh), (fh))                                                       \
    X(File_get_size, (MPI_File fh, MPI_Offset *size), (fh, size))                           \
    X(File_set_size, (MPI_File fh, MPI_Offset size), (fh, size))                            \
    X(File_preallocate, (MPI_File fh, MPI_Offset size), (fh, size))                         \
    X(File_seek, (MPI_File fh, MPI_Offset offset, int whence), (fh, offset, whence))        \
    X(File_get_position, (MPI_File fh, MPI_Offset *offset), (fh, offset))                   \
    X(File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset *disp),             \
      (fh, offset, disp))                                                                   \
    X(File_set_view,                                                                        \
      (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,             \
       const char *datarep, MPI_Info info),                                                 \
      (fh, disp, etype, filetype, datarep, info))                                           \
    X(File_set_atomicity, (MPI_File fh, int flag), (fh, flag))                              \
    X(File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence), (fh, offset, whence)) \
    X(File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status),            \
      (fh, buf, status))                                                                    \
    X(File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status), (fh, buf, status)) \
    X(File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status),               \
      (fh, buf, status))                                                                    \
    X(File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status), (fh, buf, status))   \
    X(File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status),           \
      (fh, buf, status))                                                                    \
    X(File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status),                  \
      (fh, buf, status))                                                                    \
    X(Finalize, (void), ())                                                                 \
    X(Barrier, (MPI_Comm comm), (comm))                                                     \
    TMI_DATA_CALLS(X, int, )

/* MPI 4's large-count forms, where the MPI library has them (MPICH 4;
 * Open MPI 4.1 is MPI 3.1 and has none). */
#if MPI_VERSION >= 4
#define TMI_HAVE_LARGE_COUNT 1
#define TMI_CALLS_C(X) TMI_DATA_CALLS(X, MPI_Count, _c)
#else
#define TMI_HAVE_LARGE_COUNT 0
#define TMI_CALLS_C(X)
#endif

#endif
