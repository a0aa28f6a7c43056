// CurlTransport: every transfer runs on one event-loop thread that owns a libcurl multi
// handle. Callers queue requests and wait; the loop keeps at most `concurrency` transfers
// active, reuses easy handles (where libcurl allows it: easy_handles_reusable) and (through
// the multi handle's cache) connections, and hands each finished response back to its caller.
#include <curl/curl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "stores/remote/http_transport.h"
#include "zarrkit/error.h"

namespace zarrkit::remote {
namespace {

// Bodies announcing more than this are still read, but memory grows as bytes arrive rather
// than being reserved up front from a length the server claims.
constexpr std::size_t kMaxUpfrontReserve = std::size_t{64} << 20;
constexpr std::size_t kInitialCapacity = std::size_t{64} << 10;
// libcurl's receive buffer (16 KiB by default): each fill is a recv, a pass through the
// multi loop and a call of on_body, so a chunk of a few MiB took hundreds of them on the
// transport thread. Larger reads cut those to a few dozen.
constexpr long kReceiveBufferBytes = 256L << 10;

// Whether a finished easy handle may serve the next transfer. libcurl before 8.1.0 keeps, across
// curl_easy_reset, a pointer to the last header of the handle's previous response after
// freeing it (curl PR 11103): a response whose first header line starts with a blank (an
// obs-fold continuation) then makes libcurl read and reallocate freed memory. Those versions
// get a fresh handle per transfer; connections are still reused through the multi handle.
bool easy_handles_reusable() {
  static const bool reusable = curl_version_info(CURLVERSION_NOW)->version_num >= 0x080100;
  return reusable;
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw IoError("libcurl failed to initialise");
  });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

// The requests of one perform() or perform_each() call, on the caller's stack until all
// are complete.
struct Batch {
  std::mutex mutex;
  std::condition_variable done;
  std::size_t remaining = 0;
  // perform_each: the caller is woken for each complete response, whose index lands here.
  bool streaming = false;
  std::vector<std::size_t> ready;
  // The caller's handler failed: transfers not yet started are completed unstarted.
  std::atomic<bool> cancelled{false};
};

// One request's state while it runs.
struct Transfer {
  const HttpRequest* request = nullptr;
  HttpResponse* response = nullptr;
  Batch* batch = nullptr;
  std::size_t index = 0;  // in the batch
  std::uint64_t max_body = 0;

  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  char error_buffer[CURL_ERROR_SIZE] = {};

  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<std::uint64_t> content_length;
  Buffer body;
  std::size_t body_size = 0;
  bool too_large = false;

  // A new response begins (after a redirect or a 100 Continue): forget the previous one.
  void reset_response() {
    headers.clear();
    content_length.reset();
    body = Buffer();
    body_size = 0;
  }

  bool append(const char* data, std::size_t n) {
    if (n == 0) return true;
    if (body_size + n > max_body) {
      too_large = true;
      return false;
    }
    if (body_size + n > body.size()) {
      std::size_t capacity = body.size() == 0 && content_length ? static_cast<std::size_t>(std::min<std::uint64_t>(
                                                                      *content_length, kMaxUpfrontReserve))
                                                                : body.size() * 2;
      capacity = std::max({capacity, kInitialCapacity, body_size + n});
      Buffer grown = Buffer::allocate(capacity);
      if (body_size > 0) std::memcpy(grown.data(), body.data(), body_size);
      body = std::move(grown);
    }
    std::memcpy(body.data() + body_size, data, n);
    body_size += n;
    return true;
  }
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  return transfer->append(data, n) ? n : 0;  // 0 aborts the transfer
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  std::string_view line(data, n);
  if (line.starts_with("HTTP/")) {
    transfer->reset_response();
    return n;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;  // the blank line after the headers
  std::string name = lower(trim(line.substr(0, colon)));
  std::string_view value = trim(line.substr(colon + 1));
  if (name == "content-length") {
    std::uint64_t length = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
    if (ec == std::errc() && end == value.data() + value.size()) transfer->content_length = length;
  }
  transfer->headers.emplace_back(std::move(name), std::string(value));
  return n;
}

TransportError classify(CURLcode code, bool too_large) {
  switch (code) {
    case CURLE_OK:
      return TransportError::kNone;
    case CURLE_COULDNT_CONNECT:
      return TransportError::kConnect;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return TransportError::kResolve;
    case CURLE_OPERATION_TIMEDOUT:
      return TransportError::kTimeout;
    case CURLE_PARTIAL_FILE:
      return TransportError::kTruncated;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_BAD_CONTENT_ENCODING:
      return TransportError::kReset;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
      return TransportError::kTls;
    case CURLE_WRITE_ERROR:
      return too_large ? TransportError::kTooLarge : TransportError::kOther;
    default:
      return TransportError::kOther;
  }
}

// One event-loop thread with its own libcurl multi handle (and so its own connections):
// it runs the transfers queued to it, at most `concurrency` at once.
class EventLoop {
 public:
  EventLoop(const TransportOptions& options, std::size_t concurrency)
      : options_(options), concurrency_(std::max<std::size_t>(concurrency, 1)) {}

  ~EventLoop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    if (multi_ != nullptr) curl_multi_wakeup(multi_);
    if (loop_.joinable() && owner_pid_ == ::getpid()) loop_.join();
    if (owner_pid_ == ::getpid()) {
      for (CURL* easy : idle_handles_) curl_easy_cleanup(easy);
      if (multi_ != nullptr) curl_multi_cleanup(multi_);
    } else if (loop_.joinable()) {
      loop_.detach();  // a forked child: the loop thread exists only in the parent
    }
  }

  void submit(std::span<Transfer* const> transfers) {
    {
      std::lock_guard lock(mutex_);
      start_loop_if_needed();
      queue_.insert(queue_.end(), transfers.begin(), transfers.end());
    }
    curl_multi_wakeup(multi_);
  }

  // Makes the loop look at its queue now (a batch was cancelled).
  void wake() {
    std::lock_guard lock(mutex_);
    if (multi_ != nullptr) curl_multi_wakeup(multi_);
  }

  static void complete(Transfer* t, TransportError error, std::string message) {
    t->response->error = error;
    t->response->error_message = std::move(message);
    Batch& batch = *t->batch;
    std::lock_guard lock(batch.mutex);
    if (batch.streaming) batch.ready.push_back(t->index);
    // The batch may be gone once the caller sees remaining == 0 and the lock is released.
    if (--batch.remaining == 0 || batch.streaming) batch.done.notify_all();
  }

 private:
  // Called with mutex_ held: starts the loop on first use. (A forked child never uses its
  // parent's transport: TransportRef makes a new one there.)
  void start_loop_if_needed() {
    if (multi_ != nullptr) return;
    owner_pid_ = ::getpid();
    multi_ = curl_multi_init();
    if (multi_ == nullptr) throw IoError("libcurl: cannot create a multi handle");
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, static_cast<long>(concurrency_));
    loop_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "zarrkit-http");  // in profiles and /proc/PID/task/*/comm
      run_loop();
    });
  }

  void run_loop() {
    std::vector<Transfer*> starting;
    std::vector<Transfer*> dropped;
    std::size_t active = 0;
    for (;;) {
      starting.clear();
      dropped.clear();
      {
        std::lock_guard lock(mutex_);
        if (stopping_) break;
        while (active + starting.size() < concurrency_ && !queue_.empty()) {
          Transfer* t = queue_.front();
          queue_.pop_front();
          // Requests of a cancelled batch take no slot: all of them end at once.
          (t->batch->cancelled ? dropped : starting).push_back(t);
        }
      }
      for (Transfer* t : dropped) complete(t, TransportError::kOther, "cancelled: another request of its batch failed");
      for (Transfer* t : starting) {
        if (start(t)) {
          ++active;
        }
      }
      int running = 0;
      curl_multi_perform(multi_, &running);
      int left = 0;
      bool finished = false;
      while (CURLMsg* message = curl_multi_info_read(multi_, &left)) {
        if (message->msg != CURLMSG_DONE) continue;
        Transfer* t = nullptr;
        curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
        finish(t, message->data.result);
        --active;
        finished = true;
      }
      // Slots came free: start (or drop) what is queued before waiting for sockets.
      if (finished) continue;
      curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);
    }
    // Shutting down: nobody is waiting (the transport is being destroyed), drop everything.
  }

  CURL* take_handle() {
    if (!idle_handles_.empty()) {
      CURL* easy = idle_handles_.back();
      idle_handles_.pop_back();
      curl_easy_reset(easy);
      return easy;
    }
    return curl_easy_init();
  }

  // Sets the transfer up and adds it to the multi handle; on failure completes it at once.
  bool start(Transfer* t) {
    const HttpRequest& r = *t->request;
    CURL* easy = take_handle();
    if (easy == nullptr) {
      complete(t, TransportError::kOther, "libcurl: cannot create an easy handle");
      return false;
    }
    t->easy = easy;
    curl_easy_setopt(easy, CURLOPT_URL, r.url.c_str());
    curl_easy_setopt(easy, CURLOPT_PRIVATE, t);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t->error_buffer);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
    // Stall detection: fewer than 1 byte/s for the stall time (libcurl counts whole seconds).
    const long stall_seconds = std::max<long>(1, static_cast<long>((options_.stall_timeout.count() + 999) / 1000));
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, stall_seconds);
    if (options_.request_timeout.count() > 0) {
      curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout.count()));
    }
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, r.follow_redirects ? 1L : 0L);
    curl_easy_setopt(easy, CURLOPT_MAXREDIRS, static_cast<long>(options_.max_redirects));
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, options_.verify_tls ? 1L : 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, options_.verify_tls ? 2L : 0L);
    if (!options_.ca_bundle.empty()) curl_easy_setopt(easy, CURLOPT_CAINFO, options_.ca_bundle.c_str());
    curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, kReceiveBufferBytes);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "zarrkit/0.1");

    bool has_content_type = false;
    for (const auto& [name, value] : r.headers) {
      if (lower(name) == "content-type") has_content_type = true;
      const std::string line = value.empty() ? name + ";" : name + ": " + value;
      t->header_list = curl_slist_append(t->header_list, line.c_str());
    }
    // No "Expect: 100-continue" round trip before bodies.
    t->header_list = curl_slist_append(t->header_list, "Expect:");

    if (r.method == "GET") {
      curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
    } else if (r.method == "HEAD") {
      curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
    } else if (r.method == "PUT" || r.method == "POST") {
      if (!has_content_type) {
        t->header_list = curl_slist_append(t->header_list, "Content-Type: application/octet-stream");
      }
      static const char kEmpty[] = "";
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
      curl_easy_setopt(easy, CURLOPT_POSTFIELDS,
                       r.body.empty() ? kEmpty : reinterpret_cast<const char*>(r.body.data()));
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, r.method.c_str());
    } else {
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, r.method.c_str());
    }
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, t->header_list);
    if (curl_multi_add_handle(multi_, easy) != CURLM_OK) {
      release(t);
      complete(t, TransportError::kOther, "libcurl: cannot start the transfer");
      return false;
    }
    return true;
  }

  void release(Transfer* t) {
    if (t->header_list != nullptr) curl_slist_free_all(t->header_list);
    t->header_list = nullptr;
    if (t->easy != nullptr) {
      if (easy_handles_reusable()) {
        idle_handles_.push_back(t->easy);
      } else {
        curl_easy_cleanup(t->easy);
      }
    }
    t->easy = nullptr;
  }

  void finish(Transfer* t, CURLcode code) {
    HttpResponse& response = *t->response;
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    const char* url = nullptr;
    curl_easy_getinfo(t->easy, CURLINFO_EFFECTIVE_URL, &url);
    response.status = static_cast<int>(status);
    response.url = url != nullptr ? url : t->request->url;
    curl_multi_remove_handle(multi_, t->easy);
    release(t);

    TransportError error = classify(code, t->too_large);
    std::string message;
    if (error != TransportError::kNone) {
      message = t->error_buffer[0] != '\0' ? t->error_buffer : curl_easy_strerror(code);
      // A reset in the middle of a body whose length was announced is a truncated body.
      if (error == TransportError::kReset && t->content_length && t->body_size < *t->content_length) {
        error = TransportError::kTruncated;
        message = fmt::format("the connection broke after {} of {} bytes ({})", t->body_size, *t->content_length,
                              message);
      }
      if (error == TransportError::kTooLarge) {
        message = fmt::format("the response body is larger than the limit of {} bytes", t->max_body);
      }
    } else if (t->request->method != "HEAD" && t->content_length && *t->content_length != t->body_size) {
      error = TransportError::kTruncated;
      message = fmt::format("the body has {} bytes but Content-Length announced {}", t->body_size, *t->content_length);
    }
    response.headers = std::move(t->headers);
    if (t->body_size > 0) {
      t->body.shrink(t->body_size);
      response.body = std::move(t->body);
    }
    complete(t, error, std::move(message));
  }

  const TransportOptions& options_;
  const std::size_t concurrency_;
  std::mutex mutex_;  // guards queue_, stopping_, and starting the loop
  std::deque<Transfer*> queue_;
  bool stopping_ = false;
  pid_t owner_pid_ = 0;
  CURLM* multi_ = nullptr;
  std::thread loop_;
  std::vector<CURL*> idle_handles_;  // used by the loop thread only
};

class CurlTransport final : public HttpTransport {
 public:
  explicit CurlTransport(TransportOptions options) : options_(std::move(options)) {
    options_.concurrency = std::max<std::size_t>(options_.concurrency, 1);
    global_init();
    // The requests in flight are shared out between the loops, each with its own
    // connections; more loops than requests would idle.
    std::size_t count = options_.event_loops;
    if (count == 0) count = default_event_loops(std::thread::hardware_concurrency());
    count = std::clamp<std::size_t>(count, 1, options_.concurrency);
    for (std::size_t i = 0; i < count; ++i) {
      loops_.push_back(std::make_unique<EventLoop>(options_, (options_.concurrency + count - 1 - i) / count));
    }
  }

  std::vector<HttpResponse> perform(std::span<const HttpRequest> requests) override {
    std::vector<HttpResponse> responses(requests.size());
    run_batch(requests, responses, nullptr);
    return responses;
  }

  void perform_each(std::span<const HttpRequest> requests, const ResponseHandler& on_response) override {
    std::vector<HttpResponse> responses(requests.size());
    run_batch(requests, responses, &on_response);
  }

 private:
  // Queues the requests (dealt out to the loops in turn), waits for all of them, and (when
  // streaming) hands each response to the handler as it completes. Returns only once no
  // transfer refers to the batch.
  void run_batch(std::span<const HttpRequest> requests, std::vector<HttpResponse>& responses,
                 const ResponseHandler* on_response) {
    if (requests.empty()) return;
    Batch batch;
    batch.remaining = requests.size();
    batch.streaming = on_response != nullptr;
    std::vector<std::unique_ptr<Transfer>> transfers;
    transfers.reserve(requests.size());
    std::vector<std::vector<Transfer*>> per_loop(loops_.size());
    const std::size_t first = next_loop_.fetch_add(1) % loops_.size();
    for (std::size_t i = 0; i < requests.size(); ++i) {
      auto t = std::make_unique<Transfer>();
      t->request = &requests[i];
      t->response = &responses[i];
      t->batch = &batch;
      t->index = i;
      t->max_body = options_.max_body_bytes;
      per_loop[(first + i) % loops_.size()].push_back(t.get());
      transfers.push_back(std::move(t));
    }
    for (std::size_t l = 0; l < loops_.size(); ++l) {
      if (!per_loop[l].empty()) loops_[l]->submit(per_loop[l]);
    }
    std::exception_ptr failure;
    std::vector<std::size_t> ready;
    std::unique_lock lock(batch.mutex);
    for (;;) {
      batch.done.wait(lock, [&] { return !batch.ready.empty() || batch.remaining == 0; });
      ready.swap(batch.ready);
      // Every completion pushed its index before counting down: nothing more will come.
      const bool all_done = batch.remaining == 0;
      lock.unlock();
      for (std::size_t i : ready) {
        if (failure) break;
        try {
          (*on_response)(i, responses[i]);
        } catch (...) {
          failure = std::current_exception();
          batch.cancelled = true;
          for (auto& loop : loops_) loop->wake();  // they drop the batch's queued requests now
        }
      }
      ready.clear();
      if (all_done) break;
      lock.lock();
    }
    if (failure) std::rethrow_exception(failure);
  }

  TransportOptions options_;
  std::vector<std::unique_ptr<EventLoop>> loops_;
  std::atomic<std::size_t> next_loop_{0};
};

}  // namespace

std::optional<std::string_view> HttpResponse::header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (n == name) return std::string_view(v);
  }
  return std::nullopt;
}

void HttpTransport::perform_each(std::span<const HttpRequest> requests, const ResponseHandler& on_response) {
  std::vector<HttpResponse> responses = perform(requests);
  for (std::size_t i = 0; i < responses.size(); ++i) on_response(i, responses[i]);
}

std::string_view transport_error_name(TransportError error) {
  switch (error) {
    case TransportError::kNone: return "none";
    case TransportError::kConnect: return "connection failed";
    case TransportError::kResolve: return "host not found";
    case TransportError::kTimeout: return "timed out";
    case TransportError::kReset: return "connection reset";
    case TransportError::kTruncated: return "truncated body";
    case TransportError::kTooLarge: return "body too large";
    case TransportError::kTls: return "TLS failure";
    case TransportError::kOther: return "transfer failed";
  }
  return "transfer failed";
}

std::size_t default_event_loops(unsigned hardware_threads) {
  return std::clamp<std::size_t>(hardware_threads / 4, 1, 4);
}

std::shared_ptr<HttpTransport> make_curl_transport(const TransportOptions& options) {
  return std::make_shared<CurlTransport>(options);
}

std::shared_ptr<HttpTransport> shared_transport(const TransportOptions& options) {
  static std::mutex mutex;
  static std::vector<std::pair<TransportOptions, std::shared_ptr<HttpTransport>>> transports;
  static pid_t owner = 0;
  std::lock_guard lock(mutex);
  if (owner != ::getpid()) {
    // Forked: the parent's transports must not be used nor destroyed here (see TransportRef).
    for (auto& [o, transport] : transports) new std::shared_ptr<HttpTransport>(std::move(transport));
    transports.clear();
    owner = ::getpid();
  }
  for (const auto& [o, transport] : transports) {
    if (o == options) return transport;
  }
  transports.emplace_back(options, make_curl_transport(options));
  return transports.back().second;
}

}  // namespace zarrkit::remote
