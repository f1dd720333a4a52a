// renameat2(2), which the Glibc module does not export (glibc declares it only under
// _GNU_SOURCE, and only since 2.28), declared here without including any system header (the
// Glibc module owns those): Modules/FileIO/AtomicFile.swift.

extern int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags) __attribute__((weak));

/// Swaps the files at `first` and `second` atomically (RENAME_EXCHANGE): both names stay,
/// each now naming the other's file, and no inode is freed. Returns 0; -1 with errno set
/// (ENOENT: one of them does not exist; EINVAL or ENOSYS: the file system or kernel cannot);
/// or -2 when the C library has no renameat2 (glibc before 2.28).
static inline int multidoc_rename_exchange(const char *first, const char *second) {
    if (!renameat2) return -2;
    return renameat2(-100 /* AT_FDCWD */, first, -100, second, 1u << 1 /* RENAME_EXCHANGE */);
}

/// Renames `source` to `target` only if no file is there (RENAME_NOREPLACE), atomically: a file
/// another process puts there first is never replaced. Returns 0; -1 with errno set (EEXIST:
/// a file is there; EINVAL or ENOSYS: the file system or kernel cannot); or -2 when the C
/// library has no renameat2.
static inline int multidoc_rename_noreplace(const char *source, const char *target) {
    if (!renameat2) return -2;
    return renameat2(-100 /* AT_FDCWD */, source, -100, target, 1u << 0 /* RENAME_NOREPLACE */);
}
