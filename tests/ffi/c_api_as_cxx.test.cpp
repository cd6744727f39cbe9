// The C API test compiled as C++: the header must work from C++ too.
#include "c_api.test.c"
