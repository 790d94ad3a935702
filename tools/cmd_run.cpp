// ninegrid run (not implemented yet).
#include <cstdio>

#include "commands.h"

namespace ninegrid::cli {

int cmd_run(int argc, char** argv) {
  std::fprintf(stderr, "ninegrid run: not implemented yet\n");
  return 2;
}

}  // namespace ninegrid::cli
