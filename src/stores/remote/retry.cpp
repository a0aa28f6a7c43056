#include "stores/remote/retry.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include <fmt/format.h>

namespace zarrkit::remote {
namespace {

class SystemClock final : public Clock {
 public:
  TimePoint now() override { return std::chrono::steady_clock::now(); }
  void sleep_for(Duration d) override { std::this_thread::sleep_for(d); }
};

}  // namespace

Clock& Clock::system() {
  static SystemClock clock;
  return clock;
}

UniformRandom default_random() {
  return [] {
    thread_local std::mt19937_64 engine{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
  };
}

Backoff::Backoff(const RetryPolicy& policy, Clock& clock, UniformRandom random)
    : policy_(policy), clock_(clock), random_(std::move(random)), start_(clock.now()) {}

Clock::Duration Backoff::elapsed() const { return clock_.now() - start_; }

std::optional<Clock::Duration> Backoff::next_delay() {
  if (attempts_ >= policy_.max_attempts) return std::nullopt;
  // initial * 2^(attempts-1), capped; computed in double so that it cannot overflow.
  const double ceiling_ms =
      std::min(static_cast<double>(policy_.max_delay.count()),
               static_cast<double>(policy_.initial_delay.count()) * std::ldexp(1.0, std::min(attempts_ - 1, 60)));
  const double draw = std::clamp(random_(), 0.0, 1.0);
  const auto delay = std::chrono::duration_cast<Clock::Duration>(
      std::chrono::duration<double, std::milli>(ceiling_ms * draw));
  if (elapsed() + delay > policy_.max_total) return std::nullopt;
  ++attempts_;
  return delay;
}

bool retryable_status(int status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

std::optional<Verdict> transport_verdict(const HttpResponse& response) {
  const std::string why = fmt::format("{} ({})", transport_error_name(response.error), response.error_message);
  switch (response.error) {
    case TransportError::kNone:
      return std::nullopt;
    case TransportError::kConnect:
    case TransportError::kTimeout:
    case TransportError::kReset:
      return Verdict::retry(why);
    case TransportError::kTruncated:
      return Verdict::retry(why, ErrorCode::kDataLoss);
    case TransportError::kTooLarge:
      return Verdict::fail(why, ErrorCode::kResourceExhausted);
    case TransportError::kResolve:
    case TransportError::kTls:
    case TransportError::kOther:
      return Verdict::fail(why);
  }
  return Verdict::fail(why);
}

std::string url_for_message(std::string_view url) {
  return std::string(url.substr(0, url.find('?')));
}

void perform_each_with_retries(HttpTransport& transport, std::span<const HttpRequest> requests, const Judge& judge,
                               const AcceptedHandler& on_accepted, const RetryPolicy& policy, Clock& clock,
                               const UniformRandom& random) {
  std::vector<std::size_t> pending(requests.size());
  for (std::size_t i = 0; i < pending.size(); ++i) pending[i] = i;
  Backoff backoff(policy, clock, random);
  std::vector<HttpRequest> round;
  while (!pending.empty()) {
    round.clear();
    for (std::size_t i : pending) round.push_back(requests[i]);
    std::vector<std::size_t> again;
    std::optional<Verdict> last_retry;
    transport.perform_each(round, [&](std::size_t j, HttpResponse& response) {
      const std::size_t i = pending[j];
      Verdict v = judge(i, response);
      if (v.kind == Verdict::Kind::kFail) {
        throw_error(v.code, fmt::format("{} {}: {}", requests[i].method, url_for_message(requests[i].url), v.reason));
      }
      if (v.kind == Verdict::Kind::kRetry) {
        again.push_back(i);
        last_retry = std::move(v);
        return;
      }
      on_accepted(i, response);
    });
    if (again.empty()) break;
    const std::optional<Clock::Duration> delay = backoff.next_delay();
    if (!delay) {
      const HttpRequest& r = requests[again.back()];
      const double seconds = std::chrono::duration<double>(backoff.elapsed()).count();
      throw_error(last_retry->code, fmt::format("{} {}: {} (gave up after {} tries in {:.1f} s)", r.method,
                                                url_for_message(r.url), last_retry->reason, backoff.attempts(),
                                                seconds));
    }
    clock.sleep_for(*delay);
    // In request order, as the first round was (answers arrive in any order).
    std::sort(again.begin(), again.end());
    pending = std::move(again);
  }
}

std::vector<HttpResponse> perform_with_retries(HttpTransport& transport, std::span<const HttpRequest> requests,
                                               const Judge& judge, const RetryPolicy& policy, Clock& clock,
                                               const UniformRandom& random) {
  std::vector<HttpResponse> results(requests.size());
  perform_each_with_retries(
      transport, requests, judge, [&](std::size_t i, HttpResponse& response) { results[i] = std::move(response); },
      policy, clock, random);
  return results;
}

}  // namespace zarrkit::remote
