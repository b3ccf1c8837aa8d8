/* compiles argon2.c of the argon2 package (binding.gyp) */
#include "src/argon2.c"
