#include "stores/host_value.h"

#include <cstring>

#include "zarrkit/error.h"

namespace zarrkit {

Buffer range_of(const Buffer& value, std::optional<ByteRange> range) {
  if (!range) return value;
  const auto [begin, end] = range->resolve(value.size());
  return value.slice(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
}

Buffer host_value_for(Buffer value, const BufferPrototype& prototype, std::string_view store, std::string_view key) {
  if (prototype.kind() == MemoryKind::kHost) return value;
  if (!is_host_accessible(prototype.kind())) {
    if (key.empty()) {
      fail_unsupported("{}: reading into {} memory is not supported by this store; read into host memory", store,
                       memory_kind_name(prototype.kind()));
    }
    fail_unsupported("{}: cannot read \"{}\" into {} memory; read into host memory and copy", store, key,
                     memory_kind_name(prototype.kind()));
  }
  Buffer copy = prototype.allocate(value.size());
  if (!value.empty()) std::memcpy(copy.data(), value.data(), value.size());
  return copy;
}

}  // namespace zarrkit
