// How a read touches the pages of a large host output: each page faulted in once, by one
// thread, just before it is written, and the chunk tasks ordered so that threads running at
// once write to pages of their own where the chunk grid allows.
//
// Why: the first write to a page of fresh memory faults it in, and the kernel zeroes it
// (2 MiB at a time where transparent huge pages back the output). Chunks narrower than the
// array write rows scattered through the output, and tasks in C order over the chunk grid
// run side by side in the same pages: at 16 threads, several threads faulted the same huge
// page at once, each zeroing a page of its own and all but one throwing theirs away
// (reading 2 GiB took 196 ms into fresh memory, 73 ms into memory already faulted in).
// Faulting the whole output in a pass before the reads avoided that but cost a pass of its
// own (146 ms in all, against numpy.memmap + copy's 87 ms, whose threads fault and copy one
// slab each in one go).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "engine/indexer.h"
#include "zarrkit/ndbuffer.h"

namespace zarrkit {

// The pages of an output, in spans of 2 MiB, each faulted in by the first thread about to
// write to it; a thread that finds its span being faulted by another faults spans after it
// meanwhile (threads walking the same rows then share the work instead of waiting), then
// goes on. Active for host, C-contiguous outputs of at least 64 MiB read by several
// threads; otherwise every call does nothing. Values in the output are never changed.
class OutputFaults {
 public:
  OutputFaults(const NDView& out, std::size_t threads);

  bool active() const { return count_ > 0; }
  // Before writing anywhere in [begin, end) (bytes of the output; anything outside is
  // ignored): faults in the spans it touches that are not in yet.
  void before_write(const std::byte* begin, const std::byte* end);
  // The same for each of `ranges` (rows about to be read into), span by span.
  void before_write(std::span<const MutableByteView> ranges);
  // Faults in every span on the pool (before reads that cannot say where they write).
  void fault_all();

  // The byte span of the output that `task` writes: from its lowest to its highest element.
  static std::pair<std::byte*, std::byte*> task_span(const ChunkTask& task, const NDView& region);

 private:
  void ensure(std::size_t span);
  bool fault_one_after(std::size_t span);
  void fault(std::size_t span);

  std::uintptr_t begin_ = 0;  // the output's bytes
  std::uintptr_t end_ = 0;
  std::uintptr_t first_ = 0;  // the start of span 0, on a 2 MiB boundary
  std::size_t count_ = 0;
  std::unique_ptr<std::atomic<std::uint8_t>[]> state_;
};

// The order in which the pool takes the chunk tasks of a read into a large C-contiguous
// host output. Where the tasks fall into at least as many groups writing to spans of their
// own as the pool has threads, they are taken one from each group in turn, so that the
// threads run in different groups and never fault the same span; otherwise in C order.
// The groups: the chunks of one index along the first axis (a slab of whole rows of the
// output), or, where there are fewer of those than threads and the rows of the first axis
// are whole 2 MiB spans, runs of chunks along the second axis that end on 2 MiB boundaries
// of each row. Outputs below 64 MiB, other layouts and list selections keep C order.
struct ReadOrder {
  std::size_t groups = 0;  // 0: C order
  // The task to run as the i-th of n taken.
  std::size_t task(std::size_t i, std::size_t n) const;
};
ReadOrder plan_read_order(const ChunkPlan& plan, const NDView& out, std::size_t threads);

}  // namespace zarrkit
