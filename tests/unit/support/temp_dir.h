// A fresh directory under $TMPDIR (or /tmp) for a unit test, removed with
// its content.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <boost/test/unit_test.hpp>

namespace guard::testing {

struct TempDir {
  explicit TempDir(const std::string& prefix = "guard-unit-test") {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
    BOOST_REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // The path of `name` in it.
  std::string File(const std::string& name) const { return path + "/" + name; }
  std::string path;
};

}  // namespace guard::testing
