#include "sim/mpi_comm.h"
#include <limits.h>
#include <mpi.h>
#include <string.h>
#include <stdlib.h>

static int world_rank, world_size = 1, node_size = 1;
static bool inited;

bool mpi_comm_launched(void)
{
    const char *s = getenv("OMPI_COMM_WORLD_SIZE");
    if (!s)
        s = getenv("PMI_SIZE");
    return s && atoi(s) > 1;
}

void mpi_comm_init(int *rank, int *size)
{
    if (!inited) {
        /* rocesim's threads never call MPI (a rank runs one worker), so the funneled level
         * would do; single is what every build provides */
        MPI_Init(NULL, NULL);
        MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &world_size);
        MPI_Comm node; /* the ranks that share this machine's memory (MPI-3) */
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &node_size);
        MPI_Comm_free(&node);
        inited = true;
    }
    *rank = world_rank;
    *size = world_size;
}

bool mpi_comm_active(void) { return inited && world_size > 1; }
int mpi_comm_rank(void) { return world_rank; }
int mpi_comm_size(void) { return world_size; }
int mpi_comm_node_size(void) { return node_size; }

void mpi_comm_finalize(void)
{
    if (inited)
        MPI_Finalize();
    inited = false;
}

static MPI_Op op_of(enum mpi_op op)
{
    return op == MPI_COMM_MIN ? MPI_MIN : op == MPI_COMM_MAX ? MPI_MAX : MPI_SUM;
}

void mpi_comm_allreduce_u64(uint64_t *v, int n, enum mpi_op op)
{
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, op_of(op), MPI_COMM_WORLD);
}

void mpi_comm_allreduce_f64(double *v, int n, enum mpi_op op)
{
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, op_of(op), MPI_COMM_WORLD);
}

static int as_count(size_t len)
{
    if (len > INT_MAX)
        g_error("an MPI message of %zu bytes: more than MPI's int counts hold", len);
    return (int)len;
}

/* Counts and displacements for a v-collective from every rank's length. */
static size_t displs(const uint64_t *len, int *cnt, int *off)
{
    size_t total = 0;
    for (int r = 0; r < world_size; r++) {
        cnt[r] = as_count(len[r]);
        off[r] = as_count(total);
        total += len[r];
    }
    as_count(total);
    return total;
}

static void gather(const void *buf, size_t len, GByteArray *out, size_t *lens, bool all)
{
    uint64_t mine = len, *every = g_new(uint64_t, world_size);
    int *cnt = g_new(int, world_size), *off = g_new(int, world_size);
    if (all)
        MPI_Allgather(&mine, 1, MPI_UINT64_T, every, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    else
        MPI_Gather(&mine, 1, MPI_UINT64_T, every, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    bool receives = all || world_rank == 0;
    if (receives) {
        g_byte_array_set_size(out, (guint)displs(every, cnt, off));
        for (int r = 0; lens && r < world_size; r++)
            lens[r] = every[r];
    }
    /* MPI's send buffer is const in MPI 3 */
    if (all)
        MPI_Allgatherv(buf, as_count(len), MPI_BYTE, out->data, cnt, off, MPI_BYTE, MPI_COMM_WORLD);
    else
        MPI_Gatherv(buf, as_count(len), MPI_BYTE, receives ? out->data : NULL, cnt, off, MPI_BYTE, 0,
                    MPI_COMM_WORLD);
    g_free(every);
    g_free(cnt);
    g_free(off);
}

void mpi_comm_allgatherv(const void *buf, size_t len, GByteArray *out, size_t *lens)
{
    gather(buf, len, out, lens, true);
}

void mpi_comm_gatherv(const void *buf, size_t len, GByteArray *out, size_t *lens)
{
    gather(buf, len, out, lens, false);
}

void mpi_comm_alltoallv(GByteArray **send, GByteArray **recv)
{
    int P = world_size;
    uint64_t *slen = g_new(uint64_t, P), *rlen = g_new(uint64_t, P);
    for (int d = 0; d < P; d++)
        slen[d] = d == world_rank ? 0 : send[d]->len;
    MPI_Alltoall(slen, 1, MPI_UINT64_T, rlen, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    int *counts = g_new(int, 4 * (size_t)P + 4); /* + 4: never an empty block, says GCC */
    int *scnt = counts, *soff = counts + P, *rcnt = counts + 2 * P, *roff = counts + 3 * P;
    size_t stotal = displs(slen, scnt, soff), rtotal = displs(rlen, rcnt, roff);
    guint8 *sbuf = g_malloc(stotal ? stotal : 1), *rbuf = g_malloc(rtotal ? rtotal : 1);
    for (int d = 0; d < P; d++)
        if (slen[d])
            memcpy(sbuf + soff[d], send[d]->data, slen[d]);
    MPI_Alltoallv(sbuf, scnt, soff, MPI_BYTE, rbuf, rcnt, roff, MPI_BYTE, MPI_COMM_WORLD);
    for (int s = 0; s < P; s++) {
        g_byte_array_set_size(recv[s], 0);
        if (rlen[s])
            g_byte_array_append(recv[s], rbuf + roff[s], (guint)rlen[s]);
    }
    g_free(sbuf);
    g_free(rbuf);
    g_free(slen);
    g_free(rlen);
    g_free(counts);
}

bool mpi_comm_all_ok(bool ok, bool *root_ok)
{
    int mine[2] = { ok ? 1 : 0, world_rank != 0 || ok ? 1 : 0 }, all[2] = { 0, 0 };
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (root_ok)
        *root_ok = all[1] == 1;
    return all[0] == 1;
}
