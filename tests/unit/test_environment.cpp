// The unit tests run with a cache directory of their own, however they are started (ctest sets
// XDG_CACHE_HOME too; a direct run of ninegrid_tests would otherwise read the user's): a tuning cache in
// ~/.cache/ninegrid/ (written by `ninegrid tune`, read by default when a model loads) must not change which
// plans the tests run. Tests of the cache write their own files and name them.
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace {

[[maybe_unused]] const bool kIsolatedCacheHome = [] {
  const std::string dir = "/tmp/ninegrid-test-xdg-" + std::to_string(static_cast<long long>(::getpid()));
  ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  return true;
}();

}  // namespace
