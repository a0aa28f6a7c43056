#include "stores/remote/remote_settings.h"

namespace zarrkit::remote {

RemoteSettings resolve_remote_settings(const RemoteOptions& o, std::shared_ptr<HttpTransport> transport) {
  RemoteSettings s;
  s.retry = retry_policy_from_environment();
  if (o.max_attempts) s.retry.max_attempts = std::max(*o.max_attempts, 1);
  if (o.retry_initial_delay) s.retry.initial_delay = *o.retry_initial_delay;
  if (o.retry_max_delay) s.retry.max_delay = *o.retry_max_delay;
  if (o.retry_total) s.retry.max_total = *o.retry_total;
  s.coalesce_gap = o.coalesce_gap_bytes;
  s.coalesce_max = std::max<std::uint64_t>(o.coalesce_max_bytes, 1);
  if (transport) {
    s.transport = std::move(transport);
  } else if (!o.concurrency && !o.connect_timeout && !o.stall_timeout && !o.request_timeout) {
    s.transport = shared_transport();
  } else {
    TransportOptions t = transport_options_from_environment();
    if (o.concurrency) t.concurrency = std::max<std::size_t>(*o.concurrency, 1);
    if (o.connect_timeout) t.connect_timeout = *o.connect_timeout;
    if (o.stall_timeout) t.stall_timeout = *o.stall_timeout;
    if (o.request_timeout) t.request_timeout = *o.request_timeout;
    s.transport = make_curl_transport(t);
  }
  return s;
}

}  // namespace zarrkit::remote
