#include "gpu/codecs/deflate_device_runner.h"

#include <algorithm>
#include <cstring>

#include "gpu/batch_support.h"
#include "gpu/cuda_check.h"
#include "gpu/deflate/deflate_host_decoder.h"

namespace zarrkit::gpu {

DeflateDeviceRunner::DeflateDeviceRunner(const std::vector<std::vector<std::uint8_t>>& inputs,
                                         const std::vector<std::uint64_t>& output_sizes,
                                         const std::vector<deflate::Format>& formats)
    : output_sizes_(output_sizes) {
  const std::size_t n = inputs.size();
  plan_errors_.assign(n, deflate::kOk);
  std::vector<std::uint64_t> input_offsets(n);
  std::uint64_t input_bytes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    input_offsets[i] = input_bytes;
    input_bytes = align_up(input_bytes + inputs[i].size() + (i % 7));  // chunks at several alignments
    slot_offsets_.push_back(output_bytes_ + kGuard + i % 5);
    output_bytes_ = align_up(output_bytes_ + kGuard + i % 5 + output_sizes[i] + kGuard);
  }
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&input_), std::max<std::uint64_t>(input_bytes, 1)), "allocating test input");
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&output_), std::max<std::uint64_t>(output_bytes_, 1)), "allocating test output");
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&status_), std::max<std::size_t>(n, 1) * sizeof(std::int32_t)), "allocating statuses");
  std::vector<std::uint8_t> staged(input_bytes);
  for (std::size_t i = 0; i < n; ++i) {
    if (!inputs[i].empty()) std::memcpy(staged.data() + input_offsets[i], inputs[i].data(), inputs[i].size());
  }
  check_cuda(cudaMemcpy(input_, staged.data(), input_bytes, cudaMemcpyHostToDevice), "uploading test input");
  for (std::size_t i = 0; i < n; ++i) {
    if (!deflate::plan_deflate_chunk(inputs[i].size(), output_sizes[i], &plan_errors_[i])) continue;
    deflate::DeflateChunkJob j{};
    j.input = reinterpret_cast<std::uint64_t>(input_) + input_offsets[i];
    j.output = reinterpret_cast<std::uint64_t>(output_) + slot_offsets_[i];
    j.input_size = static_cast<std::uint32_t>(inputs[i].size());
    j.output_size = static_cast<std::uint32_t>(output_sizes[i]);
    j.status = static_cast<std::uint32_t>(i);
    j.format = formats[i];
    jobs_.push_back(j);
  }
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&device_jobs_), std::max<std::size_t>(jobs_.size(), 1) * sizeof(deflate::DeflateChunkJob)),
             "allocating deflate jobs");
  if (!jobs_.empty()) {
    check_cuda(cudaMemcpy(device_jobs_, jobs_.data(), jobs_.size() * sizeof(deflate::DeflateChunkJob), cudaMemcpyHostToDevice),
               "uploading deflate jobs");
  }
  poison();
}

DeflateDeviceRunner::~DeflateDeviceRunner() {
  cudaFree(input_);
  cudaFree(output_);
  cudaFree(status_);
  cudaFree(device_jobs_);
}

void DeflateDeviceRunner::poison() {
  check_cuda(cudaMemset(output_, kPoison, std::max<std::uint64_t>(output_bytes_, 1)), "poisoning test output");
}

void DeflateDeviceRunner::launch(cudaStream_t stream) {
  check_cuda(cudaMemsetAsync(status_, 0, std::max<std::size_t>(plan_errors_.size(), 1) * sizeof(std::int32_t), stream),
             "resetting statuses");
  deflate::DeflateLaunch l;
  l.chunks = device_jobs_;
  l.status = status_;
  l.chunk_count = static_cast<std::uint32_t>(jobs_.size());
  check_cuda(launch_deflate_decode(l, stream), "launching the deflate kernel");
}

std::vector<std::int32_t> DeflateDeviceRunner::statuses() const {
  std::vector<std::int32_t> s(plan_errors_.size());
  check_cuda(cudaDeviceSynchronize(), "decoding deflate chunks");
  if (!s.empty()) check_cuda(cudaMemcpy(s.data(), status_, s.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost), "reading statuses");
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (plan_errors_[i] != deflate::kOk) s[i] = plan_errors_[i];
  }
  return s;
}

std::vector<std::uint8_t> DeflateDeviceRunner::output(std::size_t chunk) const {
  std::vector<std::uint8_t> out(output_sizes_[chunk]);
  if (!out.empty()) {
    check_cuda(cudaMemcpy(out.data(), output_ + slot_offsets_[chunk], out.size(), cudaMemcpyDeviceToHost),
               "reading test output");
  }
  return out;
}

bool DeflateDeviceRunner::guards_intact() const {
  std::vector<std::uint8_t> all(output_bytes_);
  check_cuda(cudaMemcpy(all.data(), output_, all.size(), cudaMemcpyDeviceToHost), "reading test output");
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < output_sizes_.size(); ++i) {
    for (std::uint64_t k = at; k < slot_offsets_[i]; ++k) {
      if (all[k] != kPoison) return false;
    }
    const std::uint64_t end = slot_offsets_[i] + output_sizes_[i];
    for (std::uint64_t k = end; k < end + kGuard; ++k) {
      if (all[k] != kPoison) return false;
    }
    at = end + kGuard;
  }
  return true;
}

}  // namespace zarrkit::gpu
