// SessionCap (supervisor/session/session_cap.h): which versions a session
// drops once the store's cap binds, as a table of (what the session stored
// and recorded) -> (what is gone from the store). Never dropped: the first
// pre-image of a path, the first after a mark or a move, the latest
// version of each path, a content another record or writer names again. End-to-end
// twin: tests/e2e/store_cap_test.cc.
#define BOOST_TEST_MODULE session_cap
#include <boost/test/unit_test.hpp>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "supervisor/session/session_cap.h"
#include "tests/unit/capture/fake_capture_log.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

struct Row {
  const char* name;
  // Steps, one a word group: "pre PATH X" (a modify of PATH whose pre-image
  // is content X), "post PATH X" (a post-image), "mark", "rename",
  // "reuse X" (content X put again, as a writer about to name it would).
  std::vector<std::string> steps;
  std::set<std::string> dropped;  // contents gone from the store
};

const Row kRows[] = {
    {"the latest version of a path stays", {"pre p A", "pre p B"}, {}},
    {"pre-images between the first and the latest go", {"pre p A", "pre p B", "pre p C", "pre p D"}, {"B", "C"}},
    {"the first pre-image after a mark stays", {"pre p A", "pre p B", "mark", "pre p C", "pre p D", "pre p E"},
     {"B", "D"}},
    {"each path's first pre-image stays",
     {"pre p A", "pre q B", "pre p C", "pre q D", "pre p E", "pre q F"},
     {"C", "D"}},
    {"superseded post-images go, the latest stays", {"post p A", "post p B", "post p C"}, {"A", "B"}},
    {"a post-image superseded by a pre-image goes", {"pre p A", "post p B", "pre p C", "pre p D"}, {"B", "C"}},
    {"a content a kept record names stays", {"pre p A", "pre p B", "pre q B", "pre p C"}, {}},
    {"a content stored twice stays", {"pre p A", "pre p B", "post p B", "pre p C", "pre p D"}, {"C"}},
    {"a move keeps the next pre-image of every path", {"pre p A", "pre p B", "rename", "pre p C"}, {"B"}},
    {"a content named again stays", {"pre p A", "pre p B", "reuse B", "pre p C", "pre p D"}, {"C"}},
};

std::string Content(const std::string& label) { return "content " + label + "\n"; }

BOOST_AUTO_TEST_CASE(WhatASessionDropsWhenTheCapBinds) {
  for (const Row& row : kRows) {
    BOOST_TEST_CONTEXT(row.name) {
      testing::TempDir tmp{"guard-session-cap"};
      testing::FakeCaptureLog log(tmp.path + "/store");
      auto logger = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
      SessionCap cap(tmp.path, 0, log.store(), &log, logger);
      cap.SetStartBytesForTest(0);
      log.store()->SetObserver(&cap);
      std::map<std::string, BlobKey> keys;
      for (const std::string& step : row.steps) {
        std::istringstream in(step);
        std::string word, path, label;
        in >> word;
        Record r;
        if (word == "mark") {
          r.kind = OpKind::kMark;
        } else if (word == "rename") {
          r.kind = OpKind::kRename;
          r.path = "elsewhere";
          r.path2 = "other";
        } else if (word == "reuse") {
          in >> label;
          BlobKey key;
          BOOST_REQUIRE(log.store()->PutBytes(Content(label), &key).ok());
          continue;
        } else {
          in >> path >> label;
          BlobKey key;
          BOOST_REQUIRE(log.store()->PutBytes(Content(label), &key).ok());
          keys[label] = key;
          FileState s;
          s.type = FileType::kRegular;
          s.size = Content(label).size();
          s.blob.kind = BlobRef::Kind::kKey;
          s.blob.key = key;
          r.path = path;
          if (word == "pre") {
            r.kind = OpKind::kModify;
            r.before = s;
          } else {
            r.kind = OpKind::kFinal;
            r.flags = kPostImage;
            r.after = s;
          }
        }
        BOOST_REQUIRE(log.Append(&r).ok());
        cap.Saw(r);
      }
      cap.Check();
      std::set<std::string> dropped;
      size_t thinned_records = 0;
      for (const auto& [label, key] : keys) {
        if (!log.store()->Contains(key)) dropped.insert(label);
      }
      for (const Record& r : log.records) {
        if (r.kind == OpKind::kThinned) {
          ++thinned_records;
          BOOST_TEST(!log.store()->Contains(r.key));
        }
      }
      BOOST_TEST(dropped == row.dropped);
      BOOST_TEST(thinned_records == row.dropped.size());
      BOOST_TEST(cap.thinned_count() == row.dropped.size());
    }
  }
}

BOOST_AUTO_TEST_CASE(NothingIsDroppedUnderTheCap) {
  testing::TempDir tmp{"guard-session-cap"};
  testing::FakeCaptureLog log(tmp.path + "/store");
  auto logger = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  SessionCap cap(tmp.path, 1 << 30, log.store(), &log, logger);
  cap.SetStartBytesForTest(0);
  log.store()->SetObserver(&cap);
  std::vector<BlobKey> keys;
  for (const char* label : {"A", "B", "C"}) {
    BlobKey key;
    BOOST_REQUIRE(log.store()->PutBytes(Content(label), &key).ok());
    keys.push_back(key);
    Record r;
    r.kind = OpKind::kModify;
    r.path = "p";
    r.before.type = FileType::kRegular;
    r.before.blob.kind = BlobRef::Kind::kKey;
    r.before.blob.key = key;
    BOOST_REQUIRE(log.Append(&r).ok());
    cap.Saw(r);
  }
  cap.Check();
  for (const BlobKey& key : keys) BOOST_TEST(log.store()->Contains(key));
  BOOST_TEST(cap.thinned_count() == 0u);
  BOOST_TEST(cap.counted_bytes() > 0u);
}

}  // namespace
}  // namespace guard
