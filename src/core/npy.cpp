#include "core/npy.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace ninegrid {

namespace {

struct DescrEntry {
  const char* descr;
  DataType dtype;
};
// '<' little-endian, '|' not applicable (1-byte types).
const DescrEntry kDescrs[] = {
    {"<f4", DataType::Float32}, {"<f8", DataType::Float64}, {"<f2", DataType::Float16},
    {"<i8", DataType::Int64},   {"<i4", DataType::Int32},   {"<i2", DataType::Int16},
    {"|i1", DataType::Int8},    {"|u1", DataType::UInt8},   {"<u2", DataType::UInt16},
    {"<u4", DataType::UInt32},  {"<u8", DataType::UInt64},  {"|b1", DataType::Bool},
};

// Returns the text of a header field's value: for 'descr': '<f4' -> "<f4"; for shape -> "(1, 3)".
std::string header_field(const std::string& header, const std::string& key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw Error("npy header lacks '" + key + "'");
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) throw Error("npy header is malformed near '" + key + "'");
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) throw Error("npy header is malformed near '" + key + "'");
  if (header[start] == '\'') {
    size_t end = header.find('\'', start + 1);
    if (end == std::string::npos) throw Error("npy header is malformed near '" + key + "'");
    return header.substr(start + 1, end - start - 1);
  }
  if (header[start] == '(') {
    size_t end = header.find(')', start);
    if (end == std::string::npos) throw Error("npy header is malformed near '" + key + "'");
    return header.substr(start, end - start + 1);
  }
  size_t end = header.find_first_of(",}", start);
  return header.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

Shape parse_tuple(const std::string& t) {
  Shape shape;
  std::string num;
  for (size_t i = 1; i < t.size(); ++i) {
    char c = t[i];
    if (c >= '0' && c <= '9') {
      num += c;
      if (num.size() > 18) throw Error("npy shape dimension is too large");
    } else if (c == ',' || c == ')') {
      if (!num.empty()) shape.push_back(std::stoll(num));
      num.clear();
    } else if (c != ' ' && c != 'L') {
      throw Error("npy shape '" + t + "' is malformed");
    }
  }
  return shape;
}

}  // namespace

Tensor parse_npy(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (size < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0) throw Error("not a .npy file (bad magic)");
  unsigned major = p[6];
  size_t header_len, header_start;
  if (major == 1) {
    header_len = p[8] | (p[9] << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) throw Error("truncated .npy header");
    header_len = p[8] | (p[9] << 8) | (size_t(p[10]) << 16) | (size_t(p[11]) << 24);
    header_start = 12;
  } else {
    throw Error("unsupported .npy version " + std::to_string(major));
  }
  if (header_len > size - header_start) throw Error("truncated .npy header");
  std::string header(reinterpret_cast<const char*>(p + header_start), header_len);
  std::string descr = header_field(header, "descr");
  std::string fortran = header_field(header, "fortran_order");
  if (fortran.find("True") != std::string::npos) throw Error(".npy in Fortran order is not supported");
  if (descr.size() == 3 && descr[0] == '=') descr[0] = '<';
  DataType dtype = DataType::Undefined;
  for (const auto& d : kDescrs)
    if (descr == d.descr || (descr.size() == 3 && descr[0] == '<' && std::string(d.descr).substr(1) == descr.substr(1) &&
                             d.descr[0] == '|'))
      dtype = d.dtype;
  if (dtype == DataType::Undefined) throw Error(".npy element type '" + descr + "' is not supported");
  Shape shape = parse_tuple(header_field(header, "shape"));
  // The data must all be there before anything is allocated: the header alone can ask for terabytes.
  const uint64_t numel = static_cast<uint64_t>(shape_numel(shape));
  const size_t available = size - (header_start + header_len);
  if (numel > available / dtype_size(dtype))
    throw Error(".npy data is truncated: " + std::to_string(available) + " bytes for shape " + shape_str(shape) +
                " of " + dtype_name(dtype));
  Tensor t = Tensor::empty(dtype, shape);
  if (t.nbytes()) std::memcpy(t.data(), p + header_start + header_len, t.nbytes());
  return t;
}

Tensor read_npy(const std::string& path, int64_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error("cannot read '" + path + "': it is a directory");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot open '" + path + "'");
  std::string bytes;
  char chunk[1 << 16];
  while (f.read(chunk, sizeof chunk) || f.gcount() > 0) {
    bytes.append(chunk, static_cast<size_t>(f.gcount()));
    if (max_bytes > 0 && bytes.size() > static_cast<size_t>(max_bytes))
      throw Error("'" + path + "' is larger than the limit of " + std::to_string(max_bytes) + " bytes");
  }
  if (f.bad()) throw Error("cannot read '" + path + "'");
  try {
    return parse_npy(bytes.data(), bytes.size());
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

void write_npy(const std::string& path, const Tensor& tensor) {
  const char* descr = nullptr;
  for (const auto& d : kDescrs)
    if (d.dtype == tensor.dtype()) descr = d.descr;
  if (!descr) throw Error(std::string("cannot write ") + dtype_name(tensor.dtype()) + " to .npy");
  std::string shape = "(";
  for (int64_t d : tensor.shape()) shape += std::to_string(d) + ", ";
  if (tensor.rank() > 1) shape.resize(shape.size() - 2);
  else if (tensor.rank() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error("cannot write '" + path + "'");
  const char magic[] = "\x93NUMPY\x01\x00";
  f.write(magic, 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  char lenb[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  f.write(lenb, 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(static_cast<const char*>(tensor.data()), static_cast<std::streamsize>(tensor.nbytes()));
  if (!f) throw Error("failed writing '" + path + "'");
}

}  // namespace ninegrid
