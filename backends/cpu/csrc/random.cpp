// Counter-based random numbers (Philox4x32-10) for the bulk samplers: uniform and normal fills.
//
// Element i of a call draws from counter block (offset + i / per_block) under the generator's key, so
// the numbers depend only on (key, offset, i): not on the thread count, nor on how the work is split.
// The caller advances its offset by the number of blocks a call used (philox_blocks). Normals come
// from Box-Muller with branch-free float log / sin / cos that the compiler vectorises.
#include <cmath>

#include "common.h"
#include "vecmath.h"

namespace flambeau {
namespace {

constexpr index_t kTile = 64;  // blocks generated at once, structure-of-arrays, so the rounds vectorise

// Philox4x32 with 10 rounds over kTile consecutive counters starting at `ctr`.
FLAMBEAU_INLINE void philox_tile(std::uint64_t key, std::uint64_t ctr, index_t count, std::uint32_t (*out)[kTile]) {
  const std::uint32_t key0 = static_cast<std::uint32_t>(key), key1 = static_cast<std::uint32_t>(key >> 32);
#pragma omp simd
  for (index_t j = 0; j < count; ++j) {
    const std::uint64_t c = ctr + static_cast<std::uint64_t>(j);
    std::uint32_t c0 = static_cast<std::uint32_t>(c), c1 = static_cast<std::uint32_t>(c >> 32), c2 = 0, c3 = 0;
    std::uint32_t k0 = key0, k1 = key1;
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
    out[0][j] = c0;
    out[1][j] = c1;
    out[2][j] = c2;
    out[3][j] = c3;
  }
}

// [0, 1) on the float grid 2^-24, and (0, 1] for Box-Muller's logarithm.
FLAMBEAU_INLINE float unit_f(std::uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
FLAMBEAU_INLINE float unit_open_f(std::uint32_t x) {
  return static_cast<float>((x >> 8) + 1) * (1.0f / 16777216.0f);
}
// [0, 1) on the grid 2^-53 from two words.
FLAMBEAU_INLINE double unit_d(std::uint32_t a, std::uint32_t b) {
  const std::uint64_t bits = ((static_cast<std::uint64_t>(a) << 32) | b) >> 11;
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);
}

// log(x) for x in (0, 1], branch-free (Cephes' logf polynomial, ~1 ulp).
FLAMBEAU_INLINE float log_f(float x) {
  std::int32_t bits;
  std::memcpy(&bits, &x, 4);
  std::int32_t e = ((bits >> 23) & 0xff) - 127;
  bits = (bits & 0x007fffff) | 0x3f800000;
  float m;
  std::memcpy(&m, &bits, 4);  // x = m * 2^e, m in [1, 2)
  const bool big = m > 1.41421356f;
  const float f = big ? m * 0.5f - 1.0f : m - 1.0f;
  const float ef = static_cast<float>(e + (big ? 1 : 0));
  const float z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z;
  y += -2.12194440e-4f * ef;
  y += -0.5f * z;
  return f + y + 0.693359375f * ef;
}

// sin and cos of 2*pi*u for u in [0, 1), branch-free: a quadrant, then polynomials on [-pi/4, pi/4].
FLAMBEAU_INLINE void sincos_turn_f(float u, float& s, float& c) {
  const float t = u * 4.0f;
  const int q = static_cast<int>(t);
  const float b = (t - static_cast<float>(q)) * 1.57079632679f - 0.785398163397f;  // angle in the quadrant - pi/4
  const float b2 = b * b;
  const float sb = b + b * b2 * (-1.6666654611e-1f + b2 * (8.3321608736e-3f + b2 * -1.9515295891e-4f));
  const float cb = 1.0f - 0.5f * b2 + b2 * b2 * (4.166664568298827e-2f + b2 * (-1.388731625493765e-3f +
                                                                              b2 * 2.443315711809948e-5f));
  const float r = 0.707106781187f;
  const float sa = (sb + cb) * r, ca = (cb - sb) * r;  // sin and cos of the angle within the quadrant
  const float s1 = (q & 1) ? ca : sa, c1 = (q & 1) ? -sa : ca;
  s = (q & 2) ? -s1 : s1;
  c = (q & 2) ? -c1 : c1;
}

template <class T>
struct PerBlock;
template <>
struct PerBlock<float> {
  static constexpr index_t uniform = 4, normal = 4;
};
template <>
struct PerBlock<double> {
  static constexpr index_t uniform = 2, normal = 2;
};

template <class T>
void check_out(const py::array& out) {
  if (dtype_of(out) != dtype_tag<T>()) throw std::invalid_argument("philox: out has the wrong dtype");
  if (!(out.flags() & py::array::c_style)) throw std::invalid_argument("philox: out must be C-contiguous");
  check_in_bounds(out, "out", true);
}

template <class T>
FLAMBEAU_CLONES void uniform_range(T* data, index_t n, std::uint64_t key, std::uint64_t offset, T low, T span,
                                   index_t first_block, index_t last_block) {
  std::uint32_t words[4][kTile];
  constexpr index_t per = PerBlock<T>::uniform;
  for (index_t b = first_block; b < last_block; b += kTile) {
    const index_t count = std::min(kTile, last_block - b);
    philox_tile(key, offset + static_cast<std::uint64_t>(b), count, words);
    for (index_t j = 0; j < count; ++j) {
      const index_t base = (b + j) * per;
      if constexpr (per == 4) {
        for (index_t w = 0; w < 4; ++w)
          if (base + w < n) data[base + w] = low + span * unit_f(words[w][j]);
      } else {
        if (base < n) data[base] = low + span * static_cast<T>(unit_d(words[0][j], words[1][j]));
        if (base + 1 < n) data[base + 1] = low + span * static_cast<T>(unit_d(words[2][j], words[3][j]));
      }
    }
  }
}

template <class T>
FLAMBEAU_CLONES void normal_range(T* data, index_t n, std::uint64_t key, std::uint64_t offset, T mean, T std_,
                                  index_t first_block, index_t last_block) {
  std::uint32_t words[4][kTile];
  constexpr index_t per = PerBlock<T>::normal;
  for (index_t b = first_block; b < last_block; b += kTile) {
    const index_t count = std::min(kTile, last_block - b);
    philox_tile(key, offset + static_cast<std::uint64_t>(b), count, words);
    if constexpr (per == 4) {
      float z[4][kTile];
#pragma omp simd
      for (index_t j = 0; j < count; ++j) {
        for (int pair = 0; pair < 2; ++pair) {
          const float r = std::sqrt(-2.0f * log_f(unit_open_f(words[2 * pair][j])));
          float s, c;
          sincos_turn_f(unit_f(words[2 * pair + 1][j]), s, c);
          z[2 * pair][j] = r * c;
          z[2 * pair + 1][j] = r * s;
        }
      }
      for (index_t j = 0; j < count; ++j) {
        const index_t base = (b + j) * 4;
        for (index_t w = 0; w < 4; ++w)
          if (base + w < n) data[base + w] = mean + std_ * z[w][j];
      }
    } else {
      for (index_t j = 0; j < count; ++j) {
        const double u1 = 1.0 - unit_d(words[0][j], words[1][j]);  // (0, 1]
        const double u2 = unit_d(words[2][j], words[3][j]);
        const double r = std::sqrt(-2.0 * std::log(u1));
        const double theta = 6.283185307179586 * u2;
        const index_t base = (b + j) * 2;
        if (base < n) data[base] = mean + std_ * r * std::cos(theta);
        if (base + 1 < n) data[base + 1] = mean + std_ * r * std::sin(theta);
      }
    }
  }
}

// How many counter blocks a fill of n elements of this dtype uses (the caller advances its offset by it).
index_t philox_blocks(const std::string& kind, const std::string& dtype, index_t n) {
  const index_t per = dtype == "float64" ? 2 : 4;
  (void)kind;
  return (n + per - 1) / per;
}

template <class T>
void run(const py::array& out, std::uint64_t key, std::uint64_t offset, double a, double b, bool normal) {
  check_out<T>(out);
  T* data = static_cast<T*>(py::array(out).mutable_data());
  const index_t n = out.size();
  const index_t per = normal ? PerBlock<T>::normal : PerBlock<T>::uniform;
  const index_t blocks = (n + per - 1) / per;
  py::gil_scoped_release release;
  // Chunks are whole tiles of blocks, so a chunk boundary never splits a block's elements.
  parallel_chunks(blocks, kTile * 256, [&](index_t b0, index_t b1) {
    if (normal)
      normal_range<T>(data, n, key, offset, static_cast<T>(a), static_cast<T>(b), b0, b1);
    else
      uniform_range<T>(data, n, key, offset, static_cast<T>(a), static_cast<T>(b - a), b0, b1);
  });
}

void philox_fill(const py::array& out, std::uint64_t key, std::uint64_t offset, double a, double b, bool normal) {
  const DType d = dtype_of(out);
  if (d == DType::f32)
    run<float>(out, key, offset, a, b, normal);
  else if (d == DType::f64)
    run<double>(out, key, offset, a, b, normal);
  else
    throw std::invalid_argument(std::string("philox_fill: unsupported dtype ") + dtype_name(d));
}

void register_random(py::module_& m) {
  m.def("philox_fill", &philox_fill, py::arg("out"), py::arg("key"), py::arg("offset"), py::arg("a"),
        py::arg("b"), py::arg("normal"),
        "Fill a C-contiguous float32/float64 array: uniform on [a, b), or normal with mean a and std b, "
        "from Philox4x32-10 counter blocks offset, offset + 1, ... under key (see philox_blocks)");
  m.def("philox_blocks", &philox_blocks, py::arg("kind"), py::arg("dtype"), py::arg("n"),
        "Counter blocks a fill of n elements of dtype ('float32' or 'float64') uses");
}

}  // namespace

FLAMBEAU_REGISTER(register_random);

}  // namespace flambeau
