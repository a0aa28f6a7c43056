#include "gpu/device_codec.h"

#include <algorithm>
#include <cstring>

namespace zarrkit::gpu {

bool own_kernels_take(KernelUse use, const DeviceStageContext& context, const OwnKernelsRule& rule,
                      bool nvcomp_instead) {
  switch (use) {
    case KernelUse::kOff: return false;
    case KernelUse::kOn: return true;
    case KernelUse::kAuto: break;
  }
  if (nvcomp_instead) return false;
  if (rule.max_chunk_bytes != 0 && context.chunk_bytes > rule.max_chunk_bytes) return false;
  const double read_bytes = static_cast<double>(context.chunks_in_read) * static_cast<double>(context.chunk_bytes);
  const double wanted = static_cast<double>(rule.min_read_bytes_per_host_thread) *
                        static_cast<double>(std::max<std::size_t>(context.host_threads, 1));
  return read_bytes >= wanted;
}

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
