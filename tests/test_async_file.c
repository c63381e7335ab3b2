/* results_io/async_file.c: the stream whose writes a thread hands to the file. What the
 * results folder relies on: the file holds exactly the bytes written, in order, whatever the
 * mix of small and large writes (a large fwrite skips stdio's buffer); compressed files come
 * out the same through it; and a write the disk refuses makes fclose fail with that errno,
 * as a plain stream's fclose does. */
#include "results_io/async_file.h"
#include "results_io/gz.h"
#include "tests/testutil.h"
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>

/* Writes about 1 MB (16 pieces of the thread's) to f in writes of 1 byte to 192 KB and returns
 * what was written; *short_writes counts the fwrites that wrote less than asked. */
static GByteArray *write_pattern_counting(FILE *f, int *short_writes)
{
    GByteArray *want = g_byte_array_new();
    GRand *rng = g_rand_new_with_seed(7);
    static const guint sizes[] = { 1, 17, 4096, ASYNC_FILE_CHUNK - 1, ASYNC_FILE_CHUNK, 3 * ASYNC_FILE_CHUNK + 5 };
    guint8 *buf = g_malloc(3 * ASYNC_FILE_CHUNK + 5);
    for (int round = 0; round < 3; round++)
        for (size_t k = 0; k < G_N_ELEMENTS(sizes); k++) {
            for (guint i = 0; i < sizes[k]; i++)
                buf[i] = (guint8)g_rand_int(rng);
            if (sizes[k] == 1)
                fputc(buf[0], f);
            else if (fwrite(buf, 1, sizes[k], f) != sizes[k])
                (*short_writes)++;
            g_byte_array_append(want, buf, sizes[k]);
        }
    g_free(buf);
    g_rand_free(rng);
    return want;
}

static GByteArray *write_pattern(FILE *f)
{
    int short_writes = 0;
    GByteArray *want = write_pattern_counting(f, &short_writes);
    CU_ASSERT_EQUAL(short_writes, 0);
    return want;
}

/* path opened behind the thread, which takes over after sync_bytes (0: from the first piece) */
static FILE *open_async_after(const char *path, size_t sync_bytes)
{
    FILE *inner = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(inner);
    FILE *f = async_file(inner, sync_bytes);
    CU_ASSERT_PTR_NOT_EQUAL(f, inner); /* a thread could start here */
    return f;
}

static FILE *open_async(const char *path)
{
    return open_async_after(path, 0);
}

/* The pattern's 1 MB against the caller's first 256 KB: the thread takes over mid-file. */
#define SYNC_PART (4 * ASYNC_FILE_CHUNK)

static void file_holds_every_byte_in_order(size_t sync_bytes)
{
    char *dir = test_tmpdir(), *p = g_build_filename(dir, "x.csv", NULL);
    FILE *f = open_async_after(p, sync_bytes);
    GByteArray *want = write_pattern(f);
    CU_ASSERT_EQUAL(fclose(f), 0);
    gchar *got;
    gsize len;
    CU_ASSERT_FATAL(g_file_get_contents(p, &got, &len, NULL));
    CU_ASSERT_EQUAL(len, want->len);
    CU_ASSERT(len == want->len && memcmp(got, want->data, len) == 0);
    g_free(got);
    g_byte_array_free(want, TRUE);
    test_rmtree(dir);
    g_free(p);
    g_free(dir);
}

static void test_file_holds_every_byte_in_order(void)
{
    file_holds_every_byte_in_order(0);
}

static void test_file_written_first_by_the_caller_then_the_thread(void)
{
    file_holds_every_byte_in_order(SYNC_PART);
}

static void test_gzip_through_the_thread(void)
{
    char *dir = test_tmpdir(), *p = g_build_filename(dir, "x.csv.gz", NULL);
    FILE *inner = gz_fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(inner);
    FILE *f = async_file(inner, 0);
    GByteArray *want = write_pattern(f);
    CU_ASSERT_EQUAL(fclose(f), 0);
    FILE *r = gz_fopen(p, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    guint8 *got = g_malloc(want->len + 1);
    size_t n = fread(got, 1, want->len + 1, r);
    CU_ASSERT_EQUAL(n, want->len);
    CU_ASSERT(n == want->len && memcmp(got, want->data, n) == 0);
    fclose(r);
    g_free(got);
    g_byte_array_free(want, TRUE);
    test_rmtree(dir);
    g_free(p);
    g_free(dir);
}

/* Writes the pattern to f, whose file refuses a write on the way: some of the later writes
 * fail, and so does fclose, with the refusal's errno. Returns what was written. */
static GByteArray *write_refused(FILE *f, int refusal)
{
    int short_writes = 0;
    GByteArray *want = write_pattern_counting(f, &short_writes);
    CU_ASSERT(short_writes > 0);
    errno = 0;
    CU_ASSERT_EQUAL(fclose(f), EOF);
    CU_ASSERT_EQUAL(errno, refusal);
    return want;
}

static void test_full_disk_fails_the_close(void)
{
    /* every write: ENOSPC. 1 MB through 256 KB of buffers: the thread has failed a write
     * before the last ones, and those fail too */
    g_byte_array_free(write_refused(open_async("/dev/full"), ENOSPC), TRUE);
}

static void test_full_disk_fails_the_close_before_the_thread(void)
{
    /* the caller's own first write fails: the later ones fail too, the thread never starts */
    g_byte_array_free(write_refused(open_async_after("/dev/full", SYNC_PART), ENOSPC), TRUE);
}

static void test_write_error_after_the_handover_fails_the_close(void)
{
    /* a file size limit of 640 KB: the caller writes the first 256 KB, the thread fails at
     * 640 KB with EFBIG (SIGXFSZ ignored, as a process that wants the error does) */
    char *dir = test_tmpdir(), *p = g_build_filename(dir, "big.csv", NULL);
    struct rlimit old, lim;
    CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 10 * ASYNC_FILE_CHUNK;
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
    CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_FSIZE, &lim), 0);
    GByteArray *want = write_refused(open_async_after(p, SYNC_PART), EFBIG);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, was);
    /* what was written before the limit is the pattern's start */
    gchar *got;
    gsize len;
    CU_ASSERT_FATAL(g_file_get_contents(p, &got, &len, NULL));
    CU_ASSERT_EQUAL(len, lim.rlim_cur);
    CU_ASSERT(len <= want->len && memcmp(got, want->data, len) == 0);
    g_free(got);
    g_byte_array_free(want, TRUE);
    test_rmtree(dir);
    g_free(p);
    g_free(dir);
}

static void test_small_file_written_at_close(void)
{
    /* under one buffer: nothing reaches the thread before fclose, which must still write it */
    char *dir = test_tmpdir(), *p = g_build_filename(dir, "s.csv", NULL);
    FILE *f = open_async(p);
    fputs("a,b\n1,2\n", f);
    CU_ASSERT_EQUAL(fclose(f), 0);
    gchar *got = NULL;
    CU_ASSERT(g_file_get_contents(p, &got, NULL, NULL));
    CU_ASSERT_STRING_EQUAL(got, "a,b\n1,2\n");
    g_free(got);
    test_rmtree(dir);
    g_free(p);
    g_free(dir);
}

static void test_small_file_on_full_disk_fails_the_close(void)
{
    /* written at fclose by the caller (no thread was started for it): the error still shows */
    FILE *f = open_async("/dev/full");
    fputs("a,b\n1,2\n", f);
    errno = 0;
    CU_ASSERT_EQUAL(fclose(f), EOF);
    CU_ASSERT_EQUAL(errno, ENOSPC);
}

static CU_TestInfo tests[] = {
    { "the file holds every byte, in order, for any mix of write sizes", test_file_holds_every_byte_in_order },
    { "the same when the caller writes the first 256 KB and the thread the rest",
      test_file_written_first_by_the_caller_then_the_thread },
    { "a gzip stream behind the thread decompresses to the bytes written", test_gzip_through_the_thread },
    { "a full disk makes fclose fail with ENOSPC", test_full_disk_fails_the_close },
    { "the same when the caller's own first write fails", test_full_disk_fails_the_close_before_the_thread },
    { "a write the thread makes after the caller's first 256 KB fails the close (EFBIG)",
      test_write_error_after_the_handover_fails_the_close },
    { "a file smaller than one buffer is written at fclose", test_small_file_written_at_close },
    { "a small file on a full disk makes fclose fail with ENOSPC", test_small_file_on_full_disk_fails_the_close },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("async_file", tests)
