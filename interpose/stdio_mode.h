/* An fopen mode string read as glibc reads it (libio/fileops.c,
 * _IO_new_file_fopen), so that the shim can open the file itself, through
 * its capturing open, and hand the fd to fdopen: the same open flags, the
 * same stream.
 *
 * glibc takes the first character (r, w, a; anything else is EINVAL), then
 * looks at most six more, up to a NUL or a ',': '+' read and write, 'x'
 * O_EXCL, 'e' O_CLOEXEC, 'b' nothing, 'm' mmap for reading, 'c' no
 * cancellation points; every other character is ignored. ",ccs=" anywhere
 * after makes a wide stream with a conversion. fdopen reads fewer of them
 * (it stops at '+', ignores 'e' and 'c'), so the shim gives it only the
 * canonical "r", "w", "a" with "+". */
#ifndef GUARD_INTERPOSE_STDIO_MODE_H_
#define GUARD_INTERPOSE_STDIO_MODE_H_

#ifdef __cplusplus
extern "C" {
#endif

struct shim_stdio_mode {
  int flags;             /* the open's flags: access mode, O_CREAT, O_TRUNC, O_APPEND, O_EXCL, O_CLOEXEC */
  char fdopen_mode[3];   /* "r", "w", "a", "r+", "w+", "a+" */
  unsigned char cloexec; /* 'e' */
  unsigned char mmap;    /* 'm' */
  /* "a" without '+': glibc seeks to the end at the open (ftell right after
   * the fopen gives the size). */
  unsigned char seek_end;
  /* ",ccs=" (a wide stream with a conversion) or 'c' (a stream whose calls
   * are no cancellation points): fdopen cannot make those; glibc's own
   * function must. */
  unsigned char real_only;
};

/* 1 with *m filled; 0 if glibc refuses the mode (EINVAL: its fopen fails
 * before any open). */
int shim_stdio_mode_parse(const char* mode, struct shim_stdio_mode* m);

/* 1 if the open changes nothing (read-only): the real function, as cheap
 * as without the shim. */
int shim_stdio_mode_reads_only(const struct shim_stdio_mode* m);

#ifdef __cplusplus
}
#endif

#endif /* GUARD_INTERPOSE_STDIO_MODE_H_ */
