/* sim/reserve.c: memory the models' big arrays live in. What they rely on: a reservation
 * reads as zeros and holds its whole extent without moving; huge_array0 comes zeroed and on
 * a cache line of its own; and where the kernel's transparent huge pages are on (madvise or
 * always), a hinted array that is then touched is backed by 2 MB pages (a hint given after
 * the first touch would leave it in 4 KB pages, which is what these checks catch). The
 * sanitizer builds' allocators keep their own pages: there only the first two are checked. */
#include "sim/reserve.h"
#include "tests/testutil.h"
#include <malloc.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#else
#define UNDER_SANITIZER 0
#endif

/* THP in madvise or always mode (the bracketed word of the kernel's setting). */
static bool thp_on(void)
{
    char *text = NULL;
    if (!g_file_get_contents("/sys/kernel/mm/transparent_hugepage/enabled", &text, NULL, NULL))
        return false;
    bool on = strstr(text, "[madvise]") || strstr(text, "[always]");
    g_free(text);
    return on;
}

/* AnonHugePages (kB) of the mapping that holds p, from /proc/self/smaps. */
static long huge_kb_at(const void *p)
{
    char *text = NULL;
    if (!g_file_get_contents("/proc/self/smaps", &text, NULL, NULL))
        return -1;
    long kb = -1;
    bool in = false;
    char **lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        unsigned long lo, hi;
        if (sscanf(lines[i], "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's first line */
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (in && sscanf(lines[i], "AnonHugePages: %ld kB", &kb) == 1)
            break;
    }
    g_strfreev(lines);
    g_free(text);
    return kb;
}

static void test_reservation_is_zero_and_stays(void)
{
    const uint64_t max = 1ull << 30; /* 8 GB of address space, committed only where touched */
    uint64_t *a = reserve_array(sizeof *a, max);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a[0], 0);
    CU_ASSERT_EQUAL(a[max - 1], 0);
    a[0] = 1;
    a[max / 2] = 2;
    a[max - 1] = 3;
    CU_ASSERT(a[0] == 1 && a[max / 2] == 2 && a[max - 1] == 3 && a[1] == 0);
    reserve_release(a, sizeof *a, max);
    CU_ASSERT_PTR_NULL(reserve_array(8, 0));
    CU_ASSERT_PTR_NULL(reserve_array(16, SIZE_MAX / 8)); /* the extent overflows size_t */
}

/* Both kinds of huge_array0: from a huge page up a mapping of its own, below it malloc's
 * memory, which may have held something. glibc's M_PERTURB fills what malloc hands out with
 * a non-zero byte (not what calloc does), so an array left unzeroed shows it (a sanitizer's
 * allocator ignores it). Either way zeroed, on 64-byte lines. */
static void test_huge_array_zeroed_and_aligned(void)
{
    const size_t counts[] = { 100000, 1000 }, elem = 24; /* 2.4 MB and 24 KB */
    mallopt(M_PERTURB, 0x5a);
    for (size_t k = 0; k < G_N_ELEMENTS(counts); k++) {
        size_t n = counts[k];
        uint8_t *a = huge_array0(n, elem);
        CU_ASSERT_EQUAL((uintptr_t)a % 64, 0);
        size_t nonzero = 0;
        for (size_t i = 0; i < n * elem; i++)
            nonzero += a[i] != 0;
        CU_ASSERT_EQUAL(nonzero, 0);
        huge_array_free(a);
    }
    mallopt(M_PERTURB, 0);
    huge_array_free(NULL);
}

static void test_hinted_arrays_on_huge_pages(void)
{
    if (UNDER_SANITIZER || !thp_on())
        return;
    const size_t bytes = 16u << 20; /* at least 7 whole 2 MB pages inside, however aligned */
    uint8_t *a = huge_array0(bytes, 1);
    memset(a, 1, bytes); /* a mapping's pages are made as they are first touched */
    CU_ASSERT(huge_kb_at(a + bytes / 2) >= 2048);
    huge_array_free(a);

    /* a fixed threshold: malloc's own would rise with the frees above and might hand out
     * heap pages already touched */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    uint8_t *m = g_malloc(bytes); /* a fresh mapping, untouched */
    huge_pages_hint(m, bytes);
    memset(m, 1, bytes);
    CU_ASSERT(huge_kb_at(m + bytes / 2) >= 2048);
    g_free(m);
}

static CU_TestInfo tests[] = {
    { "a reservation reads as zeros over its whole extent", test_reservation_is_zero_and_stays },
    { "huge_array0, mapped or malloc'd: zeroed, on its own cache lines", test_huge_array_zeroed_and_aligned },
    { "hinted arrays are backed by huge pages (THP on)", test_hinted_arrays_on_huge_pages },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("reserve", tests)
