/* compiles core.c of the argon2 package (binding.gyp) */
#include "src/core.c"
