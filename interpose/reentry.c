#include "interpose/reentry.h"

__thread int shim_depth __attribute__((tls_model("initial-exec")));
