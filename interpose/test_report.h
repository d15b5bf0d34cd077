/* Test-only: with GUARD_SHIM_TEST_FD=N in its environment at start, the shim
 * writes one line per classified call to fd N with write(2):
 *   guard-shim <pid> <entry> <class> <argument>\n
 * (the argument is the path, or fd=N). With GUARD_SHIM_TEST_RAISE=SIG too,
 * it raises SIG once, inside its own work for the first call it reports (or
 * the Nth, with GUARD_SHIM_TEST_RAISE_AT=N; a read-only open is reported
 * outside that work), so that a test can run a signal handler while the
 * reentrancy guard is held. None is for production: guard never sets them. */
#ifndef GUARD_INTERPOSE_TEST_REPORT_H_
#define GUARD_INTERPOSE_TEST_REPORT_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Reads the variables from an environment (the process's at start). */
void shim_test_report_configure(char* const* envp);

/* One line, if reporting is on. */
void shim_test_report(const char* entry, const char* cls, const char* path, int fd);

#ifdef __cplusplus
}
#endif

#endif /* GUARD_INTERPOSE_TEST_REPORT_H_ */
