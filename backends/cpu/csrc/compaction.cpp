// nonzero and masked_select: compactions, where each output row comes from a selected input element.
//
// Both run in two threaded passes over a C-contiguous input: the first counts the selected elements
// of each thread's part, a prefix sum over those counts gives each part its place in the output, and
// the second pass writes there, without a branch per element (every element is written, and the
// write position only advances past a selected one).
//
// The input may be changed by another Python thread between the two passes (the GIL is released), so
// the counts of the first pass are never trusted as bounds: each part writes at most as many rows as
// it counted (any further write goes to a scratch row), and fills the rows it counted but did not
// find with zeros. The output is then inconsistent, as PyTorch's is for a racing input, but every
// write stays inside it.
#include "common.h"

namespace flambeau {
namespace {

// Whether an element is nonzero, read as unsigned words: `mask` clears the sign bit of floats (so
// -0.0 is zero and NaN is not) and keeps every bit of integers. complex64 is one 8-byte word with
// both sign bits cleared; complex128 is two words (Words = 2).
template <class U, int Words>
struct Element {
  U w[Words];
};

template <class U, int Words>
inline bool nonzero_at(const Element<U, Words>& e, U mask) {
  U any = 0;
  for (int k = 0; k < Words; ++k) any |= e.w[k] & mask;
  return any != 0;
}

// How the elements of a dtype are read: word size, words per element, and the mask.
struct Reading {
  int word_bytes;
  int words;
  std::uint64_t mask;
};

Reading reading_of(const py::array& a) {
  const auto dt = a.dtype();
  const char kind = dt.kind();
  const int size = static_cast<int>(dt.itemsize());
  const bool floating = kind == 'f' || kind == 'c' || dt.attr("name").cast<std::string>() == "bfloat16";
  if (kind == 'c') {
    if (size == 8) return {8, 1, 0x7FFFFFFF7FFFFFFFull};
    if (size == 16) return {8, 2, 0x7FFFFFFFFFFFFFFFull};
  } else if (size == 1 || size == 2 || size == 4 || size == 8) {
    const std::uint64_t all = size == 8 ? ~std::uint64_t(0) : ((std::uint64_t(1) << (8 * size)) - 1);
    const std::uint64_t sign = std::uint64_t(1) << (8 * size - 1);
    return {size, 1, floating ? (all & ~sign) : all};
  }
  throw py::type_error("nonzero: unsupported dtype " + py::str(dt).cast<std::string>());
}

// Runs fn(p, begin, end) for each part p of the `parts` equal parts of [0, n), one part per thread.
// The parts are fixed by `parts` alone (not by the team OpenMP hands out), so both passes of a
// compaction see the same parts.
template <class Fn>
void for_each_part(index_t n, int parts, Fn&& fn) {
  if (parts <= 1) {
    fn(0, 0, n);
    return;
  }
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) {
    index_t begin, end;
    split_range(n, p, parts, begin, end);
    fn(p, begin, end);
  }
}

// The selected count of each part.
template <class Pred>
std::vector<index_t> count_parts(index_t n, int parts, Pred&& selected) {
  std::vector<index_t> counts(parts, 0);
  for_each_part(n, parts, [&](int p, index_t begin, index_t end) {
    index_t c = 0;
    for (index_t i = begin; i < end; ++i) c += selected(i) ? 1 : 0;
    counts[p] = c;
  });
  return counts;
}

// Where each part's rows start in the output; the last entry is the total.
std::vector<index_t> starts_of(const std::vector<index_t>& counts) {
  std::vector<index_t> firsts(counts.size() + 1, 0);
  for (std::size_t p = 0; p < counts.size(); ++p) firsts[p + 1] = firsts[p] + counts[p];
  return firsts;
}

int parts_for(index_t n) { return threads_for(n); }

// -- nonzero ------------------------------------------------------------------------------------

// Writes the coordinates of the nonzero elements of part `tid` into rows [first, first + cap) of
// `out` (row-major, ndim columns); shape is the input's.
template <class U, int Words>
void write_coords(const Element<U, Words>* x, U mask, const std::vector<index_t>& shape, index_t begin,
                  index_t end, std::int64_t* out, index_t cap) {
  const int ndim = static_cast<int>(shape.size());
  std::vector<std::int64_t> coord(ndim, 0), scratch(ndim, 0);
  index_t rest = begin;  // coordinates of `begin`, last dim fastest
  for (int d = ndim - 1; d >= 0; --d) {
    coord[d] = shape[d] ? rest % shape[d] : 0;
    rest = shape[d] ? rest / shape[d] : 0;
  }
  index_t pos = 0;
  const index_t last = shape[ndim - 1];
  for (index_t i = begin; i < end; ++i) {
    std::int64_t* row = pos < cap ? out + pos * ndim : scratch.data();
    for (int d = 0; d < ndim; ++d) row[d] = coord[d];
    pos += nonzero_at(x[i], mask) ? 1 : 0;
    if (++coord[ndim - 1] == last) {  // carry into the slower dims
      coord[ndim - 1] = 0;
      for (int d = ndim - 2; d >= 0 && ++coord[d] == shape[d]; --d) coord[d] = 0;
    }
  }
  if (pos < cap) std::memset(out + pos * ndim, 0, sizeof(std::int64_t) * ndim * (cap - pos));
}

// Same for a 1-d input: the coordinate is the position.
template <class U, int Words>
void write_positions(const Element<U, Words>* x, U mask, index_t begin, index_t end, std::int64_t* out,
                     index_t cap) {
  std::int64_t scratch = 0;
  index_t pos = 0;
  for (index_t i = begin; i < end; ++i) {
    std::int64_t* slot = pos < cap ? out + pos : &scratch;
    *slot = i;
    pos += nonzero_at(x[i], mask) ? 1 : 0;
  }
  if (pos < cap) std::memset(out + pos, 0, sizeof(std::int64_t) * (cap - pos));
}

template <class U, int Words>
py::array_t<std::int64_t> nonzero_typed(const py::array& input, std::uint64_t mask64) {
  const auto* x = static_cast<const Element<U, Words>*>(input.data());
  const U mask = static_cast<U>(mask64);
  const index_t n = input.size();
  std::vector<index_t> shape(input.shape(), input.shape() + input.ndim());
  const int parts = parts_for(n);
  std::vector<index_t> counts;
  {
    py::gil_scoped_release nogil;
    counts = count_parts(n, parts, [&](index_t i) { return nonzero_at(x[i], mask); });
  }
  const std::vector<index_t> firsts = starts_of(counts);
  const index_t ndim = input.ndim();
  py::array_t<std::int64_t> out({firsts[parts], ndim});
  std::int64_t* o = out.mutable_data();
  {
    py::gil_scoped_release nogil;
    for_each_part(n, parts, [&](int tid, index_t begin, index_t end) {
      if (ndim == 1) write_positions(x, mask, begin, end, o + firsts[tid], counts[tid]);
      else write_coords(x, mask, shape, begin, end, o + firsts[tid] * ndim, counts[tid]);
    });
  }
  return out;
}

// The (count, ndim) int64 coordinates of the nonzero elements of a C-contiguous array of at least
// one dim, in row-major order; None when the layout or dtype is left to numpy.
py::object nonzero(const py::array& input) {
  if (input.ndim() == 0 || !c_contiguous(input) || !is_aligned(input)) return py::none();
  check_in_bounds(input, "input", false);
  const Reading r = reading_of(input);
  switch (r.word_bytes * 4 + r.words) {
    case 1 * 4 + 1: return nonzero_typed<std::uint8_t, 1>(input, r.mask);
    case 2 * 4 + 1: return nonzero_typed<std::uint16_t, 1>(input, r.mask);
    case 4 * 4 + 1: return nonzero_typed<std::uint32_t, 1>(input, r.mask);
    case 8 * 4 + 1: return nonzero_typed<std::uint64_t, 1>(input, r.mask);
    case 8 * 4 + 2: return nonzero_typed<std::uint64_t, 2>(input, r.mask);
    default: return py::none();
  }
}

// -- masked_select ------------------------------------------------------------------------------

template <std::size_t Size>
struct Bytes {
  unsigned char b[Size];
};

template <std::size_t Size>
py::object select_typed(const py::array& input, const py::array& mask, py::object out_arg) {
  using E = Bytes<Size>;
  const auto* x = static_cast<const E*>(input.data());
  const auto* m = static_cast<const std::uint8_t*>(mask.data());
  const index_t n = input.size();
  const int parts = parts_for(n);
  std::vector<index_t> counts;
  {
    py::gil_scoped_release nogil;
    counts = count_parts(n, parts, [&](index_t i) { return m[i] != 0; });
  }
  const std::vector<index_t> firsts = starts_of(counts);
  py::array out;
  if (out_arg.is_none()) {
    out = py::array(input.dtype(), std::vector<py::ssize_t>{static_cast<py::ssize_t>(firsts[parts])});
  } else {
    out = out_arg.cast<py::array>();
    if (out.size() != firsts[parts]) return py::none();  // the mask changed since the output was sized
  }
  E* o = static_cast<E*>(out.mutable_data());
  {
    py::gil_scoped_release nogil;
    for_each_part(n, parts, [&](int tid, index_t begin, index_t end) {
      E* dst = o + firsts[tid];
      const index_t cap = counts[tid];
      E scratch;
      index_t pos = 0;
      for (index_t i = begin; i < end; ++i) {
        *(pos < cap ? dst + pos : &scratch) = x[i];
        pos += m[i] != 0 ? 1 : 0;
      }
      if (pos < cap) std::memset(dst + pos, 0, sizeof(E) * (cap - pos));
    });
  }
  return out;
}

// The elements of `input` where the bool `mask` (same shape, both C-contiguous) is true, in
// row-major order, as a new 1-d array or into `out` (1-d, input's dtype, of the selected count);
// None, touching nothing, when the layout or dtype is left to numpy or `out` has another size.
py::object masked_select(const py::array& input, const py::array& mask, py::object out) {
  if (!out.is_none()) {
    const auto o = out.cast<py::array>();
    if (o.ndim() != 1 || !c_contiguous(o) || !is_aligned(o) || !o.dtype().equal(input.dtype()) ||
        may_overlap(o, input) || may_overlap(o, mask))
      return py::none();
    check_in_bounds(o, "out", true);
  }
  if (mask.dtype().kind() != 'b' || input.ndim() != mask.ndim() ||
      !std::equal(input.shape(), input.shape() + input.ndim(), mask.shape()) || !c_contiguous(input) ||
      !c_contiguous(mask) || !is_aligned(input))
    return py::none();
  check_in_bounds(input, "input", false);
  check_in_bounds(mask, "mask", false);
  switch (input.dtype().itemsize()) {
    case 1: return select_typed<1>(input, mask, out);
    case 2: return select_typed<2>(input, mask, out);
    case 4: return select_typed<4>(input, mask, out);
    case 8: return select_typed<8>(input, mask, out);
    case 16: return select_typed<16>(input, mask, out);
    default: return py::none();
  }
}

void register_compaction(py::module_& m) {
  m.def("nonzero", &nonzero, py::arg("input"),
        "The (count, ndim) int64 coordinates of the nonzero elements of a C-contiguous array of at least "
        "one dim (-0.0 is zero, NaN is not); None for any other layout or dtype.");
  m.def("masked_select", &masked_select, py::arg("input"), py::arg("mask"), py::arg("out") = py::none(),
        "input[mask] for a bool mask of input's shape, both C-contiguous, as a new array or into out; "
        "None otherwise.");
}

}  // namespace

FLAMBEAU_REGISTER(register_compaction);

}  // namespace flambeau
