#include "supervisor/trace/fd_link.h"

#include <fcntl.h>

#include <cerrno>

#include "common/file_io.h"

namespace guard {
namespace {

// Consumes a run of decimal digits at *i of `p`; false when there is none.
bool Digits(const std::string& p, size_t* i) {
  size_t start = *i;
  while (*i < p.size() && p[*i] >= '0' && p[*i] <= '9') ++*i;
  return *i > start;
}

bool Consume(const std::string& p, size_t* i, const char* lit) {
  std::string_view l(lit);
  if (p.compare(*i, l.size(), l) != 0) return false;
  *i += l.size();
  return true;
}

}  // namespace

bool IsProcFdLink(const std::string& p) {
  size_t i = 0;
  if (!Consume(p, &i, "/proc/") || !Digits(p, &i)) return false;
  if (Consume(p, &i, "/task/") && !Digits(p, &i)) return false;
  return Consume(p, &i, "/fd/") && Digits(p, &i) && i == p.size();
}

Status FollowFdLink(const std::string& link, FdLinkTarget* out) {
  *out = FdLinkTarget();
  if (stat(link.c_str(), &out->st) != 0) return Status::FromErrno(link, errno);
  std::string text;
  GUARD_RETURN_IF_ERROR(ReadLinkAt(AT_FDCWD, link, link, &text));
  // Pipes, sockets and anonymous inodes have "type:[inode]" texts, no path.
  struct stat& named = out->named;
  if (!text.empty() && text[0] == '/' && lstat(text.c_str(), &named) == 0 &&
      named.st_dev == out->st.st_dev && named.st_ino == out->st.st_ino) {
    out->path = std::move(text);
  }
  return Status::Ok();
}

}  // namespace guard
