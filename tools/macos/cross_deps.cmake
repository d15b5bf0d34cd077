# The dependencies of a cross build (tools/macos/build.sh), as imported
# targets under the names the find_package and pkg_check_modules calls of
# CMakeLists.txt give a native build:
#   GUARD_CROSS_DEPS     the C libraries built for the target (lib/, include/)
#   GUARD_CROSS_HEADERS  a folder holding only Debian's header-only libraries
#                        (boost, CLI11, fmt, nlohmann-json, spdlog, toml++, xxHash)
function(guard_cross_library name)
  add_library(${name} INTERFACE IMPORTED GLOBAL)
  set(libs)
  foreach(lib ${ARGN})
    list(APPEND libs "${GUARD_CROSS_DEPS}/lib/lib${lib}.a")
  endforeach()
  set_target_properties(${name} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${GUARD_CROSS_DEPS}/include"
                                           INTERFACE_LINK_LIBRARIES "${libs}")
endfunction()
function(guard_cross_headers name)
  add_library(${name} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${name} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${GUARD_CROSS_HEADERS}"
                                           INTERFACE_COMPILE_DEFINITIONS "${ARGN}")
endfunction()

guard_cross_library(PkgConfig::ZSTD zstd)
guard_cross_library(PkgConfig::ZLIB z)
guard_cross_library(PkgConfig::LIBGIT2 git2 z)
# xxHash compiled into whoever includes it; spdlog and fmt header-only.
guard_cross_headers(PkgConfig::XXHASH XXH_INLINE_ALL)
guard_cross_headers(spdlog::spdlog SPDLOG_HEADER_ONLY FMT_HEADER_ONLY)
guard_cross_headers(CLI11::CLI11)
guard_cross_headers(nlohmann_json::nlohmann_json)
guard_cross_headers(tomlplusplus::tomlplusplus)
guard_cross_headers(Boost::headers)
guard_cross_headers(Boost::filesystem)
