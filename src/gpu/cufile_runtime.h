// cuFile (GPUDirect Storage), loaded at run time when it is installed: zarrkit neither
// builds nor runs against it. Looked up as $ZARRKIT_CUFILE_LIBRARY (a path), then
// libcufile.so.0 and libcufile.so through the dynamic loader's usual search.
//
// The few entry points used are declared here, not taken from cufile.h (which needs not be
// present at build time). The structures below match cufile.h of libcufile 1.14 (the
// nvidia-cufile-cu12 wheel; sizes and field offsets were compared with a program built
// against that header): CUfileError_t, CUfileDescr_t and CUfileDrvProps_t.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "stores/gds_plan.h"

namespace zarrkit::gpu {

struct CufileError {  // CUfileError_t: a CUfileOpError and a CUresult (both int-sized enums)
  int err;
  int cu_err;
};
struct CufileDescr {  // CUfileDescr_t
  int type;           // CU_FILE_HANDLE_TYPE_OPAQUE_FD = 1
  union {
    int fd;
    void* handle;
  } handle;
  const void* fs_ops;
};
struct CufileDriverProps {  // CUfileDrvProps_t
  struct {
    unsigned int major_version;
    unsigned int minor_version;
    std::size_t poll_thresh_size;
    std::size_t max_direct_io_size;
    unsigned int dstatusflags;
    unsigned int dcontrolflags;
  } nvfs;
  unsigned int fflags;
  unsigned int max_device_cache_size;
  unsigned int per_buffer_cache_size;
  unsigned int max_device_pinned_mem_size;
  unsigned int max_batch_io_size;
  unsigned int max_batch_io_timeout_msecs;
};
static_assert(sizeof(CufileError) == 8 && sizeof(CufileDescr) == 24 && sizeof(CufileDriverProps) == 56);
using CufileHandle = void*;

// cuFile's error text for a CUfileOpError code (5000 + n), or "cuFile error <code>".
std::string cufile_error_text(int code);

// Whether the nvidia-fs kernel driver is loaded: without it cuFile has no GPUDirect
// transfers, only its compatibility mode.
bool nvidia_fs_driver_loaded();

class Cufile {
 public:
  // What loading cuFile found. The first call of load, get or probe loads the library
  // (`library` when not empty, else libcufile.so.0, else libcufile.so) and opens its
  // driver (the CUDA device must be usable; the driver stays open for the life of the
  // process); later calls return what that one found, whatever library they name.
  static const detail::CufileProbe& load(const std::string& library);
  // The same, loading Config::gpu.cufile_library of the settings in force.
  static const detail::CufileProbe& probe();
  // The library with its driver open, or nullptr (probe() says why); loaded as load() or
  // probe() do.
  static const Cufile* get(const std::string& library);
  static const Cufile* get();

  // Registers an open file; on failure returns nullptr and sets `why`.
  CufileHandle register_file(int fd, std::string& why) const;
  void deregister_file(CufileHandle handle) const;
  // cuFileRead: bytes read (short at the end of the file), -1 with errno set, or minus a
  // CUfileOpError code.
  ssize_t read(CufileHandle handle, void* device, std::size_t size, off_t file_offset) const;

  std::string path;  // what was loaded

 private:
  using DriverOpen = CufileError (*)();
  using HandleRegister = CufileError (*)(CufileHandle*, CufileDescr*);
  using HandleDeregister = void (*)(CufileHandle);
  using Read = ssize_t (*)(CufileHandle, void*, std::size_t, off_t, off_t);
  using GetProperties = CufileError (*)(CufileDriverProps*);
  using GetVersion = CufileError (*)(int*);
  using GetParameterBool = CufileError (*)(int, bool*);
  DriverOpen driver_open_ = nullptr;
  HandleRegister register_ = nullptr;
  HandleDeregister deregister_ = nullptr;
  Read read_ = nullptr;
  GetProperties get_properties_ = nullptr;     // optional
  GetVersion get_version_ = nullptr;           // optional (1.9 and later)
  GetParameterBool get_parameter_bool_ = nullptr;  // optional (1.9 and later)
  friend struct CufileLoader;
};

}  // namespace zarrkit::gpu
