// ninegrid::version(): the version this library was built as, from the generated ninegrid/version.h.
#include "ninegrid/ninegrid.h"

namespace ninegrid {

const char* version() { return NINEGRID_VERSION; }

}  // namespace ninegrid
