/* What kind of program a file is, from its first bytes: whether a preload
 * library can load into it. A program without a PT_INTERP header (a static
 * binary, static-pie included: Go, musl builds, busybox-static) runs no
 * dynamic loader, so LD_PRELOAD never reaches it and --mode preload cannot
 * see its calls (docs/capture.md, "Capture modes"). Used by the supervisor
 * for the command it starts and by the shim for the programs started after
 * it; C, no allocation, no system call (the caller reads the bytes). */
#ifndef GUARD_COMMON_EXEC_KIND_H_
#define GUARD_COMMON_EXEC_KIND_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum guard_exec_kind {
  GUARD_EXEC_UNKNOWN = 0, /* not an ELF file or script we can tell, or headers beyond `n` */
  GUARD_EXEC_DYNAMIC,     /* an ELF file with a PT_INTERP header: the loader runs */
  GUARD_EXEC_STATIC,      /* an ELF file without one */
  GUARD_EXEC_SCRIPT,      /* "#!": *interp (not NUL-terminated, inside head) is its interpreter */
};

/* Reads the kind of the file whose first `n` bytes are `head` (4096 are
 * enough for every linker's layout: the program headers follow the ELF
 * header). For a script, *interp and *interp_len name the interpreter. */
enum guard_exec_kind guard_exec_kind_of(const unsigned char* head, size_t n, const char** interp,
                                        size_t* interp_len);

/* How many bytes guard_exec_kind_of wants. */
#define GUARD_EXEC_HEAD 4096u

#ifdef __cplusplus
}
#endif

#endif /* GUARD_COMMON_EXEC_KIND_H_ */
