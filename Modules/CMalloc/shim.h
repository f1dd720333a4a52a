// glibc's malloc tuning (mallopt), which the Glibc module does not export: the daemon limits
// its malloc arenas (Apps/multidocd/Multidocd.swift).
#include <malloc.h>
