// Fuzz target: HTTP responses from outside, as the HTTP store receives them. A server on the
// loopback interface (started once, in this process) answers each request with raw bytes of
// the input: status lines, headers, Content-Length and Content-Range, redirects (Location),
// chunked bodies, bodies shorter or longer than announced, connections closed early. The
// store's real transport (libcurl) and its judgement of the answers (lengths, ranges, retries,
// absent keys) handle them, then the engine reads an array through it.
//
// Input: byte 0 picks the request(s); the rest is one or more responses separated by
// "\r\n=====\r\n", served in the order requests arrive (the last one to every later request).
// "$PORT" in a response becomes the server's port (redirects back to it).
//   0 get a whole value   1 get bytes [3, 10)   2 get the last 5 bytes   3 get_ranges of two
//   ranges (two requests)   4 size (HEAD)   5 exists (HEAD)   6 open the array at the root
//   (zarr.json) and read a corner of it
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "fuzz_target.h"
#include "zarrkit/array.h"
#include "zarrkit/error.h"
#include "zarrkit/selection.h"
#include "zarrkit/stores/http_store.h"

namespace zarrkit::fuzz {
namespace {

constexpr std::string_view kSeparator = "\r\n=====\r\n";

// A loopback HTTP server that answers every connection with the scripted responses, one
// request per connection.
class ScriptedServer {
 public:
  ScriptedServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener_, 64) != 0 || ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      std::perror("fuzz_http: cannot listen on the loopback interface");
      std::abort();
    }
    port_ = ntohs(address.sin_port);
    std::thread([this] { serve(); }).detach();  // lives as long as the process
  }

  int port() const { return port_; }

  void script(std::vector<std::string> responses) {
    std::lock_guard lock(mutex_);
    responses_ = std::move(responses);
    served_ = 0;
  }

 private:
  void serve() {
    for (;;) {
      const int connection = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection < 0) continue;
      timeval timeout{1, 0};
      ::setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
      ::setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
      // The request's head (GET and HEAD have no body): read all of it before answering, so
      // that closing the connection afterwards does not reset it.
      std::string request;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos && request.size() < (1 << 16)) {
        const ssize_t n = ::recv(connection, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        request.append(buffer, static_cast<std::size_t>(n));
      }
      std::string response;
      {
        std::lock_guard lock(mutex_);
        if (!responses_.empty()) response = responses_[std::min(served_++, responses_.size() - 1)];
      }
      for (std::size_t sent = 0; sent < response.size();) {
        const ssize_t n = ::send(connection, response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
      }
      ::close(connection);
    }
  }

  int listener_ = -1;
  int port_ = 0;
  std::mutex mutex_;
  std::vector<std::string> responses_;
  std::size_t served_ = 0;
};

ScriptedServer& server() {
  static ScriptedServer* s = new ScriptedServer();  // never destroyed: its thread outlives main
  return *s;
}

std::shared_ptr<HttpStore> store() {
  static const std::shared_ptr<HttpStore> s = [] {
    RemoteOptions options;
    // Short: a response that stalls or a redirect to nowhere costs a moment, not minutes.
    options.connect_timeout = std::chrono::milliseconds(300);
    options.stall_timeout = std::chrono::milliseconds(500);
    options.request_timeout = std::chrono::milliseconds(2000);
    options.max_attempts = 2;
    options.retry_initial_delay = std::chrono::milliseconds(1);
    options.retry_max_delay = std::chrono::milliseconds(1);
    options.coalesce_gap_bytes = 16;  // the two ranges below go as two requests
    return HttpStore::open("http://127.0.0.1:" + std::to_string(server().port()) + "/data.zarr", options);
  }();
  return s;
}

std::vector<std::string> split_responses(std::string_view text) {
  std::vector<std::string> out;
  const std::string port = std::to_string(server().port());
  for (;;) {
    const std::size_t end = text.find(kSeparator);
    std::string response(text.substr(0, end));
    for (std::size_t at = response.find("$PORT"); at != std::string::npos; at = response.find("$PORT", at)) {
      response.replace(at, 5, port);
    }
    out.push_back(std::move(response));
    if (end == std::string_view::npos) return out;
    text.remove_prefix(end + kSeparator.size());
  }
}

std::string with_separators(std::initializer_list<std::string> responses) {
  std::string out;
  for (const std::string& r : responses) out += (out.empty() ? "" : std::string(kSeparator)) + r;
  return out;
}

const char kZarrJson[] =
    R"({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint8",)"
    R"( "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},)"
    R"( "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},)"
    R"( "fill_value": 0, "codecs": [{"name": "bytes"}]})";

std::string ok(std::string_view body, std::string_view extra = "") {
  return fmt::format("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n{}\r\n{}", body.size(), extra, body);
}

}  // namespace

std::vector<std::string> seeds() {
  const std::string json = kZarrJson;
  return {
      std::string(1, '\0') + ok("0123456789abcdef"),
      std::string(1, '\0') + "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found",
      std::string(1, '\0') + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n",
      std::string(1, '\0') + "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort",
      std::string(1, '\0') + "HTTP/1.0 200 OK\r\n\r\nuntil the connection closes",
      std::string(1, '\0') + with_separators({"HTTP/1.1 503 Slow Down\r\nContent-Length: 0\r\n\r\n", ok("second try")}),
      std::string(1, '\0') + with_separators({"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:$PORT/moved\r\n"
                                              "Content-Length: 0\r\n\r\n",
                                              ok("moved here")}),
      std::string(1, '\1') + "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 3-9/16\r\nContent-Length: 7\r\n\r\n3456789",
      std::string(1, '\1') + ok("0123456789abcdef"),
      std::string(1, '\2') + "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 11-15/16\r\nContent-Length: 5\r\n\r\nbcdef",
      std::string(1, '\2') + "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */0\r\nContent-Length: 0\r\n\r\n",
      std::string(1, '\3') + with_separators({"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-3/200\r\n"
                                              "Content-Length: 4\r\n\r\n0123",
                                              "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 100-119/200\r\n"
                                              "Content-Length: 20\r\n\r\n01234567890123456789"}),
      std::string(1, '\4') + "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nETag: \"abc\"\r\n\r\n",
      std::string(1, '\5') + "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
      std::string(1, '\6') + with_separators({ok(json), ok(std::string("\1\2\3\4", 4))}),
      std::string(1, '\6') + with_separators({ok(json), "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"}),
  };
}

}  // namespace zarrkit::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zarrkit;
  if (size == 0) return 0;
  fuzz::server().script(fuzz::split_responses(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1)));
  HttpStore& store = *fuzz::store();
  try {
    switch (data[0] % 7) {
      case 0:
        (void)store.get("a/c/0");
        break;
      case 1:
        (void)store.get("a/c/0", BufferPrototype::host(), ByteRange::range(3, 10));
        break;
      case 2:
        (void)store.get("a/c/0", BufferPrototype::host(), ByteRange::last(5));
        break;
      case 3: {
        const ByteRange ranges[] = {ByteRange::range(0, 4), ByteRange::range(100, 120)};
        (void)store.get_ranges("a/c/0", ranges);
        break;
      }
      case 4:
        (void)store.size("a/c/0");
        break;
      case 5:
        (void)store.exists("a/c/0");
        break;
      default: {
        // A corner of a few elements: a claimed shape of billions of chunks must not become
        // billions of requests here.
        const Array a = Array::open(fuzz::store(), "");
        Selection corner;
        for (std::size_t axis = 0; axis < a.ndim(); ++axis) corner.push_back(Slice{0, 4, 1});
        if (!a.dtype().is_variable_length()) (void)a.read(corner);
        break;
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
