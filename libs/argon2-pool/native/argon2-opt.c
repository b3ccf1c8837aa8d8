/* compiles opt.c of the argon2 package (binding.gyp) */
#include "src/opt.c"
