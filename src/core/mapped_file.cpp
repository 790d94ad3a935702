#include "core/mapped_file.h"

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define NINEGRID_HAS_MMAP 1
#endif

namespace ninegrid {

MappedFile::~MappedFile() { unmap(); }

void MappedFile::unmap() {
#if defined(NINEGRID_HAS_MMAP)
  if (data_) munmap(data_, size_);
#endif
  data_ = nullptr;
  size_ = 0;
}

void MappedFile::discard(const void* p, size_t bytes) const {
#if defined(NINEGRID_HAS_MMAP) && defined(MADV_DONTNEED)
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p), end = begin + bytes;
  if (!data_ || begin < reinterpret_cast<uintptr_t>(data_) || end > reinterpret_cast<uintptr_t>(data_) + size_) return;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
  if (first < last) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
#else
  (void)p;
  (void)bytes;
#endif
}

bool MappedFile::map(const std::string& path) {
#if defined(NINEGRID_HAS_MMAP)
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  void* p = MAP_FAILED;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    // Not MAP_POPULATE: the pages are mapped as they are read, and discard() gives them back, so the
    // whole file is never resident at once.
    p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  }
  close(fd);
  if (p == MAP_FAILED) return false;
  data_ = static_cast<uint8_t*>(p);
  size_ = static_cast<size_t>(st.st_size);
  return true;
#else
  (void)path;
  return false;
#endif
}

}  // namespace ninegrid
