/* The names of the mkstemp family, made by the shim as glibc makes them
 * (misc/tempname.c, __gen_tempname): the template must end, before its
 * `suffixlen` last characters, in six 'X's (else EINVAL, the template
 * untouched); each attempt writes six characters of [a-zA-Z0-9] over them,
 * in place, and creates the name with O_EXCL; EEXIST tries another, up to
 * 62*62*62 attempts (then EEXIST); any other error ends it. The template
 * keeps the last name tried when every attempt failed, as glibc leaves it. */
#ifndef GUARD_INTERPOSE_TEMP_NAME_H_
#define GUARD_INTERPOSE_TEMP_NAME_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHIM_TEMP_XS 6
#define SHIM_TEMP_ATTEMPTS (62u * 62u * 62u)

/* Where the six X's start in `templ`, or NULL when the template is no
 * template (too short for its suffix, a negative suffix, fewer than six
 * X's): the call fails with EINVAL. */
char* shim_temp_xs(char* templ, int suffixlen);

/* Writes the six characters of one attempt at `xs`, from *state, which it
 * advances (a 64-bit mix: six base-62 digits use 36 bits of it). The
 * caller seeds *state with random bits. */
void shim_temp_fill(char* xs, uint64_t* state);

#ifdef __cplusplus
}
#endif

#endif /* GUARD_INTERPOSE_TEMP_NAME_H_ */
