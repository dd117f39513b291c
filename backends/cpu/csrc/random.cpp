// Counter-based random numbers (Philox4x32-10) for the bulk samplers: uniform and normal fills.
//
// Element i of a call draws from counter block (offset + i / per_block) under the generator's key, so
// the numbers depend only on (key, offset, i): not on the thread count, nor on how the work is split.
// The caller advances its offset by the number of blocks a call used (philox_blocks). Normals come
// from Box-Muller with branch-free log (vecmath.h's vec_log) / sin / cos that the compiler vectorises.
#include <cmath>

#include "common.h"
#include "philox.h"
#include "vecmath.h"
#include "vec_log.h"

namespace flambeau {
namespace {

constexpr index_t kTile = 64;  // blocks generated at once, structure-of-arrays, so the rounds vectorise
constexpr index_t kThreadedBlocks = index_t(1) << 20;  // fills of fewer blocks (4M float32) run on one thread

// Philox4x32 with 10 rounds over kTile consecutive counters starting at `ctr`.
FLAMBEAU_INLINE void philox_tile(std::uint64_t key, std::uint64_t ctr, index_t count, std::uint32_t (*out)[kTile]) {
  const std::uint32_t key0 = static_cast<std::uint32_t>(key), key1 = static_cast<std::uint32_t>(key >> 32);
#pragma omp simd
  for (index_t j = 0; j < count; ++j) {
    const std::uint64_t c = ctr + static_cast<std::uint64_t>(j);
    std::uint32_t c0 = static_cast<std::uint32_t>(c), c1 = static_cast<std::uint32_t>(c >> 32), c2 = 0, c3 = 0;
    philox10(c0, c1, c2, c3, key0, key1);
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

// sin and cos of 2*pi*u for u in [0, 1), double precision (Cephes' polynomials on [-pi/4, pi/4]).
FLAMBEAU_INLINE void sincos_turn_d(double u, double& s, double& c) {
  const double t = u * 4.0;
  const int q = static_cast<int>(t);
  const double b = (t - static_cast<double>(q)) * 1.5707963267948966 - 0.7853981633974483;
  const double b2 = b * b;
  double ps = 1.58962301576546568060e-10;
  ps = ps * b2 - 2.50507477628578072866e-8;
  ps = ps * b2 + 2.75573136213857245213e-6;
  ps = ps * b2 - 1.98412698295895385996e-4;
  ps = ps * b2 + 8.33333333332211858878e-3;
  ps = ps * b2 - 1.66666666666666307295e-1;
  const double sb = b + b * b2 * ps;
  double pc = -1.13585365213876817300e-11;
  pc = pc * b2 + 2.08757008419747316778e-9;
  pc = pc * b2 - 2.75573141792967388112e-7;
  pc = pc * b2 + 2.48015872888517045348e-5;
  pc = pc * b2 - 1.38888888888730564116e-3;
  pc = pc * b2 + 4.16666666666665929218e-2;
  const double cb = 1.0 - 0.5 * b2 + b2 * b2 * pc;
  const double r = 0.7071067811865476;
  const double sa = (sb + cb) * r, ca = (cb - sb) * r;
  const double s1 = (q & 1) ? ca : sa, c1 = (q & 1) ? -sa : ca;
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

// Writes the tile's values (SoA: vals[w][j] is element (b + j) * per + w) into data, interleaved;
// only the call's last tile checks the end.
template <class T, index_t per>
FLAMBEAU_INLINE void store_tile(T* data, index_t n, index_t b, index_t count, const T (*vals)[kTile]) {
  T* dst = data + b * per;
  if ((b + count) * per <= n) {
    for (index_t j = 0; j < count; ++j)
      for (index_t w = 0; w < per; ++w) dst[j * per + w] = vals[w][j];
    return;
  }
  for (index_t j = 0; j < count; ++j)
    for (index_t w = 0; w < per; ++w)
      if ((b + j) * per + w < n) dst[j * per + w] = vals[w][j];
}

template <class T>
FLAMBEAU_CLONES void uniform_range(T* data, index_t n, std::uint64_t key, std::uint64_t offset, T low, T span,
                                   index_t first_block, index_t last_block) {
  std::uint32_t words[4][kTile];
  constexpr index_t per = PerBlock<T>::uniform;
  T vals[per][kTile];
  for (index_t b = first_block; b < last_block; b += kTile) {
    const index_t count = std::min(kTile, last_block - b);
    philox_tile(key, offset + static_cast<std::uint64_t>(b), count, words);
#pragma omp simd
    for (index_t j = 0; j < count; ++j) {
      if constexpr (per == 4) {
        for (int w = 0; w < 4; ++w) vals[w][j] = low + span * unit_f(words[w][j]);
      } else {
        vals[0][j] = low + span * unit_d(words[0][j], words[1][j]);
        vals[1][j] = low + span * unit_d(words[2][j], words[3][j]);
      }
    }
    store_tile<T, per>(data, n, b, count, vals);
  }
}

template <class T>
FLAMBEAU_CLONES void normal_range(T* data, index_t n, std::uint64_t key, std::uint64_t offset, T mean, T std_,
                                  index_t first_block, index_t last_block) {
  std::uint32_t words[4][kTile];
  constexpr index_t per = PerBlock<T>::normal;
  T vals[per][kTile];
  for (index_t b = first_block; b < last_block; b += kTile) {
    const index_t count = std::min(kTile, last_block - b);
    philox_tile(key, offset + static_cast<std::uint64_t>(b), count, words);
#pragma omp simd
    for (index_t j = 0; j < count; ++j) {
      if constexpr (per == 4) {
        for (int pair = 0; pair < 2; ++pair) {
          const float r = std::sqrt(-2.0f * vec_log(unit_open_f(words[2 * pair][j])));
          float sn, cs;
          sincos_turn_f(unit_f(words[2 * pair + 1][j]), sn, cs);
          vals[2 * pair][j] = mean + std_ * (r * cs);
          vals[2 * pair + 1][j] = mean + std_ * (r * sn);
        }
      } else {
        const double u1 = 1.0 - unit_d(words[0][j], words[1][j]);  // (0, 1]
        const double r = std::sqrt(-2.0 * vec_log(u1));
        double sn, cs;
        sincos_turn_d(unit_d(words[2][j], words[3][j]), sn, cs);
        vals[0][j] = mean + std_ * (r * cs);
        vals[1][j] = mean + std_ * (r * sn);
      }
    }
    store_tile<T, per>(data, n, b, count, vals);
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
  auto fill = [&](index_t b0, index_t b1) {
    if (normal)
      normal_range<T>(data, n, key, offset, static_cast<T>(a), static_cast<T>(b), b0, b1);
    else
      uniform_range<T>(data, n, key, offset, static_cast<T>(a), static_cast<T>(b - a), b0, b1);
  };
  // One thread fills ~1 G samples/s, already faster than PyTorch's serial samplers; a team is woken
  // only for large fills, where its gain outweighs the stalls a busy machine gives the slowest worker.
  if (blocks < kThreadedBlocks) {
    fill(0, blocks);
    return;
  }
  // Chunks are whole tiles of blocks, so a chunk boundary never splits a block's elements.
  parallel_chunks(blocks, kTile * 256, fill);
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
