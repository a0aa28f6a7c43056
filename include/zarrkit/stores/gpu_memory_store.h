// A store whose values live in GPU (device) memory, as zarr-python's GpuMemoryStore: the
// keys stay on the host, each value is one device allocation. Built with the CUDA path
// (ZARRKIT_HAVE_CUDA); constructing one without a usable device throws UnsupportedError
// naming the reason.
//
// Reads for device memory return a view of the stored value (no copy; values are immutable
// once stored, as in MemoryStore, so the view stays valid after an overwrite); reads for
// host or pinned memory copy the bytes over. Writes of host bytes copy them to the device;
// set_device() stores bytes that already are in device memory with a device-to-device copy.
//
// Reading an array from it into device memory still brings compressed chunks through pinned
// host memory once: the GPU reader parses chunk headers (blosc block tables, stream sizes)
// on the host before the batch decodes on the device (gpu/chunk_plan.h).
#pragma once

#include <memory>

#include "zarrkit/stores/memory_store.h"

namespace zarrkit {

class GpuMemoryStore : public MemoryStore {
 public:
  GpuMemoryStore();
  static std::shared_ptr<GpuMemoryStore> create() { return std::make_shared<GpuMemoryStore>(); }

  std::string describe() const override;
  // Stores `device_bytes` bytes at `device_data` (device memory) under `key`.
  void set_device(std::string_view key, const void* device_data, std::size_t device_bytes);

 protected:
  Buffer stored_copy_of(ByteView value) const override;
  Buffer deliver(std::string_view key, const Buffer& part, const BufferPrototype& prototype) const override;
};

}  // namespace zarrkit
