// The warp-level stages of zstd_stages.cuh run on the host, for the tests: each emulated
// warp is one thread running its 32 lanes as fibers (ucontext), which switch at every
// collective (ballot, shuffles, sync): the same code the kernels run, with its per-lane
// branches, runs here lane by lane under the sanitizers, and several warps run at once, so
// the blocks of a frame wait for each other's bytes as on the device. Memory operations take
// the host's orderings (acquire and release for the blocks' progress).
#pragma once

#include <ucontext.h>

#include <array>
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gpu/zstd/zstd_stages.cuh"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

namespace zarrkit::gpu::zstd::testing {

// The 32 lanes of one emulated warp. A lane runs until it meets the others at a collective,
// then the next lane runs; the last lane to arrive goes on.
class FiberWarp {
 public:
  static constexpr std::size_t kStackBytes = std::size_t{1} << 20;

  template <typename Body>
  void run(Body body) {
    body_ = [&body](unsigned lane) { body(lane); };
    for (unsigned l = 0; l < kWarpLanes; ++l) {
      stacks_[l] = std::make_unique<char[]>(kStackBytes);
      if (getcontext(&lanes_[l]) != 0) throw std::runtime_error("getcontext");
      lanes_[l].uc_stack.ss_sp = stacks_[l].get();
      lanes_[l].uc_stack.ss_size = kStackBytes;
      lanes_[l].uc_link = &scheduler_;
      const auto self = reinterpret_cast<std::uintptr_t>(this);
      makecontext(&lanes_[l], reinterpret_cast<void (*)()>(&FiberWarp::start), 3, static_cast<unsigned>(self >> 32),
                  static_cast<unsigned>(self & 0xFFFFFFFFu), l);
      done_[l] = false;
    }
    // The lanes switch among themselves at collectives; a lane that ends comes back here.
    for (bool all_done = false; !all_done;) {
      all_done = true;
      for (unsigned l = 0; l < kWarpLanes; ++l) {
        if (done_[l]) continue;
        all_done = false;
        switch_to(&scheduler_, &lanes_[l], stacks_[l].get());
      }
    }
  }

  // Waits until every lane has arrived (called by lane `lane`); the last one goes on.
  void meet(unsigned lane) {
    const std::uint64_t generation = generation_;
    if (++arrived_ == kWarpLanes) {
      arrived_ = 0;
      ++generation_;
      return;
    }
    while (generation_ == generation) {
      unsigned next = lane;
      for (unsigned k = 1; k < kWarpLanes && next == lane; ++k) {
        if (!done_[(lane + k) % kWarpLanes]) next = (lane + k) % kWarpLanes;
      }
      // On the device this would hang the warp: a collective the other lanes left.
      if (next == lane) throw std::logic_error("a lane waits at a collective the others have left");
      switch_to(&lanes_[lane], &lanes_[next], stacks_[next].get());
    }
  }

  std::array<std::uint32_t, kWarpLanes> slot{};

 private:
  static void start(unsigned high, unsigned low, unsigned lane) {
    auto* self = reinterpret_cast<FiberWarp*>(std::uintptr_t{high} << 32 | low);
#if defined(__SANITIZE_ADDRESS__)
    // Switched to from the scheduler: AddressSanitizer tells where its stack is.
    __sanitizer_finish_switch_fiber(nullptr, &self->scheduler_bottom_, &self->scheduler_size_);
#endif
    self->body_(lane);
    self->done_[lane] = true;
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_start_switch_fiber(nullptr, self->scheduler_bottom_, self->scheduler_size_);  // this fiber ends
#endif
  }

  // `to_stack`: the stack of the lane switched to, or null for the scheduler's.
  void switch_to(ucontext_t* from, ucontext_t* to, const char* to_stack) {
#if defined(__SANITIZE_ADDRESS__)
    void* fake = nullptr;
    const void* bottom = to_stack != nullptr ? static_cast<const void*>(to_stack) : scheduler_bottom_;
    const std::size_t size = to_stack != nullptr ? kStackBytes : scheduler_size_;
    __sanitizer_start_switch_fiber(&fake, bottom, size);
    swapcontext(from, to);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
    (void)to_stack;
    swapcontext(from, to);
#endif
  }

  std::function<void(unsigned)> body_;
  ucontext_t scheduler_{};
  std::array<ucontext_t, kWarpLanes> lanes_{};
  std::array<std::unique_ptr<char[]>, kWarpLanes> stacks_;
  std::array<bool, kWarpLanes> done_{};
  unsigned arrived_ = 0;
  std::uint64_t generation_ = 0;
  const void* scheduler_bottom_ = nullptr;
  std::size_t scheduler_size_ = 0;
};

// The Warp of zstd_stages.cuh for one lane of a FiberWarp.
class EmulatedWarp {
 public:
  EmulatedWarp(unsigned lane, FiberWarp& warp) : lane_(lane), warp_(warp) {}

  unsigned lane() const { return lane_; }
  void sync() { warp_.meet(lane_); }
  unsigned ballot(bool p) {
    post(p ? 1u : 0u);
    unsigned mask = 0;
    for (unsigned l = 0; l < kWarpLanes; ++l) mask |= (warp_.slot[l] != 0 ? 1u : 0u) << l;
    sync();
    return mask;
  }
  bool any(bool p) { return ballot(p) != 0; }
  std::uint32_t shfl(std::uint32_t v, unsigned from) {
    post(v);
    const std::uint32_t r = warp_.slot[from];
    sync();
    return r;
  }
  std::uint32_t shfl_up(std::uint32_t v, unsigned d) {
    post(v);
    const std::uint32_t r = lane_ >= d ? warp_.slot[lane_ - d] : v;
    sync();
    return r;
  }
  std::uint32_t shfl_xor(std::uint32_t v, unsigned m) {
    post(v);
    const std::uint32_t r = warp_.slot[lane_ ^ m];
    sync();
    return r;
  }
  std::uint8_t load_shared(const std::uint8_t* p) const { return *p; }
  std::uint32_t fetch_add(std::uint32_t* p, std::uint32_t v) const { return std::atomic_ref<std::uint32_t>(*p).fetch_add(v); }
  std::uint32_t load_progress(std::uint32_t* p) const {
    return std::atomic_ref<std::uint32_t>(*p).load(std::memory_order_acquire);
  }
  void publish_progress(std::uint32_t* p, std::uint32_t v) const {
    std::atomic_ref<std::uint32_t>(*p).store(v, std::memory_order_release);
  }
  bool failed(const std::int32_t* status) const {
    return std::atomic_ref<std::int32_t>(*const_cast<std::int32_t*>(status)).load(std::memory_order_relaxed) != 0;
  }
  void fail(std::int32_t* status, std::int32_t code) const {
    std::int32_t none = 0;
    std::atomic_ref<std::int32_t>(*status).compare_exchange_strong(none, code);
  }
  // Lane 0 waiting for another warp while its own lanes wait for it at a collective.
  void pause() const { std::this_thread::yield(); }

 private:
  void post(std::uint32_t v) {
    warp_.slot[lane_] = v;
    sync();
  }
  unsigned lane_;
  FiberWarp& warp_;
};

// Runs body(warp, index) on `warps` emulated warps at once (a thread each).
template <typename Body>
void run_warps(unsigned warps, Body body) {
  std::vector<std::thread> threads;
  for (unsigned k = 0; k < warps; ++k) {
    threads.emplace_back([&body, k] {
      auto warp = std::make_unique<FiberWarp>();
      warp->run([&](unsigned lane) {
        EmulatedWarp w(lane, *warp);
        body(w, k);
      });
    });
  }
  for (auto& t : threads) t.join();
}

// The stages of a launch over host memory, as the kernels order them, `warps` at a time.
inline void run_stages_emulated(const ZstdLaunch& L, unsigned warps) {
  std::memset(static_cast<void*>(L.states), 0, std::size_t{L.block_count} * sizeof(BlockState));
  *L.counter = 0;
  {
    auto memory = std::make_unique<LiteralsWarpMemory[]>(warps);
    run_warps(warps, [&](EmulatedWarp& w, unsigned k) {
      for (std::uint32_t b = k; b < L.block_count; b += warps) warp_literals(w, L, b, memory[k]);
    });
  }
  {
    auto memory = std::make_unique<SequencesWarpMemory[]>(warps);
    run_warps(warps, [&](EmulatedWarp& w, unsigned k) {
      for (std::uint32_t b = k; b < L.block_count; b += warps) warp_sequences(w, L, b, memory[k]);
    });
  }
  for (std::uint32_t c = 0; c < L.chunk_count; ++c) {
    std::int32_t& status = L.status[L.chunks[c].status];
    if (status != kOk) continue;
    status = scan_chunk(L, c);
  }
  run_warps(warps, [&](EmulatedWarp& w, unsigned) { warp_execute_loop(w, L); });
  run_warps(warps, [&](EmulatedWarp& w, unsigned k) {
    for (std::uint32_t f = k; f < L.frame_count; f += warps) warp_checksum(w, L, f);
  });
}

}  // namespace zarrkit::gpu::zstd::testing
