/* compiles ref.c of the argon2 package (binding.gyp) */
#include "src/ref.c"
