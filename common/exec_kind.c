#include "common/exec_kind.h"

#include <elf.h>
#include <string.h>

static enum guard_exec_kind script_kind(const unsigned char* head, size_t n, const char** interp,
                                        size_t* interp_len) {
  size_t i = 2;
  while (i < n && (head[i] == ' ' || head[i] == '\t')) ++i;
  size_t start = i;
  while (i < n && head[i] != ' ' && head[i] != '\t' && head[i] != '\n' && head[i] != '\0') ++i;
  if (i == start || i == n) return GUARD_EXEC_UNKNOWN;
  *interp = (const char*)head + start;
  *interp_len = i - start;
  return GUARD_EXEC_SCRIPT;
}

/* The program headers of an ELF file of either class: PT_INTERP or not. */
#define GUARD_SCAN_HEADERS(Ehdr, Phdr)                                                   \
  do {                                                                                   \
    if (n < sizeof(Ehdr)) return GUARD_EXEC_UNKNOWN;                                     \
    Ehdr eh;                                                                             \
    memcpy(&eh, head, sizeof eh);                                                        \
    if (eh.e_phentsize != sizeof(Phdr) || eh.e_phoff > n) return GUARD_EXEC_UNKNOWN;     \
    if ((size_t)eh.e_phnum > (n - eh.e_phoff) / sizeof(Phdr)) return GUARD_EXEC_UNKNOWN; \
    for (size_t k = 0; k < eh.e_phnum; ++k) {                                            \
      Phdr ph;                                                                           \
      memcpy(&ph, head + eh.e_phoff + k * sizeof(Phdr), sizeof ph);                      \
      if (ph.p_type == PT_INTERP) return GUARD_EXEC_DYNAMIC;                             \
    }                                                                                    \
    return GUARD_EXEC_STATIC;                                                            \
  } while (0)

enum guard_exec_kind guard_exec_kind_of(const unsigned char* head, size_t n, const char** interp,
                                        size_t* interp_len) {
  if (n >= 2 && head[0] == '#' && head[1] == '!') return script_kind(head, n, interp, interp_len);
  if (n < EI_NIDENT || memcmp(head, ELFMAG, SELFMAG) != 0) return GUARD_EXEC_UNKNOWN;
  if (head[EI_CLASS] == ELFCLASS64) GUARD_SCAN_HEADERS(Elf64_Ehdr, Elf64_Phdr);
  if (head[EI_CLASS] == ELFCLASS32) GUARD_SCAN_HEADERS(Elf32_Ehdr, Elf32_Phdr);
  return GUARD_EXEC_UNKNOWN;
}
