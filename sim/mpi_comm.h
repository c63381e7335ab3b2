/* The MPI world of a run started by `mpirun -np N rocesim run ...` (Open MPI, linked; never a
 * home-made transport). Each rank is one worker of a parallel run (sim/engine_group.h); these
 * are the few collectives the engine and the models need, over MPI_COMM_WORLD, so that no
 * other file includes mpi.h. Outside an MPI launch nothing here is called but
 * mpi_comm_launched(). */
#ifndef ROCESIM_MPI_COMM_H
#define ROCESIM_MPI_COMM_H
#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the process was started by an MPI launcher with more than one rank (Open MPI's
 * OMPI_COMM_WORLD_SIZE, or PMI_SIZE), read from the environment without touching MPI. */
bool mpi_comm_launched(void);
/* MPI_Init (once); the rank and the number of ranks. */
void mpi_comm_init(int *rank, int *size);
bool mpi_comm_active(void);
int mpi_comm_rank(void);
int mpi_comm_size(void);
/* How many of the ranks run on this machine (this one included). */
int mpi_comm_node_size(void);
void mpi_comm_finalize(void);

enum mpi_op { MPI_COMM_MIN, MPI_COMM_MAX, MPI_COMM_SUM };
/* In place on every rank. */
void mpi_comm_allreduce_u64(uint64_t *v, int n, enum mpi_op op);
void mpi_comm_allreduce_f64(double *v, int n, enum mpi_op op);
/* Every rank's `len` bytes, in rank order, into out (emptied first) on every rank; lens[r]
 * (size entries, may be NULL) gets each rank's length. */
void mpi_comm_allgatherv(const void *buf, size_t len, GByteArray *out, size_t *lens);
/* The same, on rank 0 only (out and lens are not touched elsewhere). */
void mpi_comm_gatherv(const void *buf, size_t len, GByteArray *out, size_t *lens);
/* Rank r sends send[d] to each rank d (send[r] is not sent) and receives into recv[s] what
 * rank s sent it (emptied first). Arrays of size entries. */
void mpi_comm_alltoallv(GByteArray **send, GByteArray **recv);
/* Every rank learns whether all passed ok (a failure on one rank ends all of them), and in
 * *root_ok (may be NULL) whether rank 0 did. */
bool mpi_comm_all_ok(bool ok, bool *root_ok);

#endif
