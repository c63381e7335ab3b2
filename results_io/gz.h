/* gzip files behind a stdio stream (zlib through fopencookie), so that the row writers'
 * fprintf and the CSV reader's getline work unchanged on NAME.csv.gz ([output] compress). */
#ifndef ROCESIM_RESULTS_GZ_H
#define ROCESIM_RESULTS_GZ_H
#include <stdio.h>

/* mode "r" reads a gzip file (or a plain one: zlib passes it through), "w" writes one at
 * compression level 1 (speed over size: output is timed). NULL with errno set on failure. */
FILE *gz_fopen(const char *path, const char *mode);

#endif
