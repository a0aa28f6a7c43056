#include "core/run_on_threads.h"

#include <thread>

#include "zarrkit/config.h"

namespace zarrkit {

std::vector<std::exception_ptr> run_on_threads(std::size_t n, const std::function<void(std::size_t)>& job) {
  const Config caller = current_config();
  std::vector<std::exception_ptr> errors(n);
  auto run = [&](std::size_t i) {
    try {
      const ScopedConfig settings([&](Config& c) { c = caller; });
      job(i);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(n);
  try {
    for (std::size_t i = 1; i < n; ++i) threads.emplace_back(run, i);
  } catch (...) {
    for (auto& t : threads) t.join();
    throw;
  }
  if (n > 0) run(0);
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace zarrkit
