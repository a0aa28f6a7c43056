#include "stores/remote/remote_settings.h"

#include <unistd.h>

namespace zarrkit::remote {

TransportRef::TransportRef(std::shared_ptr<HttpTransport> injected)
    : pid_(::getpid()), transport_(std::move(injected)), injected_(true) {}

TransportRef::TransportRef(std::optional<TransportOptions> own) : own_options_(std::move(own)) {}

std::shared_ptr<HttpTransport> TransportRef::make() const {
  return own_options_ ? make_curl_transport(*own_options_) : shared_transport();
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

RemoteSettings resolve_remote_settings(const RemoteOptions& o, std::shared_ptr<HttpTransport> transport) {
  RemoteSettings s;
  s.retry = retry_policy_from_environment();
  if (o.max_attempts) s.retry.max_attempts = std::max(*o.max_attempts, 1);
  if (o.retry_initial_delay) s.retry.initial_delay = *o.retry_initial_delay;
  if (o.retry_max_delay) s.retry.max_delay = *o.retry_max_delay;
  if (o.retry_total) s.retry.max_total = *o.retry_total;
  s.coalesce_gap = o.coalesce_gap_bytes;
  s.coalesce_max = std::max<std::uint64_t>(o.coalesce_max_bytes, 1);
  s.concurrency = std::max<std::size_t>(o.concurrency.value_or(transport_options_from_environment().concurrency), 1);
  if (transport) {
    s.transport = std::make_unique<TransportRef>(std::move(transport));
  } else if (!o.concurrency && !o.connect_timeout && !o.stall_timeout && !o.request_timeout) {
    s.transport = std::make_unique<TransportRef>(std::optional<TransportOptions>());
  } else {
    TransportOptions t = transport_options_from_environment();
    if (o.concurrency) t.concurrency = std::max<std::size_t>(*o.concurrency, 1);
    if (o.connect_timeout) t.connect_timeout = *o.connect_timeout;
    if (o.stall_timeout) t.stall_timeout = *o.stall_timeout;
    if (o.request_timeout) t.request_timeout = *o.request_timeout;
    s.transport = std::make_unique<TransportRef>(std::optional<TransportOptions>(t));
  }
  return s;
}

}  // namespace zarrkit::remote
