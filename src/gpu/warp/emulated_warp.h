// Warps emulated on the host, for the tests of the decoders whose warp-level stages are
// written once for the device and the host (src/gpu/zstd/, src/gpu/deflate/): each emulated
// warp is one thread running its 32 lanes as fibers, which switch at every collective
// (ballot, shuffles, sync): the same code the kernels run, with its per-lane branches, runs
// here lane by lane under the sanitizers, and several warps run at once. Memory operations
// take the host's orderings (acquire and release where warps wait for each other).
#pragma once

#include <ucontext.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include <pthread.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

// Switching lanes is the cost of the emulation: on x86-64, a switch saves the callee-saved
// registers on the stack and swaps stack pointers (swapcontext would also make a system call
// for the signal mask at every switch); elsewhere, ucontext.
#if defined(__x86_64__) && defined(__linux__)
#define ZARRKIT_FIBER_SWITCH 1
extern "C" void zarrkit_fiber_switch(void** save_sp, void* load_sp);
asm(R"(
  .text
  .weak zarrkit_fiber_switch
  .type zarrkit_fiber_switch,@function
zarrkit_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size zarrkit_fiber_switch,.-zarrkit_fiber_switch
)");
#endif

namespace zarrkit::gpu::warp_testing {

constexpr unsigned kWarpLanes = 32;

// Where a lane (or the warp's own thread) left off.
struct FiberContext {
#if defined(ZARRKIT_FIBER_SWITCH)
  void* sp = nullptr;
#else
  ucontext_t uc{};
#endif
};

// A context that starts `entry` (which never returns) on stack [stack, stack + size).
inline void prepare_fiber(FiberContext& c, char* stack, std::size_t size, void (*entry)()) {
#if defined(ZARRKIT_FIBER_SWITCH)
  auto top = (reinterpret_cast<std::uintptr_t>(stack) + size) & ~std::uintptr_t{15};
  auto** sp = reinterpret_cast<void**>(top);
  *--sp = nullptr;                            // entry's return address: it never returns
  *--sp = reinterpret_cast<void*>(entry);     // where the first switch returns to
  for (int r = 0; r < 6; ++r) *--sp = nullptr;  // rbp, rbx, r12-r15
  c.sp = sp;
#else
  if (getcontext(&c.uc) != 0) throw std::runtime_error("getcontext");
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = size;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, entry, 0);
#endif
}

inline void jump_fiber(FiberContext& from, FiberContext& to) {
#if defined(ZARRKIT_FIBER_SWITCH)
  zarrkit_fiber_switch(&from.sp, to.sp);
#else
  swapcontext(&from.uc, &to.uc);
#endif
}

// The 32 lanes of one emulated warp, run on the calling thread. A lane runs until it meets
// the others at a collective, then the next lane runs; the last lane to arrive goes on.
class FiberWarp {
 public:
  static constexpr std::size_t kStackBytes = std::size_t{1} << 20;

  template <typename Body>
  void run(Body body) {
    body_ = [&body](unsigned lane) { body(lane); };
    // A warp may run several times (the host decoder keeps one per thread): the stacks stay.
    done_ = {};
    started_ = {};
    arrived_ = 0;
    for (unsigned l = 0; l < kWarpLanes; ++l) {
      if (!stacks_[l]) stacks_[l] = std::unique_ptr<char[]>(new char[kStackBytes]);
      prepare_fiber(lanes_[l], stacks_[l].get(), kStackBytes, &FiberWarp::entry);
    }
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* low = nullptr;
      std::size_t size = 0;
      pthread_attr_getstack(&attr, &low, &size);
      pthread_attr_destroy(&attr);
      thread_bottom_ = low;
      thread_size_ = size;
    }
    current() = this;
    // The lanes switch among themselves at collectives; a lane that ends comes back here.
    for (bool all_done = false; !all_done;) {
      all_done = true;
      for (unsigned l = 0; l < kWarpLanes; ++l) {
        if (done_[l]) continue;
        all_done = false;
        switch_to(thread_, l);
      }
    }
    current() = nullptr;
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
      // On the device this would hang the warp: a collective the other lanes have left.
      if (next == lane) std::abort();
      switch_to(lanes_[lane], next);
    }
  }

  std::array<std::uint32_t, kWarpLanes> slot{};

 private:
  static FiberWarp*& current() {
    thread_local FiberWarp* warp = nullptr;
    return warp;
  }

  // The first code of a lane: the lane started is the one switch_to marked.
  static void entry() {
    FiberWarp* self = current();
    const unsigned lane = self->starting_;
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
    self->body_(lane);
    self->done_[lane] = true;
    // Back to the warp's thread for good (this stack is not resumed).
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_start_switch_fiber(nullptr, self->thread_bottom_, self->thread_size_);
#endif
    jump_fiber(self->lanes_[lane], self->thread_);
    std::abort();
  }

  // From the context `from` (the thread's or a lane's) to lane `to`.
  void switch_to(FiberContext& from, unsigned to) {
    if (!started_[to]) {
      started_[to] = true;
      starting_ = to;
    }
#if defined(__SANITIZE_ADDRESS__)
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, stacks_[to].get(), kStackBytes);
    jump_fiber(from, lanes_[to]);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
    jump_fiber(from, lanes_[to]);
#endif
  }

  std::function<void(unsigned)> body_;
  FiberContext thread_;
  std::array<FiberContext, kWarpLanes> lanes_{};
  std::array<std::unique_ptr<char[]>, kWarpLanes> stacks_;
  std::array<bool, kWarpLanes> done_{};
  std::array<bool, kWarpLanes> started_{};
  unsigned starting_ = 0;
  unsigned arrived_ = 0;
  std::uint64_t generation_ = 0;
  const void* thread_bottom_ = nullptr;
  std::size_t thread_size_ = 0;
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
    return std::atomic_ref<std::uint32_t>(*p).load(std::memory_order_relaxed);
  }
  void acquire() const { std::atomic_thread_fence(std::memory_order_acquire); }
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
  void pause(std::uint32_t) const { std::this_thread::yield(); }

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

}  // namespace zarrkit::gpu::warp_testing
