#include "ops/elementwise_common.h"

namespace ninegrid {

Shape broadcast_or_throw(const Op& op, const std::vector<Shape>& shapes) {
  Shape out;
  if (!ref::broadcast_shape(shapes, &out)) {
    std::string list;
    for (const Shape& s : shapes) list += (list.empty() ? "" : ", ") + shape_str(s);
    op.error("input shapes " + list + " cannot be broadcast together");
  }
  return out;
}

}  // namespace ninegrid
