#include "gpu/device_codec.h"

#include <algorithm>
#include <cstring>

namespace zarrkit::gpu {

std::uint64_t TableWriter::append(const void* data, std::size_t bytes) {
  constexpr std::size_t kAlign = 64;
  const std::size_t offset = (bytes_.size() + kAlign - 1) / kAlign * kAlign;
  bytes_.resize(offset + bytes);
  if (bytes > 0) std::memcpy(bytes_.data() + offset, data, bytes);
  return offset;
}

void BatchWorks::absorb(BatchWorks& other) {
  for (auto& [type, work] : other.works_) {
    if (work->empty()) continue;
    auto mine = std::find_if(works_.begin(), works_.end(), [&](const auto& w) { return w.first == type; });
    if (mine == works_.end()) {
      works_.emplace_back(type, work->make_empty());
      mine = std::prev(works_.end());
    }
    mine->second->absorb(*work);
  }
}

std::vector<BatchWork*> BatchWorks::in_phase_order() const {
  std::vector<BatchWork*> out;
  for (const auto& w : works_) {
    if (!w.second->empty()) out.push_back(w.second.get());
  }
  std::stable_sort(out.begin(), out.end(), [](const BatchWork* a, const BatchWork* b) { return a->phase() < b->phase(); });
  return out;
}

void BatchWorks::clear() {
  for (auto& w : works_) w.second->clear();
}

void BatchWorks::release(cudaStream_t stream) {
  for (auto& w : works_) w.second->release(stream);
}

}  // namespace zarrkit::gpu
