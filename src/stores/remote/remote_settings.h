// RemoteOptions (public) turned into the transport and retry settings the stores use.
#pragma once

#include <memory>

#include "stores/remote/http_transport.h"
#include "stores/remote/retry.h"
#include "zarrkit/stores/remote_options.h"

namespace zarrkit::remote {

struct RemoteSettings {
  std::shared_ptr<HttpTransport> transport;
  RetryPolicy retry;
  std::uint64_t coalesce_gap = 0;
  std::uint64_t coalesce_max = 0;
};

// `transport`, when given, is used as it is (tests); else the shared transport when no
// transport field of `options` is set, else a transport of the store's own.
RemoteSettings resolve_remote_settings(const RemoteOptions& options, std::shared_ptr<HttpTransport> transport);

}  // namespace zarrkit::remote
