// Checks on a state directory for the gc tests: which blobs a session names
// that cannot be read back, and making the store look old (so that a sweep,
// which keeps whatever is newer than its cut, may remove it).
#pragma once

#include <string>
#include <vector>

namespace guard::e2e {

// "seq N: <ref>: why" for every blob a record of session `id` names that
// does not read back whole. Empty: the session is complete.
std::vector<std::string> UnreadableBlobs(const std::string& guard_home, const std::string& id);

// Sets the mtime of every file and symlink under <guard_home>/store back by
// `seconds`.
void AgeStore(const std::string& guard_home, int seconds);

// Files under <guard_home>/store/objects.
size_t CountObjects(const std::string& guard_home);

}  // namespace guard::e2e
