// glibc's malloc tuning (mallopt), which the Glibc module does not export: the daemon and
// multidoc-trace tune it the same way (Apps/multidocd/Multidocd.swift says why).
#include <malloc.h>
#include <stdlib.h>

/// One arena; blocks of 64 KiB and more in mappings of their own, given back when freed; the
/// heap's free top returned past 128 KiB. Each of MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_
/// and MALLOC_TRIM_THRESHOLD_ set in the environment wins over its setting here.
static inline void multidoc_tune_malloc(void) {
    if (!getenv("MALLOC_ARENA_MAX")) mallopt(M_ARENA_MAX, 1);
    if (!getenv("MALLOC_MMAP_THRESHOLD_")) mallopt(M_MMAP_THRESHOLD, 64 * 1024);
    if (!getenv("MALLOC_TRIM_THRESHOLD_")) mallopt(M_TRIM_THRESHOLD, 128 * 1024);
}
