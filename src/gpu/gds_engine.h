// The engine behind GdsStore's device reads (stores/gds_engine.h), registered by
// install_gpu_support():
//   - I/O threads (GdsEngineSettings::threads), each with its own CUDA stream and two pinned
//     staging buffers of one piece each;
//   - a request is cut into pieces (plan_pieces) that the threads take from one queue;
//   - compat path: a thread preads a piece into a free staging buffer, queues its copy to the
//     device on its stream and records an event, and goes on to its next piece while the
//     copy runs; a buffer is reused once its event has completed;
//   - cuFile path: a thread reads each segment with cuFileRead straight into device memory
//     (cuFile stages through its own buffers in its compatibility mode). A file cuFile will
//     not register, or a read it refuses with a cuFile error, goes through the compat path.
// Engines are shared by every store with the same settings, and live as long as the process.
#pragma once

#include <memory>

#include "stores/gds_engine.h"

namespace zarrkit::gpu {

// The engine for `settings`. UnsupportedError without a usable device, or when the mode
// is cufile and cuFile cannot be used.
std::shared_ptr<detail::GdsEngine> gds_engine_for(const detail::GdsEngineSettings& settings);

}  // namespace zarrkit::gpu
