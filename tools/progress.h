// A progress bar on stderr for the slow subcommands (bench, quantize), shown only to a person watching a
// terminal (stderr is a TTY) and only once the work has taken long enough to make waiting noticeable.
//
//   Progress progress(images.size());
//   for (...) { ...; progress.update("calibrating", i + 1); }
//   progress.finish();  // erases the bar before results are printed
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

#include "cli_common.h"

namespace ninegrid::cli {

class Progress {
 public:
  explicit Progress(int total, int delay_ms = 500)
      : total_(total), delay_ms_(delay_ms), enabled_(isatty(STDERR_FILENO) == 1), start_(now_ms()) {}
  // `phase [#######.............] done/total  elapsed s`
  void update(const char* phase, int done) {
    if (!enabled_) return;
    const double elapsed = now_ms() - start_;
    if (elapsed < delay_ms_) return;
    const int width = 24;
    const int filled = total_ > 0 ? static_cast<int>(static_cast<double>(width) * done / total_) : 0;
    std::string bar(static_cast<size_t>(width), '.');
    for (int i = 0; i < filled && i < width; ++i) bar[static_cast<size_t>(i)] = '#';
    const int n = std::fprintf(stderr, "\r%s [%s] %d/%d  %.1f s ", phase, bar.c_str(), done, total_, elapsed / 1000);
    if (n > shown_) shown_ = n;
    std::fflush(stderr);
  }
  // Erases the bar, before the results are printed.
  void finish() {
    if (shown_ > 0) std::fprintf(stderr, "\r%*s\r", shown_, "");
    std::fflush(stderr);
    shown_ = 0;
  }
  ~Progress() { finish(); }

 private:
  int total_;
  int delay_ms_;
  bool enabled_;
  double start_;
  int shown_ = 0;
};

}  // namespace ninegrid::cli
