// ninegrid profile (not implemented yet).
#include <cstdio>

#include "commands.h"

namespace ninegrid::cli {

int cmd_profile(int argc, char** argv) {
  std::fprintf(stderr, "ninegrid profile: not implemented yet\n");
  return 2;
}

}  // namespace ninegrid::cli
