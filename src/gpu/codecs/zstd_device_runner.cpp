#include "gpu/codecs/zstd_device_runner.h"

#include <chrono>
#include <cstring>

#include "gpu/batch_support.h"
#include "gpu/cuda_check.h"
#include "gpu/device_codec.h"
#include "zarrkit/error.h"

namespace zarrkit::gpu {

ZstdDeviceRunner::ZstdDeviceRunner(const std::vector<std::vector<std::uint8_t>>& inputs,
                                   const std::vector<std::uint64_t>& output_sizes)
    : output_sizes_(output_sizes) {
  const std::size_t n = inputs.size();
  walk_errors_.assign(n, zstd::kOk);
  std::vector<std::uint64_t> input_offsets(n);
  std::uint64_t input_bytes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    input_offsets[i] = input_bytes;
    input_bytes = align_up(input_bytes + inputs[i].size() + (i % 7));  // chunks at several alignments
    slot_offsets_.push_back(output_bytes_ + i % 5);
    output_bytes_ = align_up(output_bytes_ + i % 5 + output_sizes[i] + kGuard);
  }
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&input_), std::max<std::uint64_t>(input_bytes, 1)), "allocating test input");
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&output_), std::max<std::uint64_t>(output_bytes_, 1)), "allocating test output");
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&status_), std::max<std::size_t>(n, 1) * sizeof(std::int32_t)), "allocating statuses");
  std::vector<std::uint8_t> staged(input_bytes);
  for (std::size_t i = 0; i < n; ++i) {
    if (!inputs[i].empty()) std::memcpy(staged.data() + input_offsets[i], inputs[i].data(), inputs[i].size());
  }
  check_cuda(cudaMemcpy(input_, staged.data(), input_bytes, cudaMemcpyHostToDevice), "uploading test input");

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::uint64_t> in_addresses, out_addresses;
  planned_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    ZstdPlannedChunk p;
    if (!plan_zstd_chunk(inputs[i].data(), inputs[i].size(), output_sizes[i], p, &walk_errors_[i])) continue;
    p.status = static_cast<std::uint32_t>(i);
    planned_.push_back(std::move(p));
    in_addresses.push_back(reinterpret_cast<std::uint64_t>(input_) + input_offsets[i]);
    out_addresses.push_back(reinterpret_cast<std::uint64_t>(output_) + slot_offsets_[i]);
  }
  plan_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::vector<const ZstdPlannedChunk*> chunks;
  for (const auto& p : planned_) chunks.push_back(&p);
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&scratch_), zstd_scratch_bytes(chunks)), "allocating zstd scratch");
  if (!build_zstd_tables(chunks, in_addresses, out_addresses, reinterpret_cast<std::uint64_t>(scratch_), tables_)) {
    throw InternalError("more zstd blocks than one launch takes");
  }
  TableWriter w;
  w.append(tables_.chunks);
  at_frames_ = w.append(tables_.frames);
  at_blocks_ = w.append(tables_.blocks);
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&device_tables_), std::max<std::size_t>(w.bytes().size(), 1)), "allocating zstd tables");
  check_cuda(cudaMemcpy(device_tables_, w.bytes().data(), w.bytes().size(), cudaMemcpyHostToDevice),
             "uploading zstd tables");
  poison();
}

ZstdDeviceRunner::~ZstdDeviceRunner() {
  cudaFree(input_);
  cudaFree(output_);
  cudaFree(status_);
  cudaFree(scratch_);
  cudaFree(device_tables_);
}

void ZstdDeviceRunner::poison() {
  check_cuda(cudaMemset(output_, kPoison, std::max<std::uint64_t>(output_bytes_, 1)), "poisoning test output");
}

void ZstdDeviceRunner::launch(cudaStream_t stream, const ZstdStageEvents* events) {
  check_cuda(cudaMemsetAsync(status_, 0, std::max<std::size_t>(walk_errors_.size(), 1) * sizeof(std::int32_t), stream),
             "resetting statuses");
  const ZstdLaunch l = zstd_launch(tables_, reinterpret_cast<const ZstdChunkJob*>(device_tables_),
                                   reinterpret_cast<const zstd::FrameJob*>(device_tables_ + at_frames_),
                                   reinterpret_cast<const zstd::BlockJob*>(device_tables_ + at_blocks_),
                                   reinterpret_cast<std::uint64_t>(scratch_), status_);
  check_cuda(launch_zstd_decode(l, stream, events), "launching the zstd kernels");
}

std::vector<std::int32_t> ZstdDeviceRunner::statuses() const {
  std::vector<std::int32_t> s(walk_errors_.size());
  check_cuda(cudaDeviceSynchronize(), "decoding zstd chunks");
  if (!s.empty()) check_cuda(cudaMemcpy(s.data(), status_, s.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost), "reading statuses");
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (walk_errors_[i] != zstd::kOk) s[i] = walk_errors_[i];
  }
  return s;
}

std::vector<std::uint8_t> ZstdDeviceRunner::output(std::size_t chunk) const {
  std::vector<std::uint8_t> out(output_sizes_[chunk]);
  if (!out.empty()) {
    check_cuda(cudaMemcpy(out.data(), output_ + slot_offsets_[chunk], out.size(), cudaMemcpyDeviceToHost),
               "reading test output");
  }
  return out;
}

bool ZstdDeviceRunner::guards_intact() const {
  std::vector<std::uint8_t> all(output_bytes_);
  check_cuda(cudaMemcpy(all.data(), output_, all.size(), cudaMemcpyDeviceToHost), "reading test output");
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < output_sizes_.size(); ++i) {
    // Poison before the slot (the alignment gap) and after it (the guard).
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
