// The name a restore gives the file it stages beside each file it rewrites
// (SafeTree::StageFile): ".guard-restore.PID.N", N random. Recovery of an
// interrupted restore removes exactly the names of this form that the
// restore created, so the form lives here, where both can see it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace guard {

std::string StagedName(pid_t pid, uint32_t n);
// Whether `name` (one path component) has exactly that form.
bool IsStagedName(std::string_view name);

}  // namespace guard
