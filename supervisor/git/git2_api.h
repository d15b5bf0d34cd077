// libgit2's API as guard's git layer calls it: every file of guard that
// calls libgit2 includes this header, not <git2.h>. With
// GUARD_LAZY_LIBGIT2 (Linux), each function below is reached through a
// pointer looked up at its first call, and libgit2 is loaded then
// (base/lazy_library.h): guard's binary does not link it, so the commands
// that never touch git (a session's start, `guard mark`, `status`) do not
// load it. Elsewhere (macOS, libgit2 linked statically) the calls are
// direct. A function of libgit2 used anywhere in guard must be listed
// here: the link of guard fails otherwise.
#pragma once

#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#if defined(GUARD_LAZY_LIBGIT2)
#include "supervisor/base/lazy_library.h"

namespace guard {
LazyLibrary& Libgit2();
}  // namespace guard

#define GUARD_GIT_LAZY(name) GUARD_LAZY_FUNCTION(::guard::Libgit2(), name)

#define git_attr_get GUARD_GIT_LAZY(git_attr_get)
#define git_attr_value GUARD_GIT_LAZY(git_attr_value)
#define git_blob_create_from_buffer GUARD_GIT_LAZY(git_blob_create_from_buffer)
#define git_blob_free GUARD_GIT_LAZY(git_blob_free)
#define git_blob_lookup GUARD_GIT_LAZY(git_blob_lookup)
#define git_blob_rawcontent GUARD_GIT_LAZY(git_blob_rawcontent)
#define git_blob_rawsize GUARD_GIT_LAZY(git_blob_rawsize)
#define git_buf_dispose GUARD_GIT_LAZY(git_buf_dispose)
#define git_commit_create GUARD_GIT_LAZY(git_commit_create)
#define git_commit_free GUARD_GIT_LAZY(git_commit_free)
#define git_commit_lookup GUARD_GIT_LAZY(git_commit_lookup)
#define git_commit_tree GUARD_GIT_LAZY(git_commit_tree)
#define git_config_entry_free GUARD_GIT_LAZY(git_config_entry_free)
#define git_config_free GUARD_GIT_LAZY(git_config_free)
#define git_config_get_entry GUARD_GIT_LAZY(git_config_get_entry)
#define git_error_last GUARD_GIT_LAZY(git_error_last)
#define git_filter_list_free GUARD_GIT_LAZY(git_filter_list_free)
#define git_filter_list_load GUARD_GIT_LAZY(git_filter_list_load)
#define git_ignore_path_is_ignored GUARD_GIT_LAZY(git_ignore_path_is_ignored)
#define git_index_add GUARD_GIT_LAZY(git_index_add)
#define git_index_conflict_remove GUARD_GIT_LAZY(git_index_conflict_remove)
#define git_index_entry_stage GUARD_GIT_LAZY(git_index_entry_stage)
#define git_index_entrycount GUARD_GIT_LAZY(git_index_entrycount)
#define git_index_free GUARD_GIT_LAZY(git_index_free)
#define git_index_get_byindex GUARD_GIT_LAZY(git_index_get_byindex)
#define git_index_get_bypath GUARD_GIT_LAZY(git_index_get_bypath)
#define git_index_open GUARD_GIT_LAZY(git_index_open)
#define git_index_path GUARD_GIT_LAZY(git_index_path)
#define git_index_read GUARD_GIT_LAZY(git_index_read)
#define git_index_remove GUARD_GIT_LAZY(git_index_remove)
#define git_index_remove_bypath GUARD_GIT_LAZY(git_index_remove_bypath)
#define git_index_remove_directory GUARD_GIT_LAZY(git_index_remove_directory)
#define git_index_write GUARD_GIT_LAZY(git_index_write)
#define git_libgit2_init GUARD_GIT_LAZY(git_libgit2_init)
#define git_libgit2_opts GUARD_GIT_LAZY(git_libgit2_opts)
#define git_mempack_new GUARD_GIT_LAZY(git_mempack_new)
#define git_mempack_reset GUARD_GIT_LAZY(git_mempack_reset)
#define git_odb_add_backend GUARD_GIT_LAZY(git_odb_add_backend)
#define git_odb_free GUARD_GIT_LAZY(git_odb_free)
#define git_odb_hash GUARD_GIT_LAZY(git_odb_hash)
#define git_odb_hashfile GUARD_GIT_LAZY(git_odb_hashfile)
#define git_odb_object_data GUARD_GIT_LAZY(git_odb_object_data)
#define git_odb_object_free GUARD_GIT_LAZY(git_odb_object_free)
#define git_odb_object_size GUARD_GIT_LAZY(git_odb_object_size)
#define git_odb_object_type GUARD_GIT_LAZY(git_odb_object_type)
#define git_odb_read GUARD_GIT_LAZY(git_odb_read)
#define git_odb_read_header GUARD_GIT_LAZY(git_odb_read_header)
#define git_odb_refresh GUARD_GIT_LAZY(git_odb_refresh)
#define git_oid_cmp GUARD_GIT_LAZY(git_oid_cmp)
#define git_oid_cpy GUARD_GIT_LAZY(git_oid_cpy)
#define git_oid_equal GUARD_GIT_LAZY(git_oid_equal)
#define git_oid_fromraw GUARD_GIT_LAZY(git_oid_fromraw)
#define git_oid_fromstr GUARD_GIT_LAZY(git_oid_fromstr)
#define git_oid_tostr GUARD_GIT_LAZY(git_oid_tostr)
#define git_reference_create GUARD_GIT_LAZY(git_reference_create)
#define git_reference_create_matching GUARD_GIT_LAZY(git_reference_create_matching)
#define git_reference_delete GUARD_GIT_LAZY(git_reference_delete)
#define git_reference_free GUARD_GIT_LAZY(git_reference_free)
#define git_reference_lookup GUARD_GIT_LAZY(git_reference_lookup)
#define git_reference_name_to_id GUARD_GIT_LAZY(git_reference_name_to_id)
#define git_reference_remove GUARD_GIT_LAZY(git_reference_remove)
#define git_reference_symbolic_create_matching GUARD_GIT_LAZY(git_reference_symbolic_create_matching)
#define git_reference_symbolic_target GUARD_GIT_LAZY(git_reference_symbolic_target)
#define git_reference_target GUARD_GIT_LAZY(git_reference_target)
#define git_reference_type GUARD_GIT_LAZY(git_reference_type)
#define git_repository_config_snapshot GUARD_GIT_LAZY(git_repository_config_snapshot)
#define git_repository_free GUARD_GIT_LAZY(git_repository_free)
#define git_repository_index GUARD_GIT_LAZY(git_repository_index)
#define git_repository_item_path GUARD_GIT_LAZY(git_repository_item_path)
#define git_repository_odb GUARD_GIT_LAZY(git_repository_odb)
#define git_repository_open_ext GUARD_GIT_LAZY(git_repository_open_ext)
#define git_repository_path GUARD_GIT_LAZY(git_repository_path)
#define git_repository_workdir GUARD_GIT_LAZY(git_repository_workdir)
#define git_signature_default GUARD_GIT_LAZY(git_signature_default)
#define git_signature_free GUARD_GIT_LAZY(git_signature_free)
#define git_signature_now GUARD_GIT_LAZY(git_signature_now)
#define git_tree_create_updated GUARD_GIT_LAZY(git_tree_create_updated)
#define git_tree_dup GUARD_GIT_LAZY(git_tree_dup)
#define git_tree_entry_bypath GUARD_GIT_LAZY(git_tree_entry_bypath)
#define git_tree_entry_filemode GUARD_GIT_LAZY(git_tree_entry_filemode)
#define git_tree_entry_free GUARD_GIT_LAZY(git_tree_entry_free)
#define git_tree_entry_id GUARD_GIT_LAZY(git_tree_entry_id)
#define git_tree_entry_type GUARD_GIT_LAZY(git_tree_entry_type)
#define git_tree_free GUARD_GIT_LAZY(git_tree_free)
#define git_tree_id GUARD_GIT_LAZY(git_tree_id)
#define git_tree_lookup GUARD_GIT_LAZY(git_tree_lookup)
#define git_treebuilder_free GUARD_GIT_LAZY(git_treebuilder_free)
#define git_treebuilder_insert GUARD_GIT_LAZY(git_treebuilder_insert)
#define git_treebuilder_new GUARD_GIT_LAZY(git_treebuilder_new)
#define git_treebuilder_write GUARD_GIT_LAZY(git_treebuilder_write)
#endif  // GUARD_LAZY_LIBGIT2
