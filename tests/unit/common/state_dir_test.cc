#define BOOST_TEST_MODULE state_dir
#include <boost/test/unit_test.hpp>

#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "common/state_dir.h"

namespace fs = std::filesystem;
using guard::StateDir;
using guard::Status;

namespace {

// A temp directory, with the variables DefaultStatePath reads saved and
// restored around each test.
struct EnvFixture {
  EnvFixture() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/guard-state-test-XXXXXX";
    BOOST_REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    char real[PATH_MAX];
    BOOST_REQUIRE(::realpath(tmpl.c_str(), real) != nullptr);
    tmp = real;
    for (const char* name : {"GUARD_HOME", "XDG_STATE_HOME", "HOME"}) {
      const char* v = std::getenv(name);
      saved.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
      ::unsetenv(name);
    }
  }
  ~EnvFixture() {
    for (const auto& [name, value] : saved) {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
    std::error_code ec;
    fs::remove_all(tmp, ec);
  }
  std::string tmp;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
};

mode_t ModeOf(const std::string& path) {
  struct stat st;
  BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(GuardHomeIsHonouredAndCreatedOwnerOnly, EnvFixture) {
  std::string home = tmp + "/a/b/guard-state";
  ::setenv("GUARD_HOME", home.c_str(), 1);
  ::setenv("XDG_STATE_HOME", (tmp + "/xdg").c_str(), 1);  // GUARD_HOME wins
  BOOST_TEST(guard::DefaultStatePath() == home);
  StateDir dir;
  Status s = StateDir::Open(&dir);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_TEST(dir.path() == home);
  for (const std::string& p :
       {home, dir.sessions_dir(), dir.store_dir(), tmp + "/a", tmp + "/a/b"}) {
    BOOST_TEST(ModeOf(p) == 0700u, p);
  }
  BOOST_TEST(dir.session_dir("x") == home + "/sessions/x");
  BOOST_TEST(!fs::exists(tmp + "/xdg"));
}

BOOST_FIXTURE_TEST_CASE(ExistingLooseDirectoryIsTightened, EnvFixture) {
  std::string home = tmp + "/guard";
  BOOST_REQUIRE(::mkdir(home.c_str(), 0755) == 0);
  BOOST_REQUIRE(::mkdir((home + "/sessions").c_str(), 0777) == 0);
  BOOST_REQUIRE(::chmod(home.c_str(), 0755) == 0);
  BOOST_REQUIRE(::chmod((home + "/sessions").c_str(), 0777) == 0);
  StateDir dir;
  BOOST_REQUIRE(StateDir::OpenAt(home, &dir).ok());
  BOOST_TEST(ModeOf(home) == 0700u);
  BOOST_TEST(ModeOf(home + "/sessions") == 0700u);
  BOOST_TEST(ModeOf(home + "/store") == 0700u);
}

BOOST_FIXTURE_TEST_CASE(XdgStateHomeIsUsedWithoutGuardHome, EnvFixture) {
  ::setenv("XDG_STATE_HOME", (tmp + "/xdg").c_str(), 1);
  ::setenv("HOME", (tmp + "/home").c_str(), 1);
  BOOST_TEST(guard::DefaultStatePath() == tmp + "/xdg/guard");
  StateDir dir;
  BOOST_REQUIRE(StateDir::Open(&dir).ok());
  BOOST_TEST(dir.path() == tmp + "/xdg/guard");
  BOOST_TEST(fs::is_directory(tmp + "/xdg/guard/store"));

  // The XDG spec: a relative XDG_STATE_HOME is ignored.
  ::setenv("XDG_STATE_HOME", "relative/state", 1);
  BOOST_TEST(guard::DefaultStatePath() == tmp + "/home/.local/state/guard");
}

BOOST_FIXTURE_TEST_CASE(HomeIsUsedWithoutXdgStateHome, EnvFixture) {
  ::setenv("HOME", (tmp + "/home").c_str(), 1);
  BOOST_TEST(guard::DefaultStatePath() == tmp + "/home/.local/state/guard");
  StateDir dir;
  BOOST_REQUIRE(StateDir::Open(&dir).ok());
  BOOST_TEST(ModeOf(tmp + "/home/.local/state") == 0700u);
  BOOST_TEST(ModeOf(tmp + "/home/.local/state/guard") == 0700u);

  // No HOME at all: the password database says where home is.
  ::unsetenv("HOME");
  struct passwd* pw = ::getpwuid(::getuid());
  BOOST_REQUIRE(pw != nullptr);
  BOOST_TEST(guard::DefaultStatePath() == std::string(pw->pw_dir) + "/.local/state/guard");
}

BOOST_FIXTURE_TEST_CASE(ListSessionsIsSortedAndHoldsOnlySessions, EnvFixture) {
  StateDir dir;
  BOOST_REQUIRE(StateDir::OpenAt(tmp + "/guard", &dir).ok());
  std::vector<std::string> ids;
  BOOST_REQUIRE(dir.ListSessions(&ids).ok());
  BOOST_TEST(ids.empty());
  for (const char* id :
       {"20261129-203012-ffffff", "20251231-235959-000001", "20261129-203012-000000"}) {
    BOOST_REQUIRE(fs::create_directory(dir.session_dir(id)));
  }
  BOOST_REQUIRE(fs::create_directory(dir.session_dir(".tmp-20261129")));
  std::ofstream(dir.sessions_dir() + "/stray-file") << "x";
  BOOST_REQUIRE(dir.ListSessions(&ids).ok());
  BOOST_TEST(ids == (std::vector<std::string>{"20251231-235959-000001", "20261129-203012-000000",
                                              "20261129-203012-ffffff"}),
             boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(StateDirectoryOwnedByAnotherUserIsRefused, EnvFixture) {
  std::string home = tmp + "/guard";
  BOOST_REQUIRE(::mkdir(home.c_str(), 0700) == 0);
  uid_t other = ::geteuid() == 65534 ? 65533 : 65534;
  if (::chown(home.c_str(), other, other) != 0) {
    BOOST_TEST_MESSAGE("skipped: cannot chown (not root)");
    return;
  }
  StateDir dir;
  Status s = StateDir::OpenAt(home, &dir);
  BOOST_TEST(!s.ok());
  BOOST_TEST((s.code() == Status::Code::kPermissionDenied), s.ToString());
}
