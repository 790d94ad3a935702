// Comparisons (Equal, Less, LessOrEqual, Greater, GreaterOrEqual) and logical operators (And, Or, Xor),
// with numpy broadcasting and a bool output.
#include "kernels/ref/scalar_math.h"
#include "ops/binary_op.h"

namespace ninegrid {
namespace {

using Equal = BinaryOp<ref::EqualOp, EqualityTypes, true>;
using Less = BinaryOp<ref::LessOp, NumericTypes, true>;
using LessOrEqual = BinaryOp<ref::LessEqualOp, NumericTypes, true>;
using Greater = BinaryOp<ref::GreaterOp, NumericTypes, true>;
using GreaterOrEqual = BinaryOp<ref::GreaterEqualOp, NumericTypes, true>;
using And = BinaryOp<ref::AndOp, TypeList<bool>, true>;
using Or = BinaryOp<ref::OrOp, TypeList<bool>, true>;
using Xor = BinaryOp<ref::XorOp, TypeList<bool>, true>;

NINEGRID_REGISTER_OP("Equal", Equal);
NINEGRID_REGISTER_OP("Less", Less);
NINEGRID_REGISTER_OP("LessOrEqual", LessOrEqual);
NINEGRID_REGISTER_OP("Greater", Greater);
NINEGRID_REGISTER_OP("GreaterOrEqual", GreaterOrEqual);
NINEGRID_REGISTER_OP("And", And);
NINEGRID_REGISTER_OP("Or", Or);
NINEGRID_REGISTER_OP("Xor", Xor);

}  // namespace
}  // namespace ninegrid
