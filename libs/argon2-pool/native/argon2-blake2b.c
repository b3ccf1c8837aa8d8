/* compiles blake2b.c of the argon2 package (binding.gyp) */
#include "src/blake2/blake2b.c"
