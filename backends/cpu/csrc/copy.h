// Threaded same-dtype copies between strided arrays (copy.cpp), for kernels that copy as one step.
#pragma once

#include "common.h"

namespace flambeau {

// out <- src, src broadcast to out's shape, split over the kernel threads. Raises ValueError for
// shapes that do not broadcast and for read-only or out-of-bounds views; returns false, having
// written nothing, when the copy is not a raw-bytes move (another dtype, byte-swapped, unaligned or
// overlapping arrays): numpy's copy is the caller's fallback.
bool copy_into(py::array out, const py::array& src);

}  // namespace flambeau
