// What a directory takes on disk: st_blocks of everything under it (not
// following symlinks), as gc counts the state directory against its cap.
#pragma once

#include <cstdint>
#include <string>

namespace guard {

uint64_t DiskBytesUnder(const std::string& dir);

}  // namespace guard
