// Old-opset attribute forms rewritten into the newest input forms, so operators implement one form.
#pragma once

#include <string>

#include "ir/graph.h"

namespace ninegrid {

// Adds a constant value holding `value` under a fresh name derived from `base_name`; returns its id.
int add_constant_value(Graph& graph, const std::string& base_name, const Tensor& value);

// If `node` (of the default domain, written against `opset`) uses an attribute that newer opsets take
// as an input (Slice<10 starts/ends/axes, Split<13 split, Squeeze/Unsqueeze<13 axes, Pad<11 pads/value,
// Clip<11 min/max, Upsample<9 scales), moves it into a constant input added to `graph` and removes the
// attribute. Throws Error naming the node if the attribute has the wrong type or the input is taken.
void upgrade_legacy_form(Graph& graph, Node& node, int opset);

}  // namespace ninegrid
