/* Quantities with units, as written in scenario files: "4KB", "100Gbps", "1.5us".
 * KB = 1000 B and KiB = 1024 B. A bare number where a unit is required is an error. */
#ifndef ROCESIM_UNITS_H
#define ROCESIM_UNITS_H
#include <glib.h>
#include <stdint.h>
#include "sim/simtime.h"

/* Each returns TRUE and stores the value, or FALSE with a message in *why (g_free it)
 * saying what was expected; why may be NULL (no message). */
gboolean units_parse_size(const char *text, uint64_t *bytes, char **why);
gboolean units_parse_rate(const char *text, uint64_t *bps, char **why);
gboolean units_parse_time(const char *text, simtime_t *ps, char **why);

/* A plain decimal number ("0.25", "-3", "2.5e-1"): no hexadecimal, no '+', no inf or nan,
 * finite; blanks (space, tab) allowed around it. FALSE if TEXT is anything else. */
gboolean units_parse_real(const char *text, double *out);

/* Canonical text for a value: the largest unit that keeps it exact ("64KiB" if divisible by
 * 1024, else decimal units), e.g. 65536 -> "64KiB", 100000 -> "100KB", 1500 -> "1500B".
 * Writes into buf (at least 32 bytes) and returns it. */
char *units_format_size(uint64_t bytes, char *buf, size_t len);
char *units_format_rate(uint64_t bps, char *buf, size_t len);
char *units_format_time(simtime_t ps, char *buf, size_t len);

#endif
