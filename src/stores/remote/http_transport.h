// HTTP requests, many in flight at once. HttpTransport is the seam between the remote
// stores and the network: CurlTransport runs requests on libcurl's multi interface, and
// tests substitute a scripted fake.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zarrkit/buffer.h"

namespace zarrkit::remote {

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, PUT, POST, DELETE
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  ByteView body;  // PUT and POST; the caller keeps it alive until perform() returns
  bool follow_redirects = true;
};

// How a request failed before a complete HTTP response arrived.
enum class TransportError : std::uint8_t {
  kNone,
  kConnect,    // could not connect (refused, unreachable)
  kResolve,    // host name not found
  kTimeout,    // connect timeout, stall (no bytes for too long) or request timeout
  kReset,      // connection reset or closed, nothing or garbage received
  kTruncated,  // the body ended before its announced length
  kTooLarge,   // the body exceeded the transport's limit
  kTls,        // TLS handshake or certificate failure
  kOther,
};

struct HttpResponse {
  TransportError error = TransportError::kNone;
  std::string error_message;  // the transport's words when error != kNone
  int status = 0;             // the HTTP status of the final response
  std::vector<std::pair<std::string, std::string>> headers;  // names lower case
  Buffer body;                // host memory
  std::string url;            // where the final response came from (after redirects)

  bool ok() const { return error == TransportError::kNone; }
  // The first header with this (lower-case) name.
  std::optional<std::string_view> header(std::string_view name) const;
};

struct TransportOptions {
  // Requests in flight at once, over all callers (each may open a connection).
  std::size_t concurrency = 64;
  // Event-loop threads that receive the responses, the requests in flight shared out
  // between them (one thread copies every body it receives: on many cores one becomes the
  // limit). 0: default_event_loops() of this machine.
  std::size_t event_loops = 0;
  std::chrono::milliseconds connect_timeout{10'000};
  // A transfer that moves no bytes for this long fails with kTimeout.
  std::chrono::milliseconds stall_timeout{30'000};
  // Whole-request limit (0: none). Large values take time; stalls are caught above.
  std::chrono::milliseconds request_timeout{0};
  std::uint64_t max_body_bytes = std::uint64_t{1} << 36;  // 64 GiB
  int max_redirects = 8;
  bool verify_tls = true;
  // A PEM file of the certificate authorities to trust instead of the system's (a private
  // CA, a self-signed server); empty: the system's.
  std::string ca_bundle;

  bool operator==(const TransportOptions&) const = default;
};
// One event loop per 4 hardware threads, from 1 to 4: 2 on 8 threads, 4 on 16 or more. On
// 16 cores, reading 256 MiB from nginx on loopback, 4 loops took 0.77-0.90x the time of 2
// (bench/remote/RESULTS.md); a loop that waits for nothing costs nothing.
std::size_t default_event_loops(unsigned hardware_threads);


class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Runs every request (concurrently, up to the transport's limit) and waits for all of
  // them. Never throws for network failures: they are reported in each response.
  virtual std::vector<HttpResponse> perform(std::span<const HttpRequest> requests) = 0;

  // Runs every request like perform(), but hands each response to `on_response` (index,
  // response; the handler may move the body out) on the calling thread as soon as that
  // response is complete, in the order they complete, and returns when all have been
  // handed over. Callers start work on the first answers while the others still arrive.
  // If the handler throws, requests not yet started are dropped, the running ones are
  // waited for (their answers are not handed over), and the exception is rethrown.
  // The default runs perform() and hands the responses over in request order.
  using ResponseHandler = std::function<void(std::size_t index, HttpResponse& response)>;
  virtual void perform_each(std::span<const HttpRequest> requests, const ResponseHandler& on_response);
};

// libcurl multi: one event-loop thread per transport runs every transfer, so connections
// (and TLS sessions, DNS results) are reused across requests and callers.
std::shared_ptr<HttpTransport> make_curl_transport(const TransportOptions& options);

// The transport for `options`, created at the first request for them and shared by every
// store opened with the same ones, so that they share connections. Kept for the life of
// the process (one per distinct options asked for: in practice the settings' few).
std::shared_ptr<HttpTransport> shared_transport(const TransportOptions& options);

std::string_view transport_error_name(TransportError error);

}  // namespace zarrkit::remote
