/* compiles thread.c of the argon2 package (binding.gyp) */
#include "src/thread.c"
