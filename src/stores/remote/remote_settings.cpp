#include "stores/remote/remote_settings.h"

#include <unistd.h>

#include <algorithm>

namespace zarrkit::remote {

TransportRef::TransportRef(std::shared_ptr<HttpTransport> injected)
    : pid_(::getpid()), transport_(std::move(injected)), injected_(true) {}

TransportRef::TransportRef(TransportOptions options, bool shared) : options_(std::move(options)), shared_(shared) {}

std::shared_ptr<HttpTransport> TransportRef::make() const {
  return shared_ ? shared_transport(options_) : make_curl_transport(options_);
}

HttpTransport& TransportRef::get() {
  const pid_t pid = ::getpid();
  if (pid_.load(std::memory_order_acquire) == pid) return *transport_;
  std::lock_guard lock(mutex_);
  if (pid_.load() != pid) {
    if (transport_ && !injected_) {
      // Made in the parent: keep it alive for good, so that its destructor (which would join
      // a thread that is not in this process) never runs here.
      new std::shared_ptr<HttpTransport>(std::move(transport_));
    }
    if (!injected_ || !transport_) transport_ = make();
    pid_.store(pid, std::memory_order_release);
  }
  return *transport_;
}

TransportOptions transport_options(const RemoteConfig& c) {
  TransportOptions t;
  t.concurrency = std::max<std::size_t>(c.concurrency, 1);
  t.event_loops = std::min<std::size_t>(c.event_loops, 64);
  t.connect_timeout = c.connect_timeout;
  t.stall_timeout = c.stall_timeout;
  t.request_timeout = c.request_timeout;
  t.verify_tls = c.verify_tls;
  t.ca_bundle = c.ca_bundle;
  return t;
}

RemoteSettings resolve_remote_settings(const RemoteOptions& o, std::shared_ptr<HttpTransport> transport) {
  const RemoteConfig& c = current_config().remote;
  RemoteSettings s;
  s.retry.max_attempts = o.max_attempts ? std::max(*o.max_attempts, 1) : std::clamp(c.max_attempts, 1, 100);
  s.retry.initial_delay = o.retry_initial_delay.value_or(c.retry_initial_delay);
  s.retry.max_delay = o.retry_max_delay.value_or(c.retry_max_delay);
  s.retry.max_total = o.retry_total.value_or(c.retry_total);
  s.coalesce_gap = o.coalesce_gap_bytes.value_or(c.coalesce_gap_bytes);
  s.coalesce_max = std::max<std::uint64_t>(o.coalesce_max_bytes.value_or(c.coalesce_max_bytes), 1);
  TransportOptions t = transport_options(c);
  if (o.concurrency) t.concurrency = std::max<std::size_t>(*o.concurrency, 1);
  if (o.connect_timeout) t.connect_timeout = *o.connect_timeout;
  if (o.stall_timeout) t.stall_timeout = *o.stall_timeout;
  if (o.request_timeout) t.request_timeout = *o.request_timeout;
  s.concurrency = t.concurrency;
  if (transport) {
    s.transport = std::make_unique<TransportRef>(std::move(transport));
  } else {
    const bool shared = !o.concurrency && !o.connect_timeout && !o.stall_timeout && !o.request_timeout;
    s.transport = std::make_unique<TransportRef>(std::move(t), shared);
  }
  return s;
}

}  // namespace zarrkit::remote
