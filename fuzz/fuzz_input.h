// Helpers shared by the libFuzzer harnesses in this folder.
//
// Every harness follows one rule: ninegrid::Error is the documented way to refuse bad input, so it is
// caught and the input is simply uninteresting; anything else leaving the engine (another exception
// type, a crash, a sanitizer report, a hang, an allocation beyond libFuzzer's limit) is a finding.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace ninegrid_fuzz {

// The contents of a file the harness needs at start-up; exits with a message if it cannot be read (a
// harness without its fixture would only fuzz the error path).
inline std::string read_fixture(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "fuzz harness: cannot open fixture '%s'\n", path.c_str());
    std::exit(1);
  }
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// An environment variable's value, or `fallback` when it is unset or empty.
inline std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

}  // namespace ninegrid_fuzz
