#include "stores/remote/retry.h"

#include <gtest/gtest.h>

#include <map>

namespace zarrkit::remote {
namespace {

using namespace std::chrono_literals;
using std::chrono::duration_cast;
using std::chrono::milliseconds;

// Time passes only when someone sleeps.
class FakeClock final : public Clock {
 public:
  TimePoint now() override { return now_; }
  void sleep_for(Duration d) override {
    sleeps.push_back(duration_cast<milliseconds>(d));
    now_ += d;
  }
  std::vector<milliseconds> sleeps;

 private:
  TimePoint now_{};
};

UniformRandom constant(double value) {
  return [value] { return value; };
}

// Answers each URL from a script of responses, one per try; the last one repeats.
class ScriptedTransport final : public HttpTransport {
 public:
  std::map<std::string, std::vector<HttpResponse>> script;
  std::map<std::string, int> tries;
  std::vector<std::size_t> batch_sizes;

  std::vector<HttpResponse> perform(std::span<const HttpRequest> requests) override {
    batch_sizes.push_back(requests.size());
    std::vector<HttpResponse> out;
    for (const HttpRequest& r : requests) {
      const auto& answers = script.at(r.url);
      const int n = tries[r.url]++;
      out.push_back(answers[std::min<std::size_t>(static_cast<std::size_t>(n), answers.size() - 1)]);
    }
    return out;
  }
};

HttpRequest request(std::string method, std::string url) {
  HttpRequest r;
  r.method = std::move(method);
  r.url = std::move(url);
  return r;
}

HttpResponse status(int code) {
  HttpResponse r;
  r.status = code;
  return r;
}

HttpResponse transport_failure(TransportError error) {
  HttpResponse r;
  r.error = error;
  r.error_message = "simulated";
  return r;
}

// Accepts 2xx, retries what retryable_status() says, fails the rest.
Verdict judge_by_status(std::size_t, HttpResponse& r) {
  if (auto v = transport_verdict(r)) return *v;
  if (r.status >= 200 && r.status < 300) return Verdict::accept();
  if (retryable_status(r.status)) return Verdict::retry("HTTP " + std::to_string(r.status));
  return Verdict::fail("HTTP " + std::to_string(r.status));
}

TEST(Backoff, FullJitterDoublesUpToTheCap) {
  FakeClock clock;
  RetryPolicy policy{.max_attempts = 8, .initial_delay = 100ms, .max_delay = 1000ms, .max_total = 3600s};
  Backoff top(policy, clock, constant(1.0));
  std::vector<milliseconds> delays;
  while (auto d = top.next_delay()) delays.push_back(duration_cast<milliseconds>(*d));
  EXPECT_EQ(delays, (std::vector<milliseconds>{100ms, 200ms, 400ms, 800ms, 1000ms, 1000ms, 1000ms}));
  EXPECT_EQ(top.attempts(), 8);

  Backoff half(policy, clock, constant(0.5));
  EXPECT_EQ(duration_cast<milliseconds>(*half.next_delay()), 50ms);
  EXPECT_EQ(duration_cast<milliseconds>(*half.next_delay()), 100ms);
  Backoff zero(policy, clock, constant(0.0));
  EXPECT_EQ(*zero.next_delay(), Clock::Duration::zero());  // full jitter may retry at once
}

TEST(Backoff, StopsAtTheTimeBudget) {
  FakeClock clock;
  RetryPolicy policy{.max_attempts = 100, .initial_delay = 100ms, .max_delay = 400ms, .max_total = 1000ms};
  Backoff backoff(policy, clock, constant(1.0));
  milliseconds slept{0};
  while (auto d = backoff.next_delay()) {
    clock.sleep_for(*d);
    slept += duration_cast<milliseconds>(*d);
  }
  // 100 + 200 + 400 = 700; a further 400 would end at 1100 > 1000.
  EXPECT_EQ(slept, 700ms);
  EXPECT_EQ(backoff.attempts(), 4);
}

TEST(PerformWithRetries, RetriesThrottlingUntilSuccess) {
  FakeClock clock;
  ScriptedTransport transport;
  transport.script["u"] = {status(503), status(500), transport_failure(TransportError::kReset), status(200)};
  const std::vector<HttpRequest> requests{request("GET", "u")};
  const RetryPolicy policy{.max_attempts = 5, .initial_delay = 10ms, .max_delay = 1000ms, .max_total = 60s};
  auto responses = perform_with_retries(transport, requests, judge_by_status, policy, clock, constant(1.0));
  EXPECT_EQ(responses.at(0).status, 200);
  EXPECT_EQ(transport.tries["u"], 4);
  EXPECT_EQ(clock.sleeps, (std::vector<milliseconds>{10ms, 20ms, 40ms}));
}

TEST(PerformWithRetries, OnlyTheFailedRequestsRunAgain) {
  FakeClock clock;
  ScriptedTransport transport;
  transport.script["a"] = {status(200)};
  transport.script["b"] = {status(503), status(200)};
  transport.script["c"] = {status(206)};
  const std::vector<HttpRequest> requests{request("GET", "a"), request("GET", "b"), request("GET", "c")};
  auto responses = perform_with_retries(transport, requests, judge_by_status, RetryPolicy{}, clock, constant(0.5));
  EXPECT_EQ(responses[0].status, 200);
  EXPECT_EQ(responses[1].status, 200);
  EXPECT_EQ(responses[2].status, 206);
  EXPECT_EQ(transport.batch_sizes, (std::vector<std::size_t>{3, 1}));
}

TEST(PerformWithRetries, TruncatedBodiesBecomeDataLossWhenTriesRunOut) {
  FakeClock clock;
  ScriptedTransport transport;
  transport.script["http://h/k?X-Amz-Signature=secret"] = {transport_failure(TransportError::kTruncated)};
  const std::vector<HttpRequest> requests{request("GET", "http://h/k?X-Amz-Signature=secret")};
  const RetryPolicy policy{.max_attempts = 3, .initial_delay = 1ms, .max_delay = 1ms, .max_total = 60s};
  try {
    perform_with_retries(transport, requests, judge_by_status, policy, clock, constant(1.0));
    FAIL() << "no error";
  } catch (const DataLossError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("GET http://h/k: truncated body"), std::string::npos) << message;
    EXPECT_NE(message.find("gave up after 3 tries"), std::string::npos) << message;
    EXPECT_EQ(message.find("secret"), std::string::npos) << message;  // no query strings in messages
  }
  EXPECT_EQ(transport.tries.begin()->second, 3);
}

TEST(PerformWithRetries, PermanentErrorsFailAtOnce) {
  FakeClock clock;
  ScriptedTransport transport;
  transport.script["u"] = {status(403)};
  const std::vector<HttpRequest> requests{request("PUT", "u")};
  EXPECT_THROW(perform_with_retries(transport, requests, judge_by_status, RetryPolicy{}, clock), IoError);
  EXPECT_EQ(transport.tries["u"], 1);
  EXPECT_TRUE(clock.sleeps.empty());

  transport.script["big"] = {transport_failure(TransportError::kTooLarge)};
  const std::vector<HttpRequest> big{request("GET", "big")};
  EXPECT_THROW(perform_with_retries(transport, big, judge_by_status, RetryPolicy{}, clock), ResourceExhaustedError);
  transport.script["dns"] = {transport_failure(TransportError::kResolve)};
  const std::vector<HttpRequest> dns{request("GET", "dns")};
  EXPECT_THROW(perform_with_retries(transport, dns, judge_by_status, RetryPolicy{}, clock), IoError);
  EXPECT_EQ(transport.tries["dns"], 1);
}

TEST(PerformWithRetries, TimeoutsAreRetriedWithinTheBudget) {
  FakeClock clock;
  ScriptedTransport transport;
  transport.script["u"] = {transport_failure(TransportError::kTimeout)};
  const std::vector<HttpRequest> requests{request("GET", "u")};
  const RetryPolicy policy{.max_attempts = 50, .initial_delay = 100ms, .max_delay = 1000ms, .max_total = 2000ms};
  EXPECT_THROW(perform_with_retries(transport, requests, judge_by_status, policy, clock, constant(1.0)), IoError);
  // 100 + 200 + 400 + 800 = 1500 ms of sleep; the next 1000 ms would pass 2000 ms.
  EXPECT_EQ(transport.tries["u"], 5);
}

TEST(PerformEachWithRetries, AcceptedAnswersAreHandedOverInTheirRoundRetriedOnesAfterTheirDelay) {
  FakeClock clock;
  ScriptedTransport transport;
  transport.script["a"] = {status(200)};
  transport.script["b"] = {status(503), status(503), status(200)};
  transport.script["c"] = {status(500), status(206)};
  const std::vector<HttpRequest> requests{request("GET", "a"), request("GET", "b"), request("GET", "c")};
  std::vector<std::pair<std::size_t, std::size_t>> handed;  // (request, sleeps before it was handed over)
  perform_each_with_retries(
      transport, requests, judge_by_status,
      [&](std::size_t i, HttpResponse& r) {
        EXPECT_LT(r.status, 300);
        handed.emplace_back(i, clock.sleeps.size());
      },
      RetryPolicy{}, clock, constant(0.5));
  EXPECT_EQ(handed, (std::vector<std::pair<std::size_t, std::size_t>>{{0, 0}, {2, 1}, {1, 2}}));
  EXPECT_EQ(transport.batch_sizes, (std::vector<std::size_t>{3, 2, 1}));

  // A handler that throws ends the call: nothing is retried, no further answer handed over.
  transport.tries.clear();
  transport.batch_sizes.clear();
  int calls = 0;
  EXPECT_THROW(perform_each_with_retries(
                   transport, requests, judge_by_status,
                   [&](std::size_t, HttpResponse&) {
                     ++calls;
                     throw std::runtime_error("the reader failed");
                   },
                   RetryPolicy{}, clock, constant(0.5)),
               std::runtime_error);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(transport.batch_sizes, (std::vector<std::size_t>{3}));
}

}  // namespace
}  // namespace zarrkit::remote
