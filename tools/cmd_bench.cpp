// ninegrid bench (not implemented yet).
#include <cstdio>

#include "commands.h"

namespace ninegrid::cli {

int cmd_bench(int argc, char** argv) {
  std::fprintf(stderr, "ninegrid bench: not implemented yet\n");
  return 2;
}

}  // namespace ninegrid::cli
