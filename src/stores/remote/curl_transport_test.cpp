// CurlTransport against a small HTTP/1.1 server on 127.0.0.1 run by the test: perform_each
// hands each response over as soon as it is complete (while a slower one is still held by
// the server), and a handler that throws stops the requests not yet started.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "stores/remote/http_transport.h"

namespace zarrkit::remote {
namespace {

using namespace std::chrono_literals;

// Answers GET /NAME with the body "body of NAME" (keep-alive). /slow and /held... answer only
// once the test calls release() (or after 10 s, so that a failing test ends); /folded...
// answer with a first header line that starts with a blank.
class LocalServer {
 public:
  LocalServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::listen(listener_, 64) != 0 || ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      throw std::runtime_error("cannot listen on 127.0.0.1");
    }
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  ~LocalServer() {
    stopping_ = true;
    release();
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    acceptor_.join();
    {
      std::lock_guard lock(mutex_);
      for (int fd : connections_) ::shutdown(fd, SHUT_RDWR);
    }
    for (std::thread& t : handlers_) t.join();
    for (int fd : connections_) ::close(fd);
  }

  std::string url(const std::string& name) const { return "http://127.0.0.1:" + std::to_string(port_) + "/" + name; }

  void release() {
    {
      std::lock_guard lock(mutex_);
      released_ = true;
    }
    changed_.notify_all();
  }
  // True until the answer to /slow has been sent.
  bool slow_is_held() { return !slow_answered_.load(); }
  int requests() const { return requests_.load(); }

 private:
  void accept_loop() {
    for (;;) {
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      std::lock_guard lock(mutex_);
      if (stopping_) {
        ::close(fd);
        return;
      }
      connections_.push_back(fd);
      handlers_.emplace_back([this, fd] { serve(fd); });
    }
  }

  void serve(int fd) {
    std::string pending;
    char buffer[4096];
    for (;;) {
      std::size_t end;
      while ((end = pending.find("\r\n\r\n")) == std::string::npos) {
        const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
        if (n <= 0) return;
        pending.append(buffer, static_cast<std::size_t>(n));
      }
      const std::string head = pending.substr(0, end);
      pending.erase(0, end + 4);
      ++requests_;
      const std::size_t path = head.find(' ') + 2;  // after "GET /"
      const std::string name = head.substr(path, head.find(' ', path) - path);
      if (name == "slow" || name.starts_with("held")) {
        std::unique_lock lock(mutex_);
        changed_.wait_for(lock, 10s, [&] { return released_; });
      }
      const std::string body = "body of " + name;
      // /folded...: the first header line starts with a blank (an obs-fold continuation with
      // nothing before it to continue).
      const std::string folded = name.starts_with("folded") ? "  X-Folded: yes\r\n" : "";
      const std::string answer = "HTTP/1.1 200 OK\r\n" + folded + "Content-Length: " + std::to_string(body.size()) +
                                 "\r\n\r\n" + body;
      if (name == "slow") slow_answered_ = true;  // before sending: the client may have it at once
      if (::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(answer.size())) return;
    }
  }

  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> requests_{0};
  std::thread acceptor_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool released_ = false;
  std::atomic<bool> slow_answered_{false};
  std::vector<int> connections_;
  std::vector<std::thread> handlers_;
};

std::vector<HttpRequest> gets(const LocalServer& server, std::initializer_list<const char*> names) {
  std::vector<HttpRequest> requests;
  for (const char* name : names) {
    HttpRequest r;
    r.url = server.url(name);
    requests.push_back(std::move(r));
  }
  return requests;
}

std::string body_text(const HttpResponse& r) { return r.body.empty() ? "" : std::string(as_chars(r.body.view())); }

std::shared_ptr<HttpTransport> transport_with(std::size_t concurrency, std::size_t event_loops) {
  TransportOptions options;
  options.concurrency = concurrency;
  options.event_loops = event_loops;
  return make_curl_transport(options);
}

// Threads of this process named as the transport names its event loops.
int event_loop_threads() {
  int n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name) && name == "zarrkit-http") ++n;
  }
  return n;
}

class CurlTransportLoops : public ::testing::TestWithParam<std::size_t> {};
INSTANTIATE_TEST_SUITE_P(EventLoops, CurlTransportLoops, ::testing::Values(1, 3));

TEST_P(CurlTransportLoops, PerformEachHandsOverEachResponseWhileOthersAreStillOnTheWay) {
  LocalServer server;
  const int loops_before = event_loop_threads();
  auto transport = transport_with(4, GetParam());
  const std::vector<HttpRequest> requests = gets(server, {"slow", "fast1", "fast2"});
  std::vector<std::string> handed;
  int handed_while_slow_was_held = 0;
  transport->perform_each(requests, [&](std::size_t i, HttpResponse& response) {
    ASSERT_TRUE(response.ok()) << response.error_message;
    EXPECT_EQ(response.status, 200);
    EXPECT_EQ(body_text(response), "body of " + std::string(i == 0 ? "slow" : i == 1 ? "fast1" : "fast2"));
    handed.push_back(body_text(response));
    if (i != 0 && server.slow_is_held()) ++handed_while_slow_was_held;
    if (handed.size() == 2) server.release();  // both fast ones are in: let the slow one go
  });
  EXPECT_EQ(handed_while_slow_was_held, 2);
  ASSERT_EQ(handed.size(), 3u);
  EXPECT_EQ(handed.back(), "body of slow");

  // perform() still waits for all and answers in request order.
  const std::vector<HttpResponse> all = transport->perform(gets(server, {"a", "slow", "b"}));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(body_text(all[0]), "body of a");
  EXPECT_EQ(body_text(all[1]), "body of slow");
  EXPECT_EQ(body_text(all[2]), "body of b");
  // Each loop received some of them (requests are dealt out in turn).
  EXPECT_EQ(event_loop_threads() - loops_before, static_cast<int>(GetParam()));
}

TEST_P(CurlTransportLoops, AHandlerThatThrowsStopsTheRequestsNotYetStarted) {
  LocalServer server;
  // One request at a time per loop: the others wait in the queues. The server holds the
  // "held" ones, so that at most one per loop is on the way when the handler throws.
  auto transport = transport_with(GetParam(), GetParam());
  const std::vector<HttpRequest> requests = gets(server, {"a", "held1", "held2", "held3", "held4", "held5", "held6"});
  std::thread releaser([&] {
    std::this_thread::sleep_for(200ms);
    server.release();
  });
  const auto started = std::chrono::steady_clock::now();
  int calls = 0;
  EXPECT_THROW(transport->perform_each(requests,
                                       [&](std::size_t, HttpResponse&) {
                                         ++calls;
                                         throw std::runtime_error("the reader failed");
                                       }),
               std::runtime_error);
  releaser.join();
  EXPECT_EQ(calls, 1);  // no response is handed over after the failure
  // "a", and at most one held request per loop; the queued ones end at once, not one per
  // turn of an event loop (which waits up to a second when nothing happens).
  EXPECT_LE(server.requests(), 1 + static_cast<int>(GetParam()));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 900ms);
  // The transport goes on serving other batches.
  const std::vector<HttpResponse> after = transport->perform(gets(server, {"g"}));
  EXPECT_EQ(body_text(after[0]), "body of g");
}

// libcurl 7.88 (Debian 12) keeps a pointer to the previous response's last header across
// curl_easy_reset: a reused easy handle then unfolds a leading-blank header line into freed
// memory (a heap use-after-free under ASan; found by fuzz_http). Every answer must come back,
// one after another on one loop, whatever the libcurl.
TEST(CurlTransportHeaders, AFirstHeaderLineStartingWithABlankAfterAnOrdinaryAnswer) {
  LocalServer server;
  auto transport = transport_with(1, 1);
  for (const char* name : {"plain1", "folded1", "plain2", "folded2", "folded3", "plain3"}) {
    const std::vector<HttpResponse> r = transport->perform(gets(server, {name}));
    ASSERT_EQ(r.size(), 1u);
    if (std::string_view(name).starts_with("plain")) {
      ASSERT_TRUE(r[0].ok()) << name << ": " << r[0].error_message;
      EXPECT_EQ(body_text(r[0]), "body of " + std::string(name));
    } else if (r[0].ok()) {
      // libcurl takes the blank line's header as it stands (drops the blanks).
      EXPECT_EQ(r[0].status, 200) << name;
      EXPECT_EQ(body_text(r[0]), "body of " + std::string(name));
    } else {
      // Or refuses the answer: a transport error with libcurl's reason.
      EXPECT_FALSE(r[0].error_message.empty()) << name;
    }
  }
  EXPECT_EQ(server.requests(), 6);
}

TEST(CurlTransportDefaults, OneEventLoopPerFourHardwareThreadsFromOneToFour) {
  EXPECT_EQ(default_event_loops(0), 1u);  // hardware_concurrency() may not know
  EXPECT_EQ(default_event_loops(2), 1u);
  EXPECT_EQ(default_event_loops(7), 1u);
  EXPECT_EQ(default_event_loops(8), 2u);
  EXPECT_EQ(default_event_loops(12), 3u);
  EXPECT_EQ(default_event_loops(16), 4u);
  EXPECT_EQ(default_event_loops(128), 4u);
}

}  // namespace
}  // namespace zarrkit::remote
