// RemoteOptions (public) and Config::remote turned into the transport and retry settings
// the stores use.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

#include "stores/remote/http_transport.h"
#include "stores/remote/retry.h"
#include "zarrkit/config.h"
#include "zarrkit/stores/remote_options.h"

namespace zarrkit::remote {

// The transport a store uses, made again in a forked child: the parent's event-loop thread
// does not exist there, and its locks may be held forever. The parent's transport is then
// left alone (never destroyed in the child). An injected transport (tests) is kept as is.
class TransportRef {
 public:
  explicit TransportRef(std::shared_ptr<HttpTransport> injected);  // used as it is
  // shared: the transport every store with these options shares; else one of its own.
  TransportRef(TransportOptions options, bool shared);

  HttpTransport& get();

 private:
  std::shared_ptr<HttpTransport> make() const;

  std::mutex mutex_;
  std::atomic<pid_t> pid_{0};
  std::shared_ptr<HttpTransport> transport_;
  TransportOptions options_;
  bool shared_ = false;
  bool injected_ = false;
};

struct RemoteSettings {
  std::unique_ptr<TransportRef> transport;
  RetryPolicy retry;
  std::uint64_t coalesce_gap = 0;
  std::uint64_t coalesce_max = 0;
  // The transport's requests in flight (StoreCapabilities::requests_in_flight).
  std::size_t concurrency = 0;
};

// Unset fields of `options` take current_config().remote (read now: a store is opened on the
// thread whose settings it keeps). `transport`, when given, is used as it is (tests); else
// the transport shared by stores opened under the same settings when no transport field of
// `options` is set, else a transport of the store's own.
RemoteSettings resolve_remote_settings(const RemoteOptions& options, std::shared_ptr<HttpTransport> transport);

// The transport options of `settings`.
TransportOptions transport_options(const RemoteConfig& settings);

}  // namespace zarrkit::remote
