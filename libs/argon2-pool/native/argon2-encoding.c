/* compiles encoding.c of the argon2 package (binding.gyp) */
#include "src/encoding.c"
