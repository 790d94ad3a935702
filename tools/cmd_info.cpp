// ninegrid info (not implemented yet).
#include <cstdio>

#include "commands.h"

namespace ninegrid::cli {

int cmd_info(int argc, char** argv) {
  std::fprintf(stderr, "ninegrid info: not implemented yet\n");
  return 2;
}

}  // namespace ninegrid::cli
