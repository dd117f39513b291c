// Samplers for flambeau-distributions' ops: Gamma(alpha, 1) draws (Marsaglia and Tsang, 2000, with the
// alpha < 1 boost), their implicit reparameterisation gradient d sample / d alpha, Poisson draws (Hormann's
// PTRS transformed rejection from rate 10, multiplication of uniforms below) and binomial draws (Hormann's
// BTRS transformed rejection for n * min(p, 1 - p) >= 10, inversion below).
//
// Random bits: element i of a call owns Philox4x32-10 counter block (offset + i) under the generator's
// key (its seed); its k-th block of words is the counter (offset + i, k). A sampler that rejects draws
// more words from its own element's sequence only, so every draw depends on (seed, offset, i) and not on
// the thread count, and the caller advances the generator's offset by n blocks (the numbers are not
// numpy's nor PyTorch's).
#include <cmath>
#include <limits>

#include "common.h"
#include "philox.h"
#include "vecmath.h"

namespace flambeau {
namespace {

// Elements below which a call runs on one thread: a draw costs ~50-100 ns, so a team pays off early.
constexpr index_t kThreadedElements = 16384;
constexpr index_t kChunk = 4096;

constexpr int kTile = 64;

// Block `draw` of the sequences of elements first .. first + count - 1 (count <= kTile), structure of
// arrays (out[w][j] is word w of element first + j), computed across elements so that it vectorises.
FLAMBEAU_CLONES void philox_tile(std::uint64_t key, std::uint64_t first, int count, std::uint64_t draw,
                                 std::uint32_t (*out)[kTile]) {
  const std::uint32_t k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
#pragma omp simd
  for (int j = 0; j < count; ++j) {
    const std::uint64_t block = first + static_cast<std::uint64_t>(j);
    std::uint32_t c0 = static_cast<std::uint32_t>(block), c1 = static_cast<std::uint32_t>(block >> 32);
    std::uint32_t c2 = static_cast<std::uint32_t>(draw), c3 = static_cast<std::uint32_t>(draw >> 32);
    philox10(c0, c1, c2, c3, k0, k1);
    out[0][j] = c0, out[1][j] = c1, out[2][j] = c2, out[3][j] = c3;
  }
}

// The words of one element's Philox sequence: block k is the counter (element's block, k). The first
// blocks may come precomputed (philox_tile); later ones are computed here, four words at a time.
class ElementStream {
 public:
  ElementStream(std::uint64_t key, std::uint64_t block) : key_(key), block_(block) {}
  // With the first two blocks already computed: words[0..7].
  ElementStream(std::uint64_t key, std::uint64_t block, const std::uint32_t* words)
      : key_(key), block_(block), draw_(2), avail_(8), pos_(0) {
    for (int w = 0; w < 8; ++w) words_[w] = words[w];
  }

  std::uint32_t next_word() {
    if (pos_ == avail_) refill();
    return words_[pos_++];
  }
  // [0, 1) on the grid 2^-53.
  double uniform() {
    const std::uint64_t hi = next_word(), lo = next_word();
    return static_cast<double>(((hi << 32) | lo) >> 11) * (1.0 / 9007199254740992.0);
  }
  // (0, 1) on the grid 2^-32 (offset by half a step): enough for a float32 result, at half the words.
  double uniform32() { return (static_cast<double>(next_word()) + 0.5) * (1.0 / 4294967296.0); }
  // (0, 1], for logarithms.
  double uniform_open() { return 1.0 - uniform(); }
  // Standard normal by Marsaglia's polar method (no sine or cosine); the second value of each pair is
  // kept for the next call.
  template <bool wide>
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, r2;
    do {
      u = 2.0 * (wide ? uniform() : uniform32()) - 1.0;
      v = 2.0 * (wide ? uniform() : uniform32()) - 1.0;
      r2 = u * u + v * v;
    } while (r2 >= 1.0 || r2 == 0.0);
    const double f = std::sqrt(-2.0 * std::log(r2) / r2);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
  }

 private:
  void refill() {
    std::uint32_t c0 = static_cast<std::uint32_t>(block_), c1 = static_cast<std::uint32_t>(block_ >> 32);
    std::uint32_t c2 = static_cast<std::uint32_t>(draw_), c3 = static_cast<std::uint32_t>(draw_ >> 32);
    philox10(c0, c1, c2, c3, static_cast<std::uint32_t>(key_), static_cast<std::uint32_t>(key_ >> 32));
    words_[0] = c0, words_[1] = c1, words_[2] = c2, words_[3] = c3;
    ++draw_;
    avail_ = 4;
    pos_ = 0;
  }

  std::uint64_t key_, block_, draw_ = 0;
  std::uint32_t words_[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int avail_ = 0, pos_ = 0;
  double spare_ = 0.0;
  bool has_spare_ = false;
};
// -- Gamma(alpha, 1) draws --------------------------------------------------------------------------

// Marsaglia and Tsang's squeeze-rejection sampler. alpha < 1 draws Gamma(alpha + 1) and multiplies by
// U^(1 / alpha), applied in logs because U^(1 / alpha) underflows long before the product does.
// An alpha that is not positive (zero, negative or NaN) gives 0, which the caller raises to the dtype's
// smallest normal number, as PyTorch's sampler does; an infinite alpha gives infinity.
// `wide` draws 53-bit uniforms (float64 results), else 32-bit ones (float32 results).
template <bool wide>
double standard_gamma_one(double alpha, ElementStream& s) {
  if (!(alpha > 0.0)) return 0.0;
  double log_boost = 0.0;
  if (alpha < 1.0) {
    log_boost = std::log(wide ? s.uniform_open() : s.uniform32()) / alpha;
    alpha += 1.0;
  }
  const double d = alpha - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = s.template normal<wide>();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = wide ? s.uniform_open() : s.uniform32();
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2 || std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v)))
      return log_boost == 0.0 ? d * v : std::exp(std::log(d * v) + log_boost);
  }
}

template <class T>
void gamma_range(const T* alpha, T* out, std::uint64_t key, std::uint64_t offset, index_t begin, index_t end) {
  const T tiny = std::numeric_limits<T>::min();
  // Each element's first two blocks (enough for most draws) are computed a tile at a time, vectorised.
  std::uint32_t first[4][kTile], second[4][kTile];
  for (index_t base = begin; base < end; base += kTile) {
    const int count = static_cast<int>(std::min<index_t>(kTile, end - base));
    const std::uint64_t block = offset + static_cast<std::uint64_t>(base);
    philox_tile(key, block, count, 0, first);
    philox_tile(key, block, count, 1, second);
    for (int j = 0; j < count; ++j) {
      const std::uint32_t words[8] = {first[0][j],  first[1][j],  first[2][j],  first[3][j],
                                      second[0][j], second[1][j], second[2][j], second[3][j]};
      ElementStream s(key, block + static_cast<std::uint64_t>(j), words);
      const index_t i = base + j;
      const T v = static_cast<T>(standard_gamma_one<(sizeof(T) > 4)>(static_cast<double>(alpha[i]), s));
      // Draws below the dtype's smallest normal number become it, so that log(sample) stays finite.
      out[i] = v < tiny ? tiny : v;
    }
  }
}

// -- d sample / d alpha -----------------------------------------------------------------------------

// psi(a) for a > 0: psi(a) = psi(a + 6) - sum_(k<6) 1 / (a + k), the sum kept as one fraction num / den,
// then the asymptotic series at a + 6 >= 6 (its first omitted term is below 1e-12). A fixed shift keeps
// the function free of data-dependent branches (a loop to a >= 10 cost ~3x more in mispredictions).
// Used for a <= 1e3 + 1 only, where den cannot overflow.
double digamma_pos(double a) {
  double num = 0.0, den = 1.0;
  for (int k = 0; k < 6; ++k) {
    num = num * a + den;
    den *= a;
    a += 1.0;
  }
  const double r = 1.0 / (a * a);
  const double series =
      r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r * (1.0 / 132 - r * (691.0 / 32760))))));
  return std::log(a) - 0.5 / a - series - num / den;
}

// With P(a, x) the regularised lower incomplete gamma function and p(x; a) the density, the gradient is
// -(dP/da) / p. Below the mode, from the series P = e^-x sum_n x^(a+n) / Gamma(a+n+1):
//   -(dP/da) / p = -x sum_n t_n (log x - psi(a+n+1)),  t_0 = 1/a, t_n = t_(n-1) x / (a+n),
// whose terms all have one sign when x < a (no cancellation, and no Gamma function to overflow).
// `tol` is the relative size of the last term kept (the result's dtype's precision).
double grad_series(double a, double x, double tol) {
  const double log_x = std::log(x);
  double t = 1.0 / a, psi = digamma_pos(a + 1.0);
  double sum = t * (log_x - psi);
  for (int n = 1; n < 1000000; ++n) {
    const double inv = 1.0 / (a + n);
    t *= x * inv;
    psi += inv;
    const double term = t * (log_x - psi);
    sum += term;
    if (std::fabs(term) <= tol * std::fabs(sum) && a + n > x) break;
  }
  return -x * sum;
}

// Above the mode, from Q = 1 - P = Gamma(a, x) / Gamma(a) with Gamma(a, x) = e^-x x^a / K and the
// continued fraction K = b_0 + a_1 / (b_1 + a_2 / (b_2 + ...)), b_n = x + 2n + 1 - a, a_n = -n (n - a):
//   dQ/da / p = (x / K) (log x - psi(a) - K' / K),  K' = dK/da,
// with K and K' from the three-term recurrences of the convergents' numerators and denominators
// (differentiated term by term), rescaled as they grow.
double grad_fraction(double a, double x, double tol) {
  double A_prev = 1.0, B_prev = 0.0, dA_prev = 0.0, dB_prev = 0.0;
  double A = x + 1.0 - a, B = 1.0, dA = -1.0, dB = 0.0;
  double K = A, dK = dA;
  for (int n = 1; n < 1000000; ++n) {
    const double an = -n * (n - a), dan = n, bn = x + 2.0 * n + 1.0 - a, dbn = -1.0;
    const double A_next = bn * A + an * A_prev, B_next = bn * B + an * B_prev;
    const double dA_next = dbn * A + bn * dA + dan * A_prev + an * dA_prev;
    const double dB_next = dbn * B + bn * dB + dan * B_prev + an * dB_prev;
    A_prev = A, B_prev = B, dA_prev = dA, dB_prev = dB;
    A = A_next, B = B_next, dA = dA_next, dB = dB_next;
    // The convergents are ratios, unchanged when all four pairs are scaled alike: rescale only when B
    // grows large, so the recurrence's chain carries no division.
    if (std::fabs(B) > 1e100) {
      const double scale = 1.0 / B;
      A *= scale, B = 1.0, dA *= scale, dB *= scale;
      A_prev *= scale, B_prev *= scale, dA_prev *= scale, dB_prev *= scale;
    }
    if (B == 0.0) continue;
    const double inv_B = 1.0 / B;
    const double K_new = A * inv_B, dK_new = (dA - K_new * dB) * inv_B;
    const bool done = std::fabs(K_new - K) <= tol * std::fabs(K_new) && std::fabs(dK_new - dK) <= tol * std::fabs(dK_new);
    K = K_new, dK = dK_new;
    if (done) break;
  }
  return (x / K) * (std::log(x) - digamma_pos(a) - dK / K);
}

// For large a, from Temme's uniform expansion Q(a, x) = erfc(eta sqrt(a/2)) / 2 + R, with
// R ~ exp(-a eta^2 / 2) / sqrt(2 pi a) * C0(eta) (DLMF 8.12), lambda = x / a, delta = lambda - 1,
// eta = sign(delta) sqrt(2 (delta - log(1 + delta))) and C0 = 1 / delta - 1 / eta. Holding Q fixed,
//   d eta / da = -(eta g / 2 + C0 / (2a)) / (a g - C0'),  g = 1 + eta C0 = eta / delta,
//   dx/da = lambda + a lambda g d eta / da      (x = a lambda(eta), d lambda / d eta = lambda g).
// The neglected terms are O(a^-2) relative; near eta = 0, C0 and C0' come from their Taylor series.
double grad_asymptotic(double a, double x) {
  const double delta = (x - a) / a, lambda = x / a;
  const double eta = std::copysign(std::sqrt(2.0 * (delta - std::log1p(delta))), delta);
  double c0, dc0, g;
  if (std::fabs(eta) < 1e-3) {
    c0 = -1.0 / 3 + eta * (1.0 / 12 - eta * (2.0 / 135));
    dc0 = 1.0 / 12 - eta * (4.0 / 135);
    g = 1.0 + eta * c0;
  } else {
    g = eta / delta;
    c0 = 1.0 / delta - 1.0 / eta;
    dc0 = -lambda * g / (delta * delta) + 1.0 / (eta * eta);
  }
  const double deta_da = -(0.5 * eta * g + c0 / (2.0 * a)) / (a * g - dc0);
  return lambda + a * lambda * g * deta_da;
}

// Above this, the expansion is used (the series and the fraction need O(sqrt(a)) terms).
constexpr double kAsymptoticAlpha = 1e3;

double standard_gamma_grad_one(double a, double x, double tol) {
  // PyTorch's conventions at the edges: NaN unless alpha and the sample are positive and finite,
  // except a zero sample (the limit, 0).
  if (!(a > 0.0) || std::isinf(a) || std::isnan(x) || std::isinf(x)) return std::numeric_limits<double>::quiet_NaN();
  if (x <= 0.0) return 0.0;
  if (a > kAsymptoticAlpha) return grad_asymptotic(a, x);
  return x < a + 1.0 ? grad_series(a, x, tol) : grad_fraction(a, x, tol);
}

// Series / fraction tolerances: a float32 result needs ~1e-8, a float64 one all the digits.
template <class T>
constexpr double grad_tolerance() { return sizeof(T) > 4 ? 1e-15 : 1e-9; }

double standard_gamma_grad_method(double a, double x, const std::string& method) {
  if (method == "auto") return standard_gamma_grad_one(a, x, grad_tolerance<double>());
  if (!(a > 0.0 && x > 0.0 && std::isfinite(a) && std::isfinite(x))) throw std::invalid_argument("bad alpha or sample");
  if (method == "exact") return x < a + 1.0 ? grad_series(a, x, 1e-15) : grad_fraction(a, x, 1e-15);
  if (method == "float32") return standard_gamma_grad_one(a, x, grad_tolerance<float>());
  if (method == "asymptotic") return grad_asymptotic(a, x);
  throw std::invalid_argument("unknown method " + method);
}

// The same series and fraction over kLanes elements at once, so the compiler vectorises the terms
// across elements: all lanes run until the slowest has converged, which costs less than the scalar
// loops' mispredicted exits. Each lane keeps its result from the step its own test first passed, as
// the scalar loops do: the group stops when every lane has passed once, not when all pass on the same
// step (a converged fraction's relative change flickers around 1e-15, so lanes passing at different
// steps kept whole groups running to the iteration cap: 24-51 s for 100k mixed alphas).
constexpr int kLanes = 8;

FLAMBEAU_CLONES void series_lanes(const double* a, const double* x, double* result, double tol) {
  double log_x[kLanes], t[kLanes], psi[kLanes], sum[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    log_x[l] = std::log(x[l]);
    psi[l] = digamma_pos(a[l] + 1.0);
    t[l] = 1.0 / a[l];
    sum[l] = t[l] * (log_x[l] - psi[l]);
  }
  int live[kLanes];  // 1 until the lane's own test first passes: its sum is then kept as it was
  for (int l = 0; l < kLanes; ++l) live[l] = 1;
  for (int n = 1; n < 1000000; ++n) {
    int busy = 0;
#pragma omp simd reduction(| : busy)
    for (int l = 0; l < kLanes; ++l) {
      const double inv = 1.0 / (a[l] + n);
      t[l] *= x[l] * inv;
      psi[l] += inv;
      const double term = t[l] * (log_x[l] - psi[l]);
      const double next = sum[l] + term;
      sum[l] = live[l] ? next : sum[l];
      live[l] &= (std::fabs(term) > tol * std::fabs(next)) | (a[l] + n <= x[l]);
      busy |= live[l];
    }
    if (!busy) break;
  }
  for (int l = 0; l < kLanes; ++l) result[l] = -x[l] * sum[l];
}

FLAMBEAU_CLONES void fraction_lanes(const double* a, const double* x, double* result, double tol) {
  double Ap[kLanes], Bp[kLanes], dAp[kLanes], dBp[kLanes], A[kLanes], B[kLanes], dA[kLanes], dB[kLanes];
  double K[kLanes], dK[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    Ap[l] = 1.0, Bp[l] = 0.0, dAp[l] = 0.0, dBp[l] = 0.0;
    A[l] = x[l] + 1.0 - a[l], B[l] = 1.0, dA[l] = -1.0, dB[l] = 0.0;
    K[l] = A[l], dK[l] = dA[l];
  }
  int live[kLanes];  // as in series_lanes: a lane's K and K' stay as its own test first passed them
  for (int l = 0; l < kLanes; ++l) live[l] = 1;
  for (int n = 1; n < 1000000; ++n) {
    int busy = 0;
#pragma omp simd reduction(| : busy)
    for (int l = 0; l < kLanes; ++l) {
      const double an = -n * (n - a[l]), bn = x[l] + 2.0 * n + 1.0 - a[l];
      const double A_next = bn * A[l] + an * Ap[l], B_next = bn * B[l] + an * Bp[l];
      const double dA_next = -A[l] + bn * dA[l] + n * Ap[l] + an * dAp[l];
      const double dB_next = -B[l] + bn * dB[l] + n * Bp[l] + an * dBp[l];
      Ap[l] = A[l], Bp[l] = B[l], dAp[l] = dA[l], dBp[l] = dB[l];
      A[l] = A_next, B[l] = B_next, dA[l] = dA_next, dB[l] = dB_next;
      const double inv_B = 1.0 / B[l];
      const double K_new = A[l] * inv_B, dK_new = (dA[l] - K_new * dB[l]) * inv_B;
      const int open = (std::fabs(K_new - K[l]) > tol * std::fabs(K_new)) |
                       (std::fabs(dK_new - dK[l]) > tol * std::fabs(dK_new));
      K[l] = live[l] ? K_new : K[l];
      dK[l] = live[l] ? dK_new : dK[l];
      live[l] &= open;
      busy |= live[l];
    }
    if (!busy) break;
    if (n % 4 == 0) {  // rescale (B to 1) off the recurrence's chain; four steps cannot overflow
#pragma omp simd
      for (int l = 0; l < kLanes; ++l) {
        const double s = 1.0 / B[l];
        A[l] *= s, B[l] = 1.0, dA[l] *= s, dB[l] *= s, Ap[l] *= s, Bp[l] *= s, dAp[l] *= s, dBp[l] *= s;
      }
    }
  }
  for (int l = 0; l < kLanes; ++l) result[l] = (x[l] / K[l]) * (std::log(x[l]) - digamma_pos(a[l]) - dK[l] / K[l]);
}

// Runs `lanes` over the elements listed in idx (count of them), kLanes at a time, padding the last group
// with copies of its first element.
template <class T, class Lanes>
void run_lanes(Lanes lanes, const T* alpha, const T* sample, T* out, const index_t* idx, int count, double tol) {
  for (int g = 0; g < count; g += kLanes) {
    double a[kLanes], x[kLanes], r[kLanes];
    const int m = std::min(kLanes, count - g);
    for (int l = 0; l < kLanes; ++l) {
      const index_t i = idx[g + (l < m ? l : 0)];
      a[l] = static_cast<double>(alpha[i]);
      x[l] = static_cast<double>(sample[i]);
    }
    lanes(a, x, r, tol);
    for (int l = 0; l < m; ++l) out[idx[g + l]] = static_cast<T>(r[l]);
  }
}

template <class T>
void gamma_grad_range(const T* alpha, const T* sample, T* out, index_t begin, index_t end) {
  constexpr int kPiece = 256;
  index_t below[kPiece], above[kPiece];
  const double tol = grad_tolerance<T>();
  for (index_t base = begin; base < end; base += kPiece) {
    const index_t stop = std::min(end, base + kPiece);
    int n_below = 0, n_above = 0;
    for (index_t i = base; i < stop; ++i) {
      const double a = static_cast<double>(alpha[i]), x = static_cast<double>(sample[i]);
      if (a > 0.0 && a <= kAsymptoticAlpha && x > 0.0 && std::isfinite(x)) {
        if (x < a + 1.0)
          below[n_below++] = i;
        else
          above[n_above++] = i;
      } else {
        out[i] = static_cast<T>(standard_gamma_grad_one(a, x, tol));  // edges and large alphas
      }
    }
    run_lanes<T>(series_lanes, alpha, sample, out, below, n_below, tol);
    run_lanes<T>(fraction_lanes, alpha, sample, out, above, n_above, tol);
  }
}

// -- binomial draws ---------------------------------------------------------------------------------

// Inversion: walk the CDF from k = 0 with the pmf ratio f(k+1) / f(k) = (n - k) p / ((k + 1) q).
// Used for n p < 10 (after p <= 1/2), where ~n p + 1 steps are expected.
double binomial_inversion(double n, double p, ElementStream& s) {
  const double q = 1.0 - p, r = p / q;
  const double f0 = std::exp(n * std::log1p(-p));
  for (;;) {
    double u = s.uniform(), f = f0;
    for (double k = 0.0; k <= n; k += 1.0) {
      if (u < f) return k;
      u -= f;
      f *= r * (n - k) / (k + 1.0);
    }
    // u was left over by rounding in the far tail: draw again
  }
}

// BTRS (Hormann 1993, "The generation of binomial random variates"), for n p >= 10 with p <= 1/2:
// transformed rejection with a squeeze, the final test against the exact log pmf ratio.
double binomial_btrs(double n, double p, ElementStream& s) {
  const double q = 1.0 - p, spq = std::sqrt(n * p * q);
  const double b = 1.15 + 2.53 * spq, a = -0.0873 + 0.0248 * b + 0.01 * p, c = n * p + 0.5;
  const double v_r = 0.92 - 4.2 / b, alpha = (2.83 + 5.1 / b) * spq, log_r = std::log(p / q);
  const double m = std::floor((n + 1.0) * p);
  const double log_fm = -std::lgamma(m + 1.0) - std::lgamma(n - m + 1.0);
  for (;;) {
    const double u = s.uniform() - 0.5, v = s.uniform();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2.0 * a / us + b) * u + c);
    if (k < 0.0 || k > n) continue;
    if (us >= 0.07 && v <= v_r) return k;
    const double log_v = std::log(v * alpha / (a / (us * us) + b));
    if (log_v <= -std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) - log_fm + (k - m) * log_r) return k;
  }
}

double binomial_one(double n, double p, ElementStream& s) {
  n = std::floor(n);
  if (n == 0.0 || p == 0.0) return 0.0;
  if (p == 1.0) return n;
  if (p > 0.5) return n - binomial_one(n, 1.0 - p, s);
  return n * p < 10.0 ? binomial_inversion(n, p, s) : binomial_btrs(n, p, s);
}

template <class T>
void binomial_range(const double* count, const double* prob, T* out, std::uint64_t key, std::uint64_t offset,
                    index_t begin, index_t end) {
  for (index_t i = begin; i < end; ++i) {
    ElementStream s(key, offset + static_cast<std::uint64_t>(i));
    out[i] = static_cast<T>(binomial_one(count[i], prob[i], s));
  }
}

// -- Poisson draws ----------------------------------------------------------------------------------

// Below rate 10: Knuth's multiplication of uniforms (the count of factors before their product drops
// below e^-rate; ~rate + 1 uniforms). From 10: PTRS, Hormann's transformed rejection with squeeze
// ("The transformed rejection method for generating Poisson random variables", 1993), with the final
// test against the exact log pmf. Rates above _POISSON_LAM_MAX give -2^63 (PyTorch's int64 overflow).
constexpr double kPoissonRateMax = 9.223372006484771e18;

double poisson_one(double rate, ElementStream& s) {
  if (rate == 0.0) return 0.0;
  if (rate > kPoissonRateMax) return -9223372036854775808.0;
  if (rate < 10.0) {
    const double limit = std::exp(-rate);
    double product = s.uniform(), k = 0.0;
    while (product > limit) {
      product *= s.uniform();
      k += 1.0;
    }
    return k;
  }
  const double slam = std::sqrt(rate), log_rate = std::log(rate);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), v_r = 0.9277 - 3.6224 / (b - 2.0);
  for (;;) {
    const double u = s.uniform() - 0.5, v = s.uniform();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2.0 * a / us + b) * u + rate + 0.43);
    if (us >= 0.07 && v <= v_r) return k;
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <= -rate + k * log_rate - std::lgamma(k + 1.0))
      return k;
  }
}

template <class T>
void poisson_range(const double* rate, T* out, std::uint64_t key, std::uint64_t offset, index_t begin, index_t end) {
  for (index_t i = begin; i < end; ++i) {
    ElementStream s(key, offset + static_cast<std::uint64_t>(i));
    out[i] = static_cast<T>(poisson_one(rate[i], s));
  }
}

// -- bindings ---------------------------------------------------------------------------------------

template <class T>
T* checked_data(const py::array& a, const char* name, bool writeable, index_t n) {
  if (dtype_of(a) != dtype_tag<T>()) throw std::invalid_argument(std::string(name) + " has the wrong dtype");
  if (!c_contiguous(a)) throw std::invalid_argument(std::string(name) + " must be C-contiguous");
  if (a.size() != n) throw std::invalid_argument(std::string(name) + " has the wrong number of elements");
  check_in_bounds(a, name, writeable);
  return static_cast<T*>(const_cast<void*>(a.data()));
}

template <class Fn>
void run_elements(index_t n, Fn&& fn) {
  py::gil_scoped_release release;
  if (n < kThreadedElements)
    fn(0, n);
  else
    parallel_chunks(n, kChunk, fn, n * 64);  // each element costs as much as ~64 copied ones
}

template <class T>
void gamma_typed(const py::array& alpha, const py::array& out, std::uint64_t key, std::uint64_t offset) {
  const index_t n = out.size();
  const T* a = checked_data<T>(alpha, "alpha", false, n);
  T* o = checked_data<T>(out, "out", true, n);
  run_elements(n, [&](index_t b, index_t e) { gamma_range<T>(a, o, key, offset, b, e); });
}

void dist_standard_gamma(const py::array& alpha, const py::array& out, std::uint64_t key, std::uint64_t offset) {
  if (dtype_of(out) == DType::f32)
    gamma_typed<float>(alpha, out, key, offset);
  else if (dtype_of(out) == DType::f64)
    gamma_typed<double>(alpha, out, key, offset);
  else
    throw std::invalid_argument(std::string("dist_standard_gamma: unsupported dtype ") + dtype_name(dtype_of(out)));
}

template <class T>
void gamma_grad_typed(const py::array& alpha, const py::array& sample, const py::array& out) {
  const index_t n = out.size();
  const T* a = checked_data<T>(alpha, "alpha", false, n);
  const T* x = checked_data<T>(sample, "sample", false, n);
  T* o = checked_data<T>(out, "out", true, n);
  run_elements(n, [&](index_t b, index_t e) { gamma_grad_range<T>(a, x, o, b, e); });
}

void dist_standard_gamma_grad(const py::array& alpha, const py::array& sample, const py::array& out) {
  if (dtype_of(out) == DType::f32)
    gamma_grad_typed<float>(alpha, sample, out);
  else if (dtype_of(out) == DType::f64)
    gamma_grad_typed<double>(alpha, sample, out);
  else
    throw std::invalid_argument(std::string("dist_standard_gamma_grad: unsupported dtype ") +
                                dtype_name(dtype_of(out)));
}

template <class T>
void binomial_typed(const py::array& count, const py::array& prob, const py::array& out, std::uint64_t key,
                    std::uint64_t offset) {
  const index_t n = out.size();
  const double* c = checked_data<double>(count, "count", false, n);
  const double* p = checked_data<double>(prob, "prob", false, n);
  T* o = checked_data<T>(out, "out", true, n);
  // Values are checked before any draw (the Python side checks them too): a count beyond 2^53 or a
  // probability outside [0, 1] would make the samplers loop or read garbage.
  for (index_t i = 0; i < n; ++i) {
    if (!(c[i] >= 0.0 && c[i] <= 9007199254740992.0)) throw std::invalid_argument("dist_binomial: bad count");
    if (!(p[i] >= 0.0 && p[i] <= 1.0)) throw std::invalid_argument("dist_binomial: bad prob");
  }
  run_elements(n, [&](index_t b, index_t e) { binomial_range<T>(c, p, o, key, offset, b, e); });
}

void dist_binomial(const py::array& count, const py::array& prob, const py::array& out, std::uint64_t key,
                   std::uint64_t offset) {
  if (dtype_of(out) == DType::f32)
    binomial_typed<float>(count, prob, out, key, offset);
  else if (dtype_of(out) == DType::f64)
    binomial_typed<double>(count, prob, out, key, offset);
  else
    throw std::invalid_argument(std::string("dist_binomial: unsupported dtype ") + dtype_name(dtype_of(out)));
}

template <class T>
void poisson_typed(const py::array& rate, const py::array& out, std::uint64_t key, std::uint64_t offset) {
  const index_t n = out.size();
  const double* r = checked_data<double>(rate, "rate", false, n);
  T* o = checked_data<T>(out, "out", true, n);
  for (index_t i = 0; i < n; ++i)
    if (!(r[i] >= 0.0)) throw std::invalid_argument("dist_poisson: bad rate");  // NaN too
  run_elements(n, [&](index_t b, index_t e) { poisson_range<T>(r, o, key, offset, b, e); });
}

void dist_poisson(const py::array& rate, const py::array& out, std::uint64_t key, std::uint64_t offset) {
  if (dtype_of(out) == DType::f32)
    poisson_typed<float>(rate, out, key, offset);
  else if (dtype_of(out) == DType::f64)
    poisson_typed<double>(rate, out, key, offset);
  else
    throw std::invalid_argument(std::string("dist_poisson: unsupported dtype ") + dtype_name(dtype_of(out)));
}

void register_dist_samplers(py::module_& m) {
  m.def("dist_standard_gamma", &dist_standard_gamma, py::arg("alpha"), py::arg("out"), py::arg("key"),
        py::arg("offset"),
        "Gamma(alpha, 1) draws into out (C-contiguous float32/float64, alpha of out's dtype and size); "
        "element i uses Philox block offset + i under key");
  m.def("dist_standard_gamma_grad", &dist_standard_gamma_grad, py::arg("alpha"), py::arg("sample"),
        py::arg("out"), "d sample / d alpha of Gamma(alpha, 1) draws at a fixed CDF value, into out");
  m.def("dist_standard_gamma_grad_scalar", &standard_gamma_grad_method, py::arg("alpha"), py::arg("sample"),
        py::arg("method") = "auto",
        "d sample / d alpha for one float64 (alpha, sample) pair by method 'auto', 'exact' (the series or the "
        "continued fraction) or 'asymptotic' (tests)");
  m.def("dist_poisson", &dist_poisson, py::arg("rate"), py::arg("out"), py::arg("key"), py::arg("offset"),
        "Poisson(rate) draws into out (float32/float64); rate float64 of out's size, non-negative");
  m.def("dist_binomial", &dist_binomial, py::arg("count"), py::arg("prob"), py::arg("out"), py::arg("key"),
        py::arg("offset"),
        "Binomial(floor(count), prob) draws into out (float32/float64); count and prob float64, out's size");
}

}  // namespace

FLAMBEAU_REGISTER(register_dist_samplers);

}  // namespace flambeau
