#include "runtime/resolved_options.h"

#include <algorithm>

#include "core/thread_pool.h"

namespace ninegrid {

namespace {

constexpr int kMaxSpinMicroseconds = 1000000;

Isa parse_isa(const std::string& name) {
  if (name.empty()) return hardware_isa();
  return parse_isa_cap(name, "Options::isa");
}

}  // namespace

ResolvedOptions resolve_options(const Options& o) {
  if (o.opt_level < 0 || o.opt_level > 2)
    throw Error("Options::opt_level must be 0, 1 or 2, got " + std::to_string(o.opt_level));
  if (o.threads < 0 || o.threads > 1024)
    throw Error("Options::threads must be between 0 and 1024, got " + std::to_string(o.threads));
  if (o.winograd_tile != 0 && o.winograd_tile != 2 && o.winograd_tile != 4 && o.winograd_tile != 6)
    throw Error("Options::winograd_tile must be 0 (chosen per layer), 2, 4 or 6, got " + std::to_string(o.winograd_tile));
  if (o.spin_microseconds < -1 || o.spin_microseconds > kMaxSpinMicroseconds)
    throw Error("Options::spin_microseconds must be -1 (the engine chooses), 0 (never spin) or up to " +
                std::to_string(kMaxSpinMicroseconds) + ", got " + std::to_string(o.spin_microseconds));
  for (auto [name, value] : {std::pair<const char*, int64_t>{"max_tensor_bytes", o.max_tensor_bytes},
                             {"max_arena_bytes", o.max_arena_bytes},
                             {"max_file_bytes", o.max_file_bytes}})
    if (value < 0) throw Error(std::string("Options::") + name + " must be 0 (no limit) or positive, got " + std::to_string(value));
  ResolvedOptions r;
  r.exec.isa = parse_isa(o.isa);
  try {
    r.exec.conv_algorithms = parse_conv_algorithms(o.conv_algorithms);
  } catch (const Error& e) {
    throw Error(std::string("Options::conv_algorithms: ") + e.what());
  }
  r.exec.winograd_tile = o.winograd_tile;
  r.exec.threads = o.threads > 0 ? o.threads : ThreadPool::default_threads();
  r.limits.max_tensor_bytes = o.max_tensor_bytes;
  r.limits.max_arena_bytes = o.max_arena_bytes;
  r.max_file_bytes = o.max_file_bytes;
  r.spin = o.spin_microseconds < 0 ? ThreadPool::kDefaultSpin : std::chrono::microseconds(o.spin_microseconds);
  return r;
}

}  // namespace ninegrid
