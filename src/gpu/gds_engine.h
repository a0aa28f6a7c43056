// The engine behind GdsStore's device reads (stores/gds_engine.h), registered by
// install_gpu_support(): the I/O threads of stores/gds_pipeline.h (tested on the host) with
//   - a lane per thread: its own CUDA stream, two pinned staging buffers of one piece and
//     an event per buffer marking the copy out of it (compat path: pread a piece into a
//     free buffer, queue its copy, go on to the next piece while it runs);
//   - cuFile as the direct reader when the path is cuFile: cuFileRead straight into device
//     memory (cuFile stages through its own buffers in its compatibility mode); a file
//     cuFile will not register, or a read it refuses, goes through the lane's staging.
// Engines are shared by every store with the same settings, and live as long as the process.
#pragma once

#include <memory>

#include "stores/gds_engine.h"

namespace zarrkit::gpu {

// The engine for `settings`. UnsupportedError without a usable device, or when the mode
// is cufile and cuFile cannot be used.
std::shared_ptr<detail::GdsEngine> gds_engine_for(const detail::GdsEngineSettings& settings);

}  // namespace zarrkit::gpu
