#include "zarrkit/stores/gpu_memory_store.h"

#include <fmt/format.h>

#include "gpu/cuda_check.h"
#include "zarrkit/gpu.h"

namespace zarrkit {

GpuMemoryStore::GpuMemoryStore() {
  install_gpu_support();
  gpu::require_device("a GPU memory store");
}

std::string GpuMemoryStore::describe() const {
  return fmt::format("gpu-memory://{}", static_cast<const void*>(this));
}

Buffer GpuMemoryStore::stored_copy_of(ByteView value) const {
  Buffer stored = Buffer::allocate(value.size(), device_allocator());
  copy_memory(stored.data(), value.data(), value.size());
  return stored;
}

void GpuMemoryStore::set_device(std::string_view key, const void* device_data, std::size_t device_bytes) {
  validate_key(key);
  Buffer stored = Buffer::allocate(device_bytes, device_allocator());
  copy_memory(stored.data(), device_data, device_bytes);
  put(key, std::move(stored));
}

Buffer GpuMemoryStore::deliver(std::string_view, const Buffer& part, const BufferPrototype& prototype) const {
  if (prototype.kind() == MemoryKind::kDevice) return part;
  Buffer copy = prototype.allocate(part.size());
  copy_memory(copy.data(), part.data(), part.size());
  return copy;
}

}  // namespace zarrkit
