#include "interpose/env_restore.h"

#include <string.h>

#include "common/shim_interface.h"
#include "interpose/test_report.h"

/* The saved variables, NAME=VALUE each, packed in `storage`. Written once at
 * start (single-threaded: the constructor, or the first call before it),
 * read-only afterwards. */
static char storage[8192];
static char* saved[SHIM_ENV_SAVED_MAX];
static size_t saved_count;
static char* saved_preload; /* "LD_PRELOAD=...", naming the shim */
static const char* shim_entry; /* the shim's own entry of LD_PRELOAD */
static size_t shim_entry_len;

static size_t name_len(const char* entry) {
  const char* eq = strchr(entry, '=');
  return eq ? (size_t)(eq - entry) : strlen(entry);
}

static int has_name(const char* entry, const char* name, size_t len) {
  return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

/* One of guard's variables (common/shim_interface.h). */
static int is_guard(const char* entry) {
  return strncmp(entry, GUARD_ENV_PREFIX, sizeof GUARD_ENV_PREFIX - 1) == 0;
}

static char* keep(size_t* used, const char* a, const char* b) {
  size_t la = strlen(a), lb = b ? strlen(b) : 0;
  if (*used + la + lb + 1 > sizeof storage) return NULL;
  char* out = storage + *used;
  memcpy(out, a, la);
  if (lb) memcpy(out + la, b, lb);
  out[la + lb] = '\0';
  *used += la + lb + 1;
  return out;
}

/* 1 if the LD_PRELOAD value `list` (entries split by ':' or ' ') holds `entry`. */
static int preload_names(const char* list, const char* entry, size_t len) {
  const char* p = list;
  while (*p != '\0') {
    size_t n = strcspn(p, ": ");
    if (n == len && strncmp(p, entry, len) == 0) return 1;
    p += n;
    if (*p != '\0') ++p;
  }
  return 0;
}

void shim_env_snapshot(char* const* envp, const char* shim_path) {
  size_t used = 0;
  saved_count = 0;
  saved_preload = NULL;
  for (char* const* e = envp; e != NULL && *e != NULL; ++e) {
    if (is_guard(*e) && saved_count < SHIM_ENV_SAVED_MAX) {
      char* copy = keep(&used, *e, NULL);
      if (copy != NULL) saved[saved_count++] = copy;
    } else if (has_name(*e, "LD_PRELOAD", 10)) {
      saved_preload = keep(&used, *e, NULL);
    }
  }
  /* The shim's entry: the LD_PRELOAD one that names the shim's file, or the
   * file itself (a late dlopen, or a preload through /etc/ld.so.preload). */
  const char* base = shim_path ? strrchr(shim_path, '/') : NULL;
  base = base ? base + 1 : shim_path;
  shim_entry = NULL;
  if (saved_preload != NULL && shim_path != NULL) {
    const char* p = saved_preload + 11;
    while (*p != '\0') {
      size_t n = strcspn(p, ": ");
      const char* slash = NULL;
      for (size_t i = 0; i < n; ++i) if (p[i] == '/') slash = p + i;
      const char* b = slash ? slash + 1 : p;
      if ((size_t)(p + n - b) == strlen(base) && strncmp(b, base, strlen(base)) == 0) {
        shim_entry = p;
        shim_entry_len = n;
        break;
      }
      p += n;
      if (*p != '\0') ++p;
    }
  }
  if (shim_entry == NULL && shim_path != NULL) {
    saved_preload = keep(&used, "LD_PRELOAD=", shim_path);
    if (saved_preload != NULL) {
      shim_entry = saved_preload + 11;
      shim_entry_len = strlen(shim_entry);
    }
  }
}

/* Whether envp[i] is one the restored environment replaces. */
static int replaced(const char* entry) {
  if (has_name(entry, "LD_PRELOAD", 10)) return 1;
  if (!is_guard(entry)) return 0;
  size_t len = name_len(entry);
  for (size_t i = 0; i < saved_count; ++i) if (has_name(saved[i], entry, len)) return 1;
  return 0;
}

char* const* shim_env_restore(char* const* envp, struct shim_env_frame* frame) {
  if (shim_entry == NULL && saved_count == 0) return envp;  /* nothing to put back */
  size_t count = 0;
  const char* preload = NULL;
  size_t found = 0;
  for (char* const* e = envp; e != NULL && *e != NULL; ++e, ++count) {
    if (has_name(*e, "LD_PRELOAD", 10)) {
      preload = *e;
    } else if (is_guard(*e)) {
      for (size_t i = 0; i < saved_count; ++i) if (strcmp(*e, saved[i]) == 0) ++found;
    }
  }
  int preload_ok = shim_entry == NULL || (preload != NULL && preload_names(preload + 11, shim_entry, shim_entry_len));
  if (preload_ok && found == saved_count) return envp;  /* the common case: nothing cleared */
  if (count > SHIM_ENV_MAX) {
    shim_test_report("exec", "env-not-restored", "too-many-entries", -1);
    return envp;
  }
  size_t n = 0;
  for (char* const* e = envp; e != NULL && *e != NULL; ++e) {
    if (!replaced(*e)) frame->entries[n++] = *e;
  }
  for (size_t i = 0; i < saved_count; ++i) frame->entries[n++] = saved[i];
  if (shim_entry != NULL) {
    if (preload == NULL || preload_ok) {
      frame->entries[n++] = preload != NULL ? (char*)preload : saved_preload;
    } else {
      /* The host set an LD_PRELOAD of its own: the shim goes first, theirs after. */
      size_t theirs = strlen(preload + 11);
      if (11 + shim_entry_len + 1 + theirs + 1 > sizeof frame->scratch) {
        shim_test_report("exec", "env-not-restored", "LD_PRELOAD-too-long", -1);
        return envp;
      }
      char* s = frame->scratch;
      memcpy(s, "LD_PRELOAD=", 11);
      memcpy(s + 11, shim_entry, shim_entry_len);
      s[11 + shim_entry_len] = ':';
      memcpy(s + 12 + shim_entry_len, preload + 11, theirs + 1);
      frame->entries[n++] = s;
    }
  }
  frame->entries[n] = NULL;
  return frame->entries;
}
