// The subcommands of the `ninegrid` command line. Each takes the arguments after its name
// (argv[0] is the subcommand name), prints its own --help, and returns the process exit code.
#pragma once

namespace ninegrid::cli {

int cmd_run(int argc, char** argv);      // cmd_run.cpp
int cmd_info(int argc, char** argv);     // cmd_info.cpp
int cmd_bench(int argc, char** argv);    // cmd_bench.cpp
int cmd_detect(int argc, char** argv);   // cmd_detect.cpp
int cmd_profile(int argc, char** argv);  // cmd_profile.cpp
int cmd_quantize(int argc, char** argv); // cmd_quantize.cpp
int cmd_tune(int argc, char** argv);     // cmd_tune.cpp

}  // namespace ninegrid::cli
