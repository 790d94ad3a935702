#include "import/ncnn/ncnn_importer.h"

namespace ninegrid {
Graph import_ncnn(const std::string&, const void*, size_t) { throw Error("ncnn import is not implemented yet"); }
}  // namespace ninegrid
