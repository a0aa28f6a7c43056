#include "gpu/nvcomp_runtime.h"

#include <dlfcn.h>

#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "zarrkit/config.h"

namespace zarrkit::gpu {

const char* nvcomp_codec_name(NvcompCodec codec) {
  switch (codec) {
    case NvcompCodec::kLz4: return "LZ4";
    case NvcompCodec::kZstd: return "Zstd";
    case NvcompCodec::kGzip: return "Gzip";
    case NvcompCodec::kDeflate: return "Deflate";
  }
  return "?";
}

struct NvcompLoader {
  Nvcomp nvcomp;
  std::string reason;
  bool loaded = false;

  explicit NvcompLoader(const std::string& library) {
    std::vector<std::string> candidates;
    if (!library.empty()) candidates.push_back(library);
    candidates.emplace_back("libnvcomp.so.6");
    candidates.emplace_back("libnvcomp.so");
    void* handle = nullptr;
    std::string errors;
    for (const std::string& name : candidates) {
      // RTLD_LOCAL: nvCOMP's own symbols stay out of the process's global namespace.
      handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) {
        nvcomp.path = name;
        break;
      }
      const char* e = dlerror();
      errors += fmt::format("{}{}", errors.empty() ? "" : "; ", e != nullptr ? e : name);
    }
    if (handle == nullptr) {
      reason = "nvCOMP is not installed (" + errors + ")";
      return;
    }
    // The library stays loaded for the life of the process (it is never dlclosed).
    for (NvcompCodec codec : {NvcompCodec::kLz4, NvcompCodec::kZstd, NvcompCodec::kGzip, NvcompCodec::kDeflate}) {
      const auto i = static_cast<std::size_t>(codec);
      const std::string temp = fmt::format("nvcompBatched{}DecompressGetTempSize", nvcomp_codec_name(codec));
      const std::string run = fmt::format("nvcompBatched{}DecompressAsync", nvcomp_codec_name(codec));
      nvcomp.temp_size_[i] = reinterpret_cast<Nvcomp::TempSize>(dlsym(handle, temp.c_str()));
      nvcomp.decompress_[i] = reinterpret_cast<Nvcomp::Decompress>(dlsym(handle, run.c_str()));
      if (nvcomp.temp_size_[i] == nullptr || nvcomp.decompress_[i] == nullptr) {
        reason = fmt::format("{} lacks {} or {} (nvCOMP 5 or later is needed)", nvcomp.path, temp, run);
        return;
      }
    }
    loaded = true;
  }
};

namespace {
// Loaded once, from the library the settings in force at the first call name.
NvcompLoader& loader() {
  static NvcompLoader instance(current_config().gpu.nvcomp_library);
  return instance;
}
}  // namespace

const Nvcomp* Nvcomp::get() { return loader().loaded ? &loader().nvcomp : nullptr; }

std::string Nvcomp::reason() { return loader().loaded ? std::string() : loader().reason; }

std::size_t Nvcomp::temp_bytes(NvcompCodec codec, std::size_t chunks, std::size_t max_chunk_bytes,
                               std::size_t total_bytes) const {
  std::size_t bytes = 0;
  const int status = temp_size_[static_cast<std::size_t>(codec)](chunks, max_chunk_bytes, NvcompDecompressOptions{},
                                                                 &bytes, total_bytes, nullptr);
  return status == 0 ? bytes : static_cast<std::size_t>(-1);
}

int Nvcomp::decompress(NvcompCodec codec, const void* const* compressed, const std::size_t* compressed_bytes,
                       const std::size_t* buffer_bytes, std::size_t* actual_bytes, std::size_t chunks, void* temp,
                       std::size_t temp_bytes, void* const* outputs, int* statuses, cudaStream_t stream) const {
  return decompress_[static_cast<std::size_t>(codec)](compressed, compressed_bytes, buffer_bytes, actual_bytes, chunks,
                                                      temp, temp_bytes, outputs, NvcompDecompressOptions{}, statuses,
                                                      stream);
}

}  // namespace zarrkit::gpu
