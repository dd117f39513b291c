// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): the
// counter-based generator behind flambeau's CPU random numbers. A (key, counter) pair maps to four
// 32-bit words with no state in between, so any element's numbers can be computed on any thread.
#pragma once

#include <cstdint>

#include "vecmath.h"  // FLAMBEAU_INLINE

namespace flambeau {

// The counter (c0, c1, c2, c3) encrypted under the key (k0, k1), in place: ten rounds of two 32x32->64
// multiplications, the key bumped by the Weyl constants between rounds. Inlined into the callers'
// loops, where it vectorises across counters.
FLAMBEAU_INLINE void philox10(std::uint32_t& c0, std::uint32_t& c1, std::uint32_t& c2, std::uint32_t& c3,
                              std::uint32_t k0, std::uint32_t k1) {
  for (int r = 0; r < 10; ++r) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(0xD2511F53u) * c0;
    const std::uint64_t p1 = static_cast<std::uint64_t>(0xCD9E8D57u) * c2;
    const std::uint32_t n0 = static_cast<std::uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const std::uint32_t n2 = static_cast<std::uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<std::uint32_t>(p1);
    c3 = static_cast<std::uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

}  // namespace flambeau
