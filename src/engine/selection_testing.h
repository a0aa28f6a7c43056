// Test helpers shared by the engine's tests: random NumPy-style selections and a naive
// reference that resolves them with plain loops, independently of the indexer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "zarrkit/ndbuffer.h"
#include "zarrkit/selection.h"

namespace zarrkit::testing {

// The indices one axis selects, and whether an integer selected it (dropping the axis).
struct RefAxis {
  std::vector<std::uint64_t> indices;
  bool drops = false;
};

inline std::int64_t ref_bound(std::optional<std::int64_t> v, std::int64_t n, std::int64_t dflt) {
  if (!v) return dflt;
  std::int64_t b = *v;
  if (b < 0) b += n;
  if (b < 0) b = 0;
  if (b > n) b = n;
  return b;
}

// Resolves a valid selection by plain loops.
inline std::vector<RefAxis> reference_axes(const Selection& selection, const Shape& shape) {
  std::size_t explicit_axes = 0;
  for (const auto& s : selection) explicit_axes += !std::holds_alternative<Ellipsis>(s);
  Selection full;
  for (const auto& s : selection) {
    if (std::holds_alternative<Ellipsis>(s)) {
      for (std::size_t k = explicit_axes; k < shape.size(); ++k) full.push_back(Slice::all());
    } else {
      full.push_back(s);
    }
  }
  while (full.size() < shape.size()) full.push_back(Slice::all());

  std::vector<RefAxis> axes;
  for (std::size_t a = 0; a < shape.size(); ++a) {
    const auto n = static_cast<std::int64_t>(shape[a]);
    RefAxis ra;
    if (const auto* i = std::get_if<std::int64_t>(&full[a])) {
      ra.indices.push_back(static_cast<std::uint64_t>(*i < 0 ? *i + n : *i));
      ra.drops = true;
    } else if (const auto* list = std::get_if<IndexArray>(&full[a])) {
      for (std::int64_t i : list->indices) ra.indices.push_back(static_cast<std::uint64_t>(i < 0 ? i + n : i));
    } else if (const auto* mask = std::get_if<BoolArray>(&full[a])) {
      for (std::size_t i = 0; i < mask->mask.size(); ++i) {
        if (mask->mask[i]) ra.indices.push_back(i);
      }
    } else if (const auto& s = std::get<Slice>(full[a]); s.step > 0) {
      for (std::int64_t i = ref_bound(s.start, n, 0); i < ref_bound(s.stop, n, n); i += s.step) {
        ra.indices.push_back(static_cast<std::uint64_t>(i));
      }
    } else {
      // Python's slice.indices for a negative step: bounds clamp to [-1, n - 1].
      auto bound = [&](std::optional<std::int64_t> v, std::int64_t dflt) {
        if (!v) return dflt;
        std::int64_t b = *v < 0 ? *v + n : *v;
        return b < -1 ? -1 : (b > n - 1 ? n - 1 : b);
      };
      for (std::int64_t i = bound(s.start, n - 1); i > bound(s.stop, -1); i += s.step) {
        ra.indices.push_back(static_cast<std::uint64_t>(i));
      }
    }
    axes.push_back(ra);
  }
  return axes;
}

// Row-major linear index of `coords` in `shape`.
inline std::uint64_t linear_index(const std::vector<std::uint64_t>& coords, const Shape& shape) {
  std::uint64_t r = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) r = r * shape[i] + coords[i];
  return r;
}

// Calls f(coords) for every coordinate of `shape` in C order (once for a 0-d shape).
template <typename F>
void for_each_index(const Shape& shape, F&& f) {
  for (auto d : shape) {
    if (d == 0) return;
  }
  std::vector<std::uint64_t> idx(shape.size(), 0);
  for (;;) {
    f(idx);
    std::size_t a = shape.size();
    while (a-- > 0) {
      if (++idx[a] < shape[a]) break;
      idx[a] = 0;
    }
    if (a == static_cast<std::size_t>(-1)) return;
  }
}

// A random valid selection for `shape`: integers (some negative), slices with random and
// out-of-range bounds and steps -7..7, integer lists (repeats, any order, negative
// entries), boolean lists, sometimes an ellipsis, sometimes fewer entries.
inline Selection random_selection(std::mt19937_64& rng, const Shape& shape) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const auto ndim = static_cast<int>(shape.size());
  const int used = pick(0, ndim);
  // An ellipsis at `ellipsis_at` makes the entries after it address the last axes.
  const int ellipsis_at = pick(0, 3) == 0 ? pick(0, used) : -1;
  Selection sel;
  for (int k = 0; k < used; ++k) {
    if (k == ellipsis_at) sel.push_back(Ellipsis{});
    const int axis = ellipsis_at >= 0 && k >= ellipsis_at ? ndim - (used - k) : k;
    const auto n = static_cast<std::int64_t>(shape[static_cast<std::size_t>(axis)]);
    if (n > 0 && pick(0, 3) == 0) {
      std::int64_t i = pick(0, static_cast<int>(n) - 1);
      if (pick(0, 1)) i -= n;  // the same index, counted from the end
      sel.push_back(i);
      continue;
    }
    if (pick(0, 5) == 0) {
      IndexArray list;
      const int length = n > 0 ? pick(0, 6) : 0;
      for (int j = 0; j < length; ++j) {
        std::int64_t i = pick(0, static_cast<int>(n) - 1);
        if (pick(0, 2) == 0) i -= n;
        list.indices.push_back(i);
      }
      if (pick(0, 2) == 0) std::sort(list.indices.begin(), list.indices.end());
      sel.push_back(list);
      continue;
    }
    if (pick(0, 7) == 0) {
      BoolArray mask;
      for (std::int64_t j = 0; j < n; ++j) mask.mask.push_back(static_cast<std::uint8_t>(pick(0, 1)));
      sel.push_back(mask);
      continue;
    }
    Slice s;
    auto bound = [&]() -> std::optional<std::int64_t> {
      if (pick(0, 3) == 0) return std::nullopt;
      return pick(-static_cast<int>(n) - 3, static_cast<int>(n) + 3);
    };
    s.start = bound();
    s.stop = bound();
    s.step = pick(0, 2) == 0 ? pick(1, 7) : 1;
    if (pick(0, 3) == 0) s.step = -s.step;
    sel.push_back(s);
  }
  if (ellipsis_at == used) sel.push_back(Ellipsis{});
  return sel;
}

// "1, 2:5:1, ..." for failure messages (independent of the library's formatter).
inline std::string describe_selection(const Selection& sel) {
  std::string out;
  auto opt = [](std::optional<std::int64_t> v) { return v ? std::to_string(*v) : std::string(); };
  for (const auto& s : sel) {
    if (!out.empty()) out += ", ";
    if (const auto* i = std::get_if<std::int64_t>(&s)) {
      out += std::to_string(*i);
    } else if (const auto* sl = std::get_if<Slice>(&s)) {
      out += opt(sl->start) + ":" + opt(sl->stop) + ":" + std::to_string(sl->step);
    } else if (const auto* list = std::get_if<IndexArray>(&s)) {
      out += "[";
      for (auto i : list->indices) out += std::to_string(i) + " ";
      out += "]";
    } else if (const auto* mask = std::get_if<BoolArray>(&s)) {
      out += "mask[";
      for (auto b : mask->mask) out += b ? "1" : "0";
      out += "]";
    } else {
      out += "...";
    }
  }
  return out;
}

}  // namespace zarrkit::testing
