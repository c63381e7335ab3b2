/* gzip streams (see gz.h). */
#define _GNU_SOURCE
#include "results_io/gz.h"
#include <errno.h>
#include <zlib.h>

static ssize_t gz_read(void *cookie, char *buf, size_t len)
{
    int n = gzread(cookie, buf, (unsigned)(len > (1u << 30) ? 1u << 30 : len));
    if (n < 0)
        errno = EIO;
    return n;
}

static ssize_t gz_write(void *cookie, const char *buf, size_t len)
{
    size_t done = 0;
    while (done < len) { /* gzwrite takes an unsigned length */
        unsigned chunk = (unsigned)(len - done > (1u << 30) ? 1u << 30 : len - done);
        int n = gzwrite(cookie, buf + done, chunk);
        if (n <= 0) {
            errno = EIO;
            return done ? (ssize_t)done : -1;
        }
        done += (size_t)n;
    }
    return (ssize_t)done;
}

static int gz_close(void *cookie)
{
    if (gzclose(cookie) != Z_OK) {
        errno = EIO;
        return -1;
    }
    return 0;
}

FILE *gz_fopen(const char *path, const char *mode)
{
    int writing = mode[0] == 'w';
    gzFile z = gzopen(path, writing ? "wb1" : "rb");
    if (!z) {
        if (!errno)
            errno = ENOMEM;
        return NULL;
    }
    if (writing)
        gzbuffer(z, 1 << 20);
    cookie_io_functions_t io = { .read = writing ? NULL : gz_read, .write = writing ? gz_write : NULL,
                                 .seek = NULL, .close = gz_close };
    FILE *f = fopencookie(z, writing ? "w" : "r", io);
    if (!f)
        gzclose(z);
    return f;
}
