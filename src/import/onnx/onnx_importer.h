// ONNX reader: a serialized ModelProto in, a validated Graph out. Never crashes on malformed bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

#include "ir/graph.h"

namespace ninegrid {

// Parses an ONNX model (opsets 1 to 18 of the default domain). Initializers become constant values,
// graph inputs that are not initializers become graph inputs. Throws Error on malformed or unsupported
// content (naming the node where there is one).
Graph import_onnx(const void* data, size_t size);
// The same from a mapped model file, whose pages are given back as the weights are decoded from them.
class MappedFile;
Graph import_onnx(const MappedFile& file);
// The same from a model file's bytes, which are freed once parsed (lower peak memory while loading).
Graph import_onnx(std::string&& bytes);
// The same parsed straight from a stream of `size` bytes (a model file): protobuf reads it in blocks, so
// the file's bytes never sit in memory whole beside the parsed proto.
Graph import_onnx_stream(std::istream& in, uint64_t size);

}  // namespace ninegrid
