#include "core/key_locks.h"

#include <array>
#include <cstdint>
#include <functional>

namespace zarrkit {
namespace {

// Enough stripes that unrelated keys rarely collide among the threads of one machine.
constexpr std::size_t kStripes = 1024;

struct alignas(64) Stripe {  // one cache line each: no false sharing between stripes
  std::mutex mutex;
};

}  // namespace

std::mutex& key_write_mutex(std::string_view store_name, std::string_view key) {
  static std::array<Stripe, kStripes> stripes;
  const std::size_t h = std::hash<std::string_view>{}(key) ^
                        (std::hash<std::string_view>{}(store_name) * std::size_t{0x9e3779b97f4a7c15ull});
  return stripes[h % kStripes].mutex;
}

}  // namespace zarrkit
