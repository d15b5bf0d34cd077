// The FSEvents constants guard uses, with the values of Apple's public
// CoreServices header FSEvents.h (FSEventStreamEventFlags,
// FSEventStreamCreateFlags), declared here so that the decoding
// (fsevents_hints.h) builds and is tested on any platform and the macOS
// source (fsevents_source_darwin.cc) needs no framework headers.
#pragma once

#include <cstdint>

namespace guard::fsevents {

// FSEventStreamEventFlags: what happened at an event's path.
inline constexpr uint32_t kNone = 0x00000000;
inline constexpr uint32_t kMustScanSubDirs = 0x00000001;  // the path's subtree must be rescanned
inline constexpr uint32_t kUserDropped = 0x00000002;      // with MustScanSubDirs: dropped in user space
inline constexpr uint32_t kKernelDropped = 0x00000004;    // with MustScanSubDirs: dropped in the kernel
inline constexpr uint32_t kEventIdsWrapped = 0x00000008;
inline constexpr uint32_t kHistoryDone = 0x00000010;      // a marker, no change
inline constexpr uint32_t kRootChanged = 0x00000020;      // WatchRoot: the root or a parent moved or went
inline constexpr uint32_t kMount = 0x00000040;
inline constexpr uint32_t kUnmount = 0x00000080;
inline constexpr uint32_t kItemCreated = 0x00000100;
inline constexpr uint32_t kItemRemoved = 0x00000200;
inline constexpr uint32_t kItemInodeMetaMod = 0x00000400;
inline constexpr uint32_t kItemRenamed = 0x00000800;
inline constexpr uint32_t kItemModified = 0x00001000;
inline constexpr uint32_t kItemFinderInfoMod = 0x00002000;
inline constexpr uint32_t kItemChangeOwner = 0x00004000;
inline constexpr uint32_t kItemXattrMod = 0x00008000;
inline constexpr uint32_t kItemIsFile = 0x00010000;
inline constexpr uint32_t kItemIsDir = 0x00020000;
inline constexpr uint32_t kItemIsSymlink = 0x00040000;
inline constexpr uint32_t kOwnEvent = 0x00080000;
inline constexpr uint32_t kItemIsHardlink = 0x00100000;
inline constexpr uint32_t kItemIsLastHardlink = 0x00200000;
inline constexpr uint32_t kItemCloned = 0x00400000;

// FSEventStreamCreateFlags.
inline constexpr uint32_t kCreateNoDefer = 0x00000002;
inline constexpr uint32_t kCreateWatchRoot = 0x00000004;
inline constexpr uint32_t kCreateFileEvents = 0x00000010;

// kFSEventStreamEventIdSinceNow.
inline constexpr uint64_t kEventIdSinceNow = 0xFFFFFFFFFFFFFFFFULL;

}  // namespace guard::fsevents
