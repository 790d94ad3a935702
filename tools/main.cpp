// The `ninegrid` command line (placeholder until the subcommands land).
#include <cstdio>

#include "ninegrid/ninegrid.h"

int main(int argc, char** argv) {
  std::printf("ninegrid\n");
  return 0;
}
