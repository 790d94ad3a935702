// ninegrid detect (not implemented yet).
#include <cstdio>

#include "commands.h"

namespace ninegrid::cli {

int cmd_detect(int argc, char** argv) {
  std::fprintf(stderr, "ninegrid detect: not implemented yet\n");
  return 2;
}

}  // namespace ninegrid::cli
