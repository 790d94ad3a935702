// ninegrid._InferenceSession: the engine side of ninegrid.InferenceSession (python/ninegrid/session.py).
#pragma once

#include <pybind11/pybind11.h>

namespace ngpy {

void bind_inference_session(pybind11::module_& m);

}  // namespace ngpy
