// Retrying requests that failed for reasons that may pass: exponential backoff with full
// jitter (a delay drawn uniformly from [0, min(max_delay, initial_delay * 2^n)) before try
// n+1), bounded both in tries and in total time. A clock and a random source are injected
// so that tests run instantly and deterministically.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stores/remote/http_transport.h"
#include "zarrkit/error.h"

namespace zarrkit::remote {

struct RetryPolicy {
  int max_attempts = 8;  // tries in all, the first included
  std::chrono::milliseconds initial_delay{100};
  std::chrono::milliseconds max_delay{5'000};
  // No retry starts once this much time has passed since the first try.
  std::chrono::milliseconds max_total{60'000};
};

class Clock {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual TimePoint now() = 0;
  virtual void sleep_for(Duration d) = 0;
  // The real, steady clock.
  static Clock& system();
};

// A uniform draw from [0, 1).
using UniformRandom = std::function<double()>;
UniformRandom default_random();

// The schedule of one operation's retries.
class Backoff {
 public:
  Backoff(const RetryPolicy& policy, Clock& clock, UniformRandom random = default_random());
  // After a failed try: the delay before the next, or nullopt when the tries or the time
  // budget are spent (a retry that would start past the budget is not made).
  std::optional<Clock::Duration> next_delay();
  int attempts() const { return attempts_; }  // tries made so far
  Clock::Duration elapsed() const;

 private:
  RetryPolicy policy_;
  Clock& clock_;
  UniformRandom random_;
  Clock::TimePoint start_;
  int attempts_ = 1;
};

// What to do with one response.
struct Verdict {
  enum class Kind { kAccept, kRetry, kFail };
  Kind kind = Kind::kAccept;
  ErrorCode code = ErrorCode::kIo;  // the error to raise for kFail, or for kRetry once retries run out
  std::string reason;

  static Verdict accept() { return {}; }
  static Verdict retry(std::string reason, ErrorCode code = ErrorCode::kIo) {
    return {Kind::kRetry, code, std::move(reason)};
  }
  static Verdict fail(std::string reason, ErrorCode code = ErrorCode::kIo) {
    return {Kind::kFail, code, std::move(reason)};
  }
};

// The verdict on transport failures alone (connection refused or reset, timeouts, truncated
// bodies are retried; a truncated body becomes DataLossError when retries run out), or
// nullopt when the response arrived whole and the HTTP status is for the caller to judge.
std::optional<Verdict> transport_verdict(const HttpResponse& response);
// True for statuses that mean "try again": 408, 429, 500, 502, 503, 504.
bool retryable_status(int status);

// Judges a response to requests[index]; may fix the response up (for instance slice it).
using Judge = std::function<Verdict(std::size_t index, HttpResponse& response)>;

// Runs the requests, retrying those whose verdict is kRetry (all such requests of a round
// wait one backoff delay, then run again together), until each is accepted. Throws the
// verdict's error type, with the method, the URL, the reason and the tries made, for a kFail
// or for a kRetry that runs out of tries or time.
std::vector<HttpResponse> perform_with_retries(HttpTransport& transport, std::span<const HttpRequest> requests,
                                               const Judge& judge, const RetryPolicy& policy,
                                               Clock& clock = Clock::system(),
                                               const UniformRandom& random = default_random());

// Like perform_with_retries, but hands each accepted response to `on_accepted` (the index
// of its request, the response; the handler may move the body out) on the calling thread
// as soon as it is judged, while the other requests still run. Each round streams: the
// first round's answers are handed over as they arrive, retried requests after their
// round's backoff delay. Throws as perform_with_retries does; responses handed over before
// the failure stay handed over.
using AcceptedHandler = std::function<void(std::size_t index, HttpResponse& response)>;
void perform_each_with_retries(HttpTransport& transport, std::span<const HttpRequest> requests, const Judge& judge,
                               const AcceptedHandler& on_accepted, const RetryPolicy& policy,
                               Clock& clock = Clock::system(), const UniformRandom& random = default_random());

// The URL without its query string, for error messages (queries may carry signatures).
std::string url_for_message(std::string_view url);

}  // namespace zarrkit::remote
