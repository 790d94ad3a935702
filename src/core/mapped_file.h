// A file mapped read-only into memory: its bytes are the page cache's, read without a copy into fresh
// memory (the kernel clearing fresh pages was much of a large model's load time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ninegrid {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Maps the regular file at `path` whole; false (nothing mapped) when it is not one, is empty, or the
  // system cannot map it: the caller then reads it.
  bool map(const std::string& path);
  // Unmaps the file (done by the destructor too).
  void unmap();

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

  // Gives back the pages wholly inside [p, p + bytes) (a range of the mapping that has been read and is
  // not needed again), so the file's bytes do not all stay resident beside what was decoded from them.
  // Reading them again is still correct: they come back from the page cache.
  void discard(const void* p, size_t bytes) const;

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace ninegrid
