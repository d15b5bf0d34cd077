// `guard config set`: one key of config.toml changed in place, the rest of
// the file (comments, blank lines, the other keys and their order) kept byte
// for byte. toml++ keeps no comments, so the file is edited as text: the
// value's own span where the key is (toml++ says where), else a line at the
// end of its [table], else a new table at the end of the file.
#pragma once

#include <string>

#include "common/status.h"

namespace guard {

// The TOML text of `value` as a user types it on the command line: itself
// when it reads as a TOML value (3, true, "x", ["a", "b"]), else the string
// it is, quoted ("30d" from 30d).
std::string TomlValueText(const std::string& value);

// `text` (a config.toml, possibly empty) with `key` ("section.leaf") set to
// `value_text` (TOML) in *out. Fails, naming `path`, when `text` is not
// valid TOML or the key could not be placed.
Status SetConfigText(const std::string& text, const std::string& path, const std::string& key,
                     const std::string& value_text, std::string* out);

}  // namespace guard
