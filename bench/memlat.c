/* make bench's machine probe: the latency of a load that depends on the one before (a chain
 * through random cache lines of a region, as a packet's hop walks packet, port and QP), for
 * regions from the level-2 cache's size to the footprint of bench/large.ini. The regions
 * ask for transparent huge pages, as the simulator's big arrays do (sim/reserve.c). On a
 * large fabric nearly every hop starts with loads from memory: a packet-hop cannot cost
 * much less than the latency of the region its state fills unless the loads overlap (the
 * prefetch hook in models/net.c), so these figures say what a machine's per-hop cost on the
 * large cases is made of. The second figure is the same walk with OVERLAP chains at once,
 * each at its own place in the cycle: what a load costs when that many are in flight, as
 * the hook tries to have them. The gap between the two says whether a large case waits on
 * the memory's latency (chains that start too late) or on how many loads it can serve.
 * The third figure is how fast the region's pages were first written (one byte a 4 KB page,
 * in order, on a fresh mapping): on a virtual machine the host backs a guest page when the
 * guest first writes it, and gives it back when the guest frees it (virtio-balloon's free
 * page reporting). On the 2-core AMD EPYC VM of 2026-12-08 that ran at about 300 MB/s (21
 * GiB in 71 s; a 500 MB file written at 350 MB/s and at once again, on the same pages, at
 * 3.4-4.5 GB/s), and a 2048-host AllToAll's setup took 5.4-7.3 s and its output 1.0-2.0 s,
 * against 1.6 s and 0.43 s right after memory had been touched: the large cases' setup and
 * the writing of their big files move with this figure, not only with the code.
 * Usage: memlat [MiB...] (default 1 8 64 1024); prints one line "MiB ns ns MB/s" per region. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define LINE 64
#define OVERLAP 16

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Nanoseconds per load of a chain through every line of a region of `mib` MiB, in one
 * random cycle (Sattolo's shuffle: a single cycle, so the chain never settles into a short
 * loop the caches hold): *alone with one chain, *overlapped with OVERLAP chains walked in
 * turn, started 1/OVERLAP of the cycle apart and so always that far apart: no chain loads a
 * line another has just brought in. */
static void chain_ns(size_t mib, double *alone, double *overlapped, double *touch_mb_s)
{
    size_t bytes = mib << 20, lines = bytes / LINE;
    char *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint32_t *order = malloc(lines * sizeof *order);
    if (a == MAP_FAILED || !order) {
        fprintf(stderr, "memlat: cannot map %zu MiB\n", mib);
        exit(1);
    }
    (void)madvise(a, bytes, MADV_HUGEPAGE);
    double t0 = now_s();
    for (size_t i = 0; i < bytes; i += 4096)
        ((volatile char *)a)[i] = 1;
    *touch_mb_s = (double)bytes / 1e6 / (now_s() - t0);
    for (size_t i = 0; i < lines; i++)
        order[i] = (uint32_t)i;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = xorshift(&s) % i; /* Sattolo: j < i */
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < lines; i++)
        *(uint32_t *)(a + (size_t)order[i] * LINE) = order[(i + 1) % lines];
    uint32_t at[OVERLAP];
    for (int k = 0; k < OVERLAP; k++)
        at[k] = order[(size_t)k * (lines / OVERLAP)];
    free(order);
    /* one lap to settle the caches and TLBs, then time laps of at least 2 M loads */
    uint32_t c = 0;
    for (size_t i = 0; i < lines; i++)
        c = *(volatile uint32_t *)(a + (size_t)c * LINE);
    size_t loads = lines > 2000000 ? lines : 2000000;
    t0 = now_s();
    for (size_t i = 0; i < loads; i++)
        c = *(volatile uint32_t *)(a + (size_t)c * LINE);
    *alone = (now_s() - t0) / (double)loads * 1e9;
    size_t rounds = loads / OVERLAP;
    t0 = now_s();
    for (size_t i = 0; i < rounds; i++)
        for (int k = 0; k < OVERLAP; k++)
            at[k] = *(volatile uint32_t *)(a + (size_t)at[k] * LINE);
    *overlapped = (now_s() - t0) / (double)(rounds * OVERLAP) * 1e9;
    munmap(a, bytes);
}

int main(int argc, char **argv)
{
    static const char *const def[] = { "1", "8", "64", "1024" };
    int n = argc > 1 ? argc - 1 : 4;
    for (int i = 0; i < n; i++) {
        const char *arg = argc > 1 ? argv[i + 1] : def[i];
        char *end;
        unsigned long mib = strtoul(arg, &end, 10);
        if (*end || mib == 0 || mib > 65536) {
            fprintf(stderr, "memlat: region size '%s': expected MiB, 1 to 65536\n", arg);
            return 2;
        }
        double alone, overlapped, touch;
        chain_ns(mib, &alone, &overlapped, &touch);
        printf("%lu %.1f %.1f %.0f\n", mib, alone, overlapped, touch);
        fflush(stdout);
    }
    return 0;
}
