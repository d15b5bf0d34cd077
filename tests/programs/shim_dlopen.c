// dlopen, after the program started, of a library that changes files
// (lib/shim_dl_writer.c), run with the shim preloaded: the library's calls
// bind to the shim like the program's. argv[1] is the library's path.
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 2) return 1;
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "shim_dlopen: %s\n", dlerror());
    return 1;
  }
  int (*write_files)(void) = (int (*)(void))dlsym(lib, "shim_dl_write_files");
  return write_files && write_files() == 0 ? 0 : 2;
}
