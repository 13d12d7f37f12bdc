/* cuda-shim: some programs include <crt/host_defines.h> directly; same content. */
#include "../host_defines.h"
