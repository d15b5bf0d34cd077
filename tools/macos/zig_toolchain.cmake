# CMake toolchain: macOS through `zig cc` (tools/macos/build.sh).
#   -DGUARD_ZIG=/path/to/zig -DGUARD_ZIG_TARGET=aarch64-macos|x86_64-macos
# The compilers are small scripts written beside the build tree, since CMake
# wants one program per language.
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES GUARD_ZIG GUARD_ZIG_TARGET)
string(REGEX REPLACE "-.*" "" CMAKE_SYSTEM_PROCESSOR "${GUARD_ZIG_TARGET}")
if(CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
  set(CMAKE_SYSTEM_PROCESSOR arm64)
endif()
set(CMAKE_OSX_ARCHITECTURES "" CACHE STRING "" FORCE)  # zig's -target says it
set(CMAKE_OSX_SYSROOT "" CACHE PATH "" FORCE)
set(CMAKE_OSX_DEPLOYMENT_TARGET "" CACHE STRING "" FORCE)

get_filename_component(_guard_zig_dir "${CMAKE_BINARY_DIR}" ABSOLUTE)
set(_guard_zig_bin "${_guard_zig_dir}/zig-bin")
foreach(_tool cc c++ ar ranlib)
  if(_tool STREQUAL "ar")
    # Darwin's archive format, which Zig's Mach-O linker reads.
    set(_line "exec \"${GUARD_ZIG}\" ar --format=darwin \"$@\"")
  elseif(_tool STREQUAL "ranlib")
    set(_line "exec \"${GUARD_ZIG}\" ranlib \"$@\"")
  else()
    # CMake's compiler checks pass -Wl,-v, which zig's linker refuses.
    set(_line "for a in \"$@\"; do shift; [ \"$a\" = -Wl,-v ] || set -- \"$@\" \"$a\"; done\nexec \"${GUARD_ZIG}\" ${_tool} -target ${GUARD_ZIG_TARGET} \"$@\"")
  endif()
  file(WRITE "${_guard_zig_bin}/${_tool}.tmp" "#!/bin/sh\n${_line}\n")
  file(COPY_FILE "${_guard_zig_bin}/${_tool}.tmp" "${_guard_zig_bin}/${_tool}" ONLY_IF_DIFFERENT)
  file(CHMOD "${_guard_zig_bin}/${_tool}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE)
endforeach()
set(CMAKE_C_COMPILER "${_guard_zig_bin}/cc")
set(CMAKE_CXX_COMPILER "${_guard_zig_bin}/c++")
set(CMAKE_AR "${_guard_zig_bin}/ar" CACHE FILEPATH "" FORCE)
set(CMAKE_RANLIB "${_guard_zig_bin}/ranlib" CACHE FILEPATH "" FORCE)

# `zig cc` signs what it links for arm64 only; `zig build-exe` signs for
# both (ad hoc) when given entitlements, here none. So an executable is
# linked by zig_link.sh, which hands the objects and libraries to it.
set(CMAKE_CXX_LINK_EXECUTABLE
    "\"${CMAKE_CURRENT_LIST_DIR}/zig_link.sh\" \"${GUARD_ZIG}\" ${GUARD_ZIG_TARGET} <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
