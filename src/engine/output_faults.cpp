#include "engine/output_faults.h"

#include <sys/mman.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "zarrkit/config.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

// Outputs smaller than this take their page faults as they come.
constexpr std::uint64_t kMinFaultedOutputBytes = std::uint64_t{64} << 20;
// The span a page fault of a large output fills at once (a transparent huge page on x86-64).
constexpr std::uintptr_t kSpan = std::uintptr_t{2} << 20;
constexpr std::uintptr_t kPage = 4096;
// How far past a span another thread is faulting a waiting thread looks for work.
constexpr std::size_t kSpansAhead = 8;

enum SpanState : std::uint8_t { kUntouched = 0, kFaulting = 1, kFaulted = 2 };

bool large_host_c_output(const NDView& out, std::size_t threads) {
  return out.kind == MemoryKind::kHost && out.is_c_contiguous() && threads >= 2 &&
         out.num_elements() * out.dtype.size() >= kMinFaultedOutputBytes;
}

// The parts of `split` as [first, end) positions along the output's axis, when each is one
// forward run of step 1 (a plain slice).
std::optional<std::vector<std::pair<std::uint64_t, std::uint64_t>>> plain_parts(const AxisSplit& split) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> parts;
  for (std::uint64_t k = 0; k < split.num_parts(); ++k) {
    const AxisChunkPart part = split.part(k);
    if (part.runs().size() != 1 || part.runs()[0].out_step != 1) return std::nullopt;
    const AxisRun& run = part.runs()[0];
    parts.emplace_back(run.out_start, run.out_start + run.count);
  }
  return parts;
}

}  // namespace

OutputFaults::OutputFaults(const NDView& out, std::size_t threads) {
  if (!large_host_c_output(out, threads)) return;
  begin_ = reinterpret_cast<std::uintptr_t>(out.data);
  end_ = begin_ + out.num_elements() * out.dtype.size();
  first_ = begin_ & ~(kSpan - 1);
  count_ = (end_ - first_ + kSpan - 1) / kSpan;
  state_ = std::make_unique<std::atomic<std::uint8_t>[]>(count_);
  for (std::size_t i = 0; i < count_; ++i) state_[i].store(kUntouched, std::memory_order_relaxed);
}

void OutputFaults::before_write(const std::byte* begin, const std::byte* end) {
  if (count_ == 0) return;
  const std::uintptr_t lo = std::max(reinterpret_cast<std::uintptr_t>(begin), begin_);
  const std::uintptr_t hi = std::min(reinterpret_cast<std::uintptr_t>(end), end_);
  if (lo >= hi) return;
  for (std::size_t s = (lo - first_) / kSpan; s <= (hi - 1 - first_) / kSpan; ++s) ensure(s);
}

void OutputFaults::before_write(std::span<const MutableByteView> ranges) {
  if (count_ == 0) return;
  std::size_t last = count_;  // rows come in order: skip the span just seen
  for (const MutableByteView& range : ranges) {
    const auto lo = reinterpret_cast<std::uintptr_t>(range.data());
    if (range.empty() || lo < begin_ || lo + range.size() > end_) continue;
    const std::size_t first_span = (lo - first_) / kSpan;
    const std::size_t last_span = (lo + range.size() - 1 - first_) / kSpan;
    for (std::size_t s = first_span; s <= last_span; ++s) {
      if (s != last) ensure(s);
    }
    last = last_span;
  }
}

void OutputFaults::fault_all() {
  if (count_ == 0) return;
  shared_thread_pool().parallel_for(count_, [&](std::size_t s) { ensure(s); });
}

std::pair<std::byte*, std::byte*> OutputFaults::task_span(const ChunkTask& task, const NDView& region) {
  std::int64_t lo = 0, hi = 0;
  for (std::size_t a = 0; a < task.axes.size(); ++a) {
    std::int64_t axis_lo = std::numeric_limits<std::int64_t>::max();
    std::int64_t axis_hi = std::numeric_limits<std::int64_t>::min();
    for (const AxisRun& run : task.axes[a].runs()) {
      const std::int64_t from = region.byte_strides[a] * static_cast<std::int64_t>(run.out_start);
      const std::int64_t to = from + region.byte_strides[a] * run.out_step * static_cast<std::int64_t>(run.count - 1);
      axis_lo = std::min({axis_lo, from, to});
      axis_hi = std::max({axis_hi, from, to});
    }
    lo += axis_lo;
    hi += axis_hi;
  }
  return {region.data + lo, region.data + hi + static_cast<std::int64_t>(region.dtype.size())};
}

void OutputFaults::ensure(std::size_t span) {
  for (;;) {
    std::uint8_t state = state_[span].load(std::memory_order_acquire);
    if (state == kFaulted) return;
    if (state == kUntouched &&
        state_[span].compare_exchange_strong(state, kFaulting, std::memory_order_acq_rel)) {
      fault(span);
      state_[span].store(kFaulted, std::memory_order_release);
      return;
    }
    // Another thread is faulting it in: fault one of the next spans meanwhile (threads that
    // walk the same rows need those next), or wait a moment.
    if (!fault_one_after(span)) std::this_thread::yield();
  }
}

bool OutputFaults::fault_one_after(std::size_t span) {
  for (std::size_t s = span + 1; s < std::min(count_, span + 1 + kSpansAhead); ++s) {
    std::uint8_t state = kUntouched;
    if (state_[s].load(std::memory_order_relaxed) == kUntouched &&
        state_[s].compare_exchange_strong(state, kFaulting, std::memory_order_acq_rel)) {
      fault(s);
      state_[s].store(kFaulted, std::memory_order_release);
      return true;
    }
  }
  return false;
}

void OutputFaults::fault(std::size_t span) {
  // The output's pages in this span, whole pages: a page holding an output byte is writable
  // and belongs to the output's mapping.
  const std::uintptr_t lo = std::max(first_ + span * kSpan, begin_) & ~(kPage - 1);
  const std::uintptr_t hi = (std::min(first_ + (span + 1) * kSpan, end_) + kPage - 1) & ~(kPage - 1);
#ifdef MADV_POPULATE_WRITE
  if (::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE) == 0) return;
#endif
  // Older kernels: an atomic "or 0" into each page's first byte faults it in for writing
  // without changing it.
  for (std::uintptr_t p = lo; p < hi; p += kPage) {
    __atomic_fetch_or(reinterpret_cast<unsigned char*>(p), static_cast<unsigned char>(0), __ATOMIC_RELAXED);
  }
}

std::size_t ReadOrder::task(std::size_t i, std::size_t n) const {
  if (groups < 2 || n <= groups) return i;
  // Group g holds tasks [g * q + min(g, r), ...) with q = n / groups, r = n % groups; the
  // i-th taken is task i / groups of group i % groups, the first r groups having one more.
  const std::size_t q = n / groups, r = n % groups;
  std::size_t g, k;
  if (i < q * groups) {
    g = i % groups;
    k = i / groups;
  } else {
    g = i - q * groups;
    k = q;
  }
  return g * q + std::min(g, r) + k;
}

ReadOrder plan_read_order(const ChunkPlan& plan, const NDView& out, std::size_t threads) {
  ReadOrder order;
  if (!large_host_c_output(out, threads)) return order;
  const std::size_t ndim = plan.selection().axes.size();
  if (ndim == 0 || plan.num_tasks() < threads) return order;
  // Region strides: axes an integer selects have one position and take no bytes.
  const std::vector<std::int64_t> strides = NDView::c_strides(plan.region_shape(), out.dtype.size());
  const auto first = plain_parts(plan.axis_split(0));
  if (!first) return order;
  std::size_t groups = first->size();
  if (groups < threads && ndim >= 2 && static_cast<std::uint64_t>(strides[0]) % kSpan == 0) {
    const auto second = plain_parts(plan.axis_split(1));
    if (!second) return order;
    std::size_t runs = 0;
    for (std::size_t m = 0; m < second->size(); ++m) {
      const std::uint64_t end = (*second)[m].second * static_cast<std::uint64_t>(strides[1]);
      if (m + 1 == second->size() || end % kSpan == 0) ++runs;
    }
    groups *= runs;
  }
  if (groups >= threads) order.groups = groups;
  return order;
}

}  // namespace zarrkit
