// Tests only: an HttpTransport that answers from a map of URL -> bytes the way a static
// file server with Range support does (200, 206 with Content-Range, 416, 404, HEAD), with
// faults that a test can queue for the next requests to a URL.
#pragma once

#include <charconv>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "stores/remote/http_transport.h"

namespace zarrkit::remote::testing {

class FakeHttpServer final : public HttpTransport {
 public:
  // A fault replaces the normal answer to one request: it gets the answer the server would
  // give and returns what the client sees instead.
  using Fault = std::function<HttpResponse(HttpResponse normal)>;

  void put(const std::string& url, std::string value) {
    std::lock_guard lock(mutex_);
    files_[url] = std::move(value);
  }
  void fault_next(const std::string& url, Fault fault) {
    std::lock_guard lock(mutex_);
    faults_[url].push_back(std::move(fault));
  }
  // Ignore Range headers (answer 200 with the whole file), like some servers do.
  bool ignore_ranges = false;

  std::vector<HttpRequest> log;  // every request received, in order
  std::vector<std::size_t> batch_sizes;

  std::vector<HttpResponse> perform(std::span<const HttpRequest> requests) override {
    std::lock_guard lock(mutex_);
    batch_sizes.push_back(requests.size());
    std::vector<HttpResponse> out;
    for (const HttpRequest& r : requests) {
      log.push_back(r);
      HttpResponse response = answer(r);
      if (auto f = faults_.find(r.url); f != faults_.end() && !f->second.empty()) {
        Fault fault = std::move(f->second.front());
        f->second.pop_front();
        response = fault(std::move(response));
      }
      out.push_back(std::move(response));
    }
    return out;
  }

  static HttpResponse with_body(HttpResponse r, std::string_view body) {
    r.body = body.empty() ? Buffer() : Buffer::copy_of(as_bytes(body));
    return r;
  }

 private:
  HttpResponse answer(const HttpRequest& r) {
    HttpResponse response;
    response.url = r.url;
    auto file = files_.find(r.url);
    if (file == files_.end()) {
      response.status = 404;
      return with_body(std::move(response), "not found");
    }
    const std::string& value = file->second;
    std::string range;
    for (const auto& [name, v] : r.headers) {
      if (name == "Range") range = v;
    }
    std::uint64_t begin = 0;
    std::uint64_t end = value.size();
    response.status = 200;
    if (!range.empty() && !ignore_ranges) {
      std::string_view spec = std::string_view(range).substr(6);  // after "bytes="
      const std::size_t dash = spec.find('-');
      std::string_view a = spec.substr(0, dash);
      std::string_view b = spec.substr(dash + 1);
      auto number = [](std::string_view s) {
        std::uint64_t n = 0;
        std::from_chars(s.data(), s.data() + s.size(), n);
        return n;
      };
      if (a.empty()) {
        begin = value.size() - std::min<std::uint64_t>(number(b), value.size());
      } else {
        begin = number(a);
        if (!b.empty()) end = std::min<std::uint64_t>(number(b) + 1, value.size());
      }
      if (begin >= value.size()) {
        response.status = 416;
        response.headers.emplace_back("content-range", "bytes */" + std::to_string(value.size()));
        return response;
      }
      response.status = 206;
      response.headers.emplace_back("content-range", "bytes " + std::to_string(begin) + "-" +
                                                         std::to_string(end - 1) + "/" + std::to_string(value.size()));
    }
    response.headers.emplace_back("content-length", std::to_string(end - begin));
    if (r.method == "HEAD") return response;
    return with_body(std::move(response), std::string_view(value).substr(begin, end - begin));
  }

  std::mutex mutex_;
  std::map<std::string, std::string> files_;
  std::map<std::string, std::deque<Fault>> faults_;
};

}  // namespace zarrkit::remote::testing
