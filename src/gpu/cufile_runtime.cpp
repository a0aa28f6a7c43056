#include "gpu/cufile_runtime.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "zarrkit/config.h"

namespace zarrkit::gpu {
namespace {

constexpr int kCufileSuccess = 0;
constexpr int kHandleTypeFd = 1;                // CU_FILE_HANDLE_TYPE_OPAQUE_FD
constexpr int kParameterForceCompatMode = 2;    // CUFILE_PARAM_FORCE_COMPAT_MODE

// The CUfileOpError codes whose meaning a user can act on (cufile.h has the full list).
const char* known_error(int code) {
  switch (code) {
    case 5001: return "the nvidia-fs driver is not loaded and compatibility mode is not allowed (allow_compat_mode in cufile.json)";
    case 5004: return "nvidia-fs driver version mismatch";
    case 5007: return "GPUDirect Storage is not supported on this platform";
    case 5008: return "GPUDirect Storage is not supported on this file";
    case 5009: return "GPUDirect Storage is not supported on this GPU";
    case 5011: return "CUDA driver API error";
    case 5012: return "invalid device pointer";
    case 5013: return "invalid pointer memory type";
    case 5018: return "unsupported file type";
    case 5020: return "the file is not opened with O_DIRECT";
    case 5025: return "driver or file access error";
    case 5027: return "cuFile did not register the file (its compatibility mode refuses some files and mounts)";
    case 5029: return "GPU device not found";
    case 5030: return "internal error";
    case 5034: return "GPUDirect Storage is disabled by the configuration for this file";
    default: return nullptr;
  }
}

}  // namespace

std::string cufile_error_text(int code) {
  if (const char* text = known_error(code)) return fmt::format("{} (cuFile error {})", text, code);
  return fmt::format("cuFile error {}", code);
}

bool nvidia_fs_driver_loaded() {
  std::error_code ec;
  return std::filesystem::exists("/proc/driver/nvidia-fs/version", ec);
}

struct CufileLoader {
  Cufile cufile;
  detail::CufileProbe probe;

  explicit CufileLoader(const std::string& library) {
    std::vector<std::string> candidates;
    if (!library.empty()) candidates.push_back(library);
    candidates.emplace_back("libcufile.so.0");
    candidates.emplace_back("libcufile.so");
    void* handle = nullptr;
    std::string errors;
    for (const std::string& name : candidates) {
      // RTLD_LOCAL: cuFile's own symbols stay out of the process's global namespace.
      handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) {
        cufile.path = name;
        break;
      }
      const char* e = dlerror();
      errors += fmt::format("{}{}", errors.empty() ? "" : "; ", e != nullptr ? e : name);
    }
    if (handle == nullptr) {
      probe.reason = "cuFile is not installed (" + errors + ")";
      return;
    }
    // The library stays loaded for the life of the process (it is never dlclosed).
    auto symbol = [&](const char* name) { return dlsym(handle, name); };
    cufile.driver_open_ = reinterpret_cast<Cufile::DriverOpen>(symbol("cuFileDriverOpen"));
    cufile.register_ = reinterpret_cast<Cufile::HandleRegister>(symbol("cuFileHandleRegister"));
    cufile.deregister_ = reinterpret_cast<Cufile::HandleDeregister>(symbol("cuFileHandleDeregister"));
    cufile.read_ = reinterpret_cast<Cufile::Read>(symbol("cuFileRead"));
    cufile.get_properties_ = reinterpret_cast<Cufile::GetProperties>(symbol("cuFileDriverGetProperties"));
    cufile.get_version_ = reinterpret_cast<Cufile::GetVersion>(symbol("cuFileGetVersion"));
    cufile.get_parameter_bool_ = reinterpret_cast<Cufile::GetParameterBool>(symbol("cuFileGetParameterBool"));
    if (!cufile.driver_open_ || !cufile.register_ || !cufile.deregister_ || !cufile.read_) {
      probe.reason = fmt::format("{} lacks cuFileDriverOpen, cuFileHandleRegister, cuFileHandleDeregister or cuFileRead",
                                 cufile.path);
      return;
    }
    probe.loaded = true;
    if (cufile.get_version_ != nullptr) {
      int version = 0;
      // major * 1000 + minor * 10 (1140 for libcufile 1.14).
      if (cufile.get_version_(&version).err == kCufileSuccess && version > 0) {
        probe.version = fmt::format("{}.{}", version / 1000, version % 1000 / 10);
      }
    }
    // cuFile works in the current CUDA context: make the device's primary context current.
    const cudaError_t status = cudaFree(nullptr);
    if (status != cudaSuccess) {
      cudaGetLastError();
      probe.reason = fmt::format("the CUDA device is not usable ({})", cudaGetErrorString(status));
      return;
    }
    const CufileError opened = cufile.driver_open_();
    if (opened.err != kCufileSuccess) {
      probe.reason = "cuFileDriverOpen failed: " + cufile_error_text(opened.err);
      return;
    }
    probe.driver_opened = true;
    // True GPUDirect transfers need the nvidia-fs kernel driver, and a configuration that
    // does not force cuFile's compatibility mode.
    bool gds = nvidia_fs_driver_loaded();
    CufileDriverProps props{};
    if (gds && cufile.get_properties_ != nullptr && cufile.get_properties_(&props).err == kCufileSuccess) {
      gds = props.nvfs.major_version != 0 || props.nvfs.minor_version != 0;
    }
    bool forced_compat = false;
    if (gds && cufile.get_parameter_bool_ != nullptr &&
        cufile.get_parameter_bool_(kParameterForceCompatMode, &forced_compat).err == kCufileSuccess) {
      gds = !forced_compat;
    }
    probe.gds_driver = gds;
  }
};

namespace {
CufileLoader& loader(const std::string& library) {
  static CufileLoader* instance = new CufileLoader(library);  // never destroyed: the driver stays open
  return *instance;
}
}  // namespace

const detail::CufileProbe& Cufile::load(const std::string& library) { return loader(library).probe; }

const detail::CufileProbe& Cufile::probe() { return load(current_config().gpu.cufile_library); }

const Cufile* Cufile::get(const std::string& library) {
  const CufileLoader& l = loader(library);
  return l.probe.loaded && l.probe.driver_opened ? &l.cufile : nullptr;
}

const Cufile* Cufile::get() { return get(current_config().gpu.cufile_library); }

CufileHandle Cufile::register_file(int fd, std::string& why) const {
  CufileDescr descr{};
  descr.type = kHandleTypeFd;
  descr.handle.fd = fd;
  CufileHandle handle = nullptr;
  const CufileError status = register_(&handle, &descr);
  if (status.err != kCufileSuccess) {
    why = "cuFileHandleRegister failed: " + cufile_error_text(status.err);
    return nullptr;
  }
  return handle;
}

void Cufile::deregister_file(CufileHandle handle) const { deregister_(handle); }

ssize_t Cufile::read(CufileHandle handle, void* device, std::size_t size, off_t file_offset) const {
  return read_(handle, device, size, file_offset, 0);
}

}  // namespace zarrkit::gpu
