/* A stdio stream whose bytes a thread of its own hands to the file, so that the kernel's
 * copy into the page cache (a quarter of writing a 969 MB transfers.csv, measured on a
 * 4096-host AllToAll) and the compression of NAME.csv.gz run beside the code that formats
 * the rows. The file is the same, byte for byte; a write that fails (a full disk) makes the
 * stream's later writes fail and its fclose return EOF with errno set, as a plain stream's
 * would (the error may be seen one buffer later than without the thread). */
#ifndef ROCESIM_RESULTS_ASYNC_FILE_H
#define ROCESIM_RESULTS_ASYNC_FILE_H
#include <stddef.h>
#include <stdio.h>

/* Takes inner (open for writing, nothing written yet): the returned stream's fclose flushes
 * it, waits for the thread and closes inner. The thread writes ASYNC_FILE_CHUNK pieces, so
 * inner's own buffer is turned off. The caller's thread writes the first `sync_bytes` itself
 * (rounded up to whole pieces; a file under that size starts no thread: results_open in
 * folder.c says why plain files do so), as it writes every piece if the thread cannot
 * start. If the stream cannot be made, inner itself is returned, buffered as the caller set
 * it. */
#define ASYNC_FILE_CHUNK (1u << 16) /* 64 KB (async_file.c says why) */
FILE *async_file(FILE *inner, size_t sync_bytes);

#endif
