// .npy reading and writing: declared in the public header, implemented in core/npy.cpp.
#pragma once

#include "ninegrid/npy.h"
