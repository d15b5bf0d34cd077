/* The value of `name` in `envp`, or NULL: how every part of the shim reads
 * its GUARD_* variables. No getenv: the shim may start before libc set up
 * environ (a late dlopen), and it reads the block it is given. */
#ifndef GUARD_INTERPOSE_ENV_FIND_H_
#define GUARD_INTERPOSE_ENV_FIND_H_

const char* shim_env_find(char* const* envp, const char* name);

#endif /* GUARD_INTERPOSE_ENV_FIND_H_ */
