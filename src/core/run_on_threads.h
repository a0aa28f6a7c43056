// Work that waits (on a device, on a store) and so must not sit on the shared pool's workers:
// a few long-running jobs, each on a thread of its own, that still use the pool inside.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <vector>

namespace zarrkit {

// Runs job(i) for i in [0, n) at once: i = 0 on the calling thread, the others on threads
// kept for such jobs (started when every kept one is busy, then kept for later calls), every
// one under the caller's settings (current_config()). Returns after all have finished, with
// each job's exception (nullptr where it returned); the caller decides which to throw. A
// thread that cannot be started is thrown after the started jobs finish.
std::vector<std::exception_ptr> run_on_threads(std::size_t n, const std::function<void(std::size_t)>& job);

// How many threads are kept for run_on_threads (for tests and diagnosis).
std::size_t threads_kept_for_waiting_jobs();

}  // namespace zarrkit
