// The unprivileged user end-to-end tests run guard as where permission bits
// or user namespaces matter (the tests themselves run as root): `guardtest`,
// created when missing.
#pragma once

#include <sys/types.h>

#include <string>

#include "tests/e2e/support/guard_runner.h"

namespace guard::e2e {

inline constexpr char kTestUser[] = "guardtest";

// The uid and gid of the test user, created if missing; false (with `why`)
// when there is no such user and it cannot be made.
bool TestUser(uid_t* uid, gid_t* gid, std::string* why);

// `spec` run as uid:gid (setpriv keeps the environment: GUARD_HOME stays;
// HOME becomes /tmp, which that user can use).
ProcessSpec AsUser(ProcessSpec spec, uid_t uid, gid_t gid);

}  // namespace guard::e2e
