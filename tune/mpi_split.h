/* Splitting a sweep between the processes of an MPI launch without linking MPI.
 *
 * `mpirun -np N rocesim sweep ...` starts N copies; each finds its rank and the world size in
 * the launcher's environment (Open MPI: OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE; MPICH,
 * Intel MPI and other PMI launchers: PMI_RANK / PMI_SIZE) and takes the points whose index
 * i satisfies i % size == rank. The ranks share nothing but the sweep folder. */
#ifndef ROCESIM_MPI_SPLIT_H
#define ROCESIM_MPI_SPLIT_H
#include <glib.h>

struct mpi_split {
    int rank, size;     /* 0 and 1 when not started by a launcher */
    const char *source; /* "OMPI_COMM_WORLD", "PMI" or NULL */
    char *job;          /* text that is the same in every rank of one launch and differs
                         * between launches (launcher job id), or NULL when unknown */
    int local_size;     /* ranks on this host (OMPI_COMM_WORLD_LOCAL_SIZE / MPI_LOCALNRANKS), 1
                         * when unknown */
    int local_rank;     /* this rank among them (OMPI_COMM_WORLD_LOCAL_RANK / MPI_LOCALRANKID),
                         * 0 when unknown */
};

/* Reads the environment. FALSE with *err when the variables are there but malformed
 * (rank not below size, not numbers). */
gboolean mpi_split_detect(struct mpi_split *m, GError **err);
void mpi_split_clear(struct mpi_split *m);

static inline gboolean mpi_split_owns(const struct mpi_split *m, guint index)
{
    return m->size <= 1 || (int)(index % (guint)m->size) == m->rank;
}

#endif
