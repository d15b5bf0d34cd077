#include "tests/e2e/support/test_user.h"

#include <pwd.h>

#include <vector>

namespace guard::e2e {

bool TestUser(uid_t* uid, gid_t* gid, std::string* why) {
  if (getpwnam(kTestUser) == nullptr) {
    ProcessSpec spec;
    spec.argv = {"useradd", "-M", "-s", "/usr/sbin/nologin", kTestUser};
    ProcessResult r = RunProcess(spec);
    // Another test process may have made it in the meantime.
    if (r.exit_code != 0 && getpwnam(kTestUser) == nullptr) {
      *why = "cannot create user " + std::string(kTestUser) + ": " + r.err;
      return false;
    }
  }
  struct passwd* pw = getpwnam(kTestUser);
  if (pw == nullptr) {
    *why = "user " + std::string(kTestUser) + " not found after useradd";
    return false;
  }
  *uid = pw->pw_uid;
  *gid = pw->pw_gid;
  return true;
}

ProcessSpec AsUser(ProcessSpec spec, uid_t uid, gid_t gid) {
  std::vector<std::string> prefix = {"setpriv", "--reuid=" + std::to_string(uid), "--regid=" + std::to_string(gid),
                                     "--init-groups", "--"};
  spec.argv.insert(spec.argv.begin(), prefix.begin(), prefix.end());
  spec.env["HOME"] = "/tmp";
  return spec;
}

}  // namespace guard::e2e
