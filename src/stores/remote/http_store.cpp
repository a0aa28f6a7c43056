#include "zarrkit/stores/http_store.h"

#include <charconv>

#include <fmt/format.h>

#include "stores/remote/byte_ranges.h"
#include "stores/remote/remote_settings.h"
#include "stores/remote/url.h"
#include "zarrkit/error.h"

namespace zarrkit {

using namespace remote;

struct HttpStore::Impl {
  Url base;
  std::string base_url;  // scheme://authority/path, without a trailing '/'
  RemoteSettings settings;

  std::string url_of(std::string_view key) const {
    std::string url = base_url + "/" + uri_encode(key, /*keep_slash=*/true);
    if (!base.query.empty()) url += "?" + base.query;
    return url;
  }

  HttpRequest request(std::string method, std::string_view key, const std::optional<std::string>& range) const {
    HttpRequest r;
    r.method = std::move(method);
    r.url = url_of(key);
    if (range) r.headers.emplace_back("Range", *range);
    return r;
  }

  static bool absent(int status) { return status == 404 || status == 410; }

  // The verdict on anything that is not a success with a body to check.
  static std::optional<Verdict> common_verdict(const HttpResponse& r) {
    if (auto v = transport_verdict(r)) return v;
    if (absent(r.status)) return Verdict::accept();
    if (retryable_status(r.status)) return Verdict::retry(fmt::format("HTTP {}", r.status));
    if (r.status < 200 || r.status >= 300) {
      if (r.status == 416) return std::nullopt;
      return Verdict::fail(fmt::format("HTTP {}{}", r.status, r.status == 401 || r.status == 403
                                                                  ? " (access denied)"
                                                                  : ""));
    }
    return std::nullopt;
  }

  // HEAD: nullopt when absent, else the Content-Length if the server sent one.
  std::optional<std::optional<std::uint64_t>> head(std::string_view key) {
    const std::vector<HttpRequest> requests{request("HEAD", key, std::nullopt)};
    auto responses = perform_with_retries(settings.transport->get(), requests,
                                          [](std::size_t, HttpResponse& r) {
                                            if (auto v = common_verdict(r)) return *v;
                                            return Verdict::accept();
                                          },
                                          settings.retry);
    const HttpResponse& r = responses[0];
    if (absent(r.status)) return std::nullopt;
    std::optional<std::uint64_t> length;
    if (auto value = r.header("content-length")) {
      std::uint64_t n = 0;
      auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
      if (ec == std::errc() && end == value->data() + value->size()) length = n;
    }
    return length;
  }

  // The bytes of each range, or nullopt when the key is absent.
  std::optional<std::vector<Buffer>> fetch(std::string_view key, std::span<const ByteRange> ranges) {
    std::vector<HttpRequest> requests;
    requests.reserve(ranges.size());
    for (const ByteRange& range : ranges) requests.push_back(request("GET", key, range_header(range)));
    std::vector<Buffer> out(ranges.size());
    auto responses = perform_with_retries(settings.transport->get(), requests,
                                          [&](std::size_t i, HttpResponse& r) {
                                            if (auto v = common_verdict(r)) return *v;
                                            return check_range_response(ranges[i], r, out[i]);
                                          },
                                          settings.retry);
    for (const HttpResponse& r : responses) {
      if (absent(r.status)) return std::nullopt;
    }
    return out;
  }

  // The whole values of `keys`, requested together, each handed to `on_value` as it
  // arrives (nullopt: absent).
  void get_whole(std::span<const std::string> keys, const std::function<void(std::size_t, std::optional<Buffer>)>& on_value) {
    std::vector<HttpRequest> requests;
    requests.reserve(keys.size());
    for (const std::string& key : keys) requests.push_back(request("GET", key, std::nullopt));
    perform_each_with_retries(
        settings.transport->get(), requests,
        [](std::size_t, HttpResponse& r) {
          if (auto v = common_verdict(r)) return *v;
          if (r.status != 200) return Verdict::fail(fmt::format("unexpected HTTP status {}", r.status));
          return Verdict::accept();
        },
        [&](std::size_t i, HttpResponse& r) {
          on_value(i, absent(r.status) ? std::nullopt : std::optional<Buffer>(std::move(r.body)));
        },
        settings.retry);
  }

  std::optional<Buffer> get_whole(std::string_view key) {
    const std::string whole_key(key);
    std::optional<Buffer> value;
    get_whole(std::span(&whole_key, 1), [&](std::size_t, std::optional<Buffer> v) { value = std::move(v); });
    return value;
  }
};

HttpStore::HttpStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpStore::~HttpStore() = default;

std::shared_ptr<HttpStore> HttpStore::open(std::string_view url, const RemoteOptions& options) {
  return open(url, options, nullptr);
}

std::shared_ptr<HttpStore> HttpStore::open(std::string_view url, const RemoteOptions& options,
                                           std::shared_ptr<HttpTransport> transport) {
  auto impl = std::make_unique<Impl>();
  impl->base = parse_http_url(url);
  std::string path = impl->base.path;
  while (!path.empty() && path.back() == '/') path.pop_back();
  impl->base_url = impl->base.origin() + path;
  impl->settings = resolve_remote_settings(options, std::move(transport));
  return std::shared_ptr<HttpStore>(new HttpStore(std::move(impl)));
}

StoreCapabilities HttpStore::capabilities() const {
  return {.writable = false,
          .listable = false,
          .partial_reads = true,
          .batched_gets = true,
          .requests_in_flight = impl_->settings.concurrency};
}

std::string HttpStore::describe() const { return impl_->base_url; }

std::optional<Buffer> HttpStore::get(std::string_view key, const BufferPrototype& prototype,
                                     std::optional<ByteRange> range) {
  validate_key(key);
  if (range && !range_header(*range)) {
    if (!impl_->head(key)) return std::nullopt;
    return to_prototype(Buffer(), prototype, describe());
  }
  std::optional<Buffer> data;
  if (!range) {
    data = impl_->get_whole(key);
  } else {
    auto parts = impl_->fetch(key, std::span(&*range, 1));
    if (parts) data = std::move(parts->front());
  }
  if (!data) return std::nullopt;
  return to_prototype(std::move(*data), prototype, describe());
}

std::vector<std::optional<Buffer>> HttpStore::get_many(std::span<const std::string> keys,
                                                      const BufferPrototype& prototype) {
  std::vector<std::optional<Buffer>> values(keys.size());
  get_each(keys, prototype, [&](std::size_t i, std::optional<Buffer> value) { values[i] = std::move(value); });
  return values;
}

void HttpStore::get_each(std::span<const std::string> keys, const BufferPrototype& prototype,
                         const ValueHandler& on_value) {
  for (const std::string& key : keys) validate_key(key);
  impl_->get_whole(keys, [&](std::size_t i, std::optional<Buffer> value) {
    if (value) value = to_prototype(std::move(*value), prototype, describe());
    on_value(i, std::move(value));
  });
}

std::optional<std::vector<Buffer>> HttpStore::get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                         const BufferPrototype& prototype) {
  validate_key(key);
  RangePlan plan = plan_ranges(ranges, impl_->settings.coalesce_gap, impl_->settings.coalesce_max);
  // Requests that surely select nothing need no GET; one HEAD tells whether the key exists.
  std::vector<ByteRange> to_fetch;
  std::vector<std::size_t> fetched_index(plan.requests.size(), SIZE_MAX);
  for (std::size_t i = 0; i < plan.requests.size(); ++i) {
    if (range_header(plan.requests[i])) {
      fetched_index[i] = to_fetch.size();
      to_fetch.push_back(plan.requests[i]);
    }
  }
  std::vector<Buffer> fetched(plan.requests.size());
  if (to_fetch.empty()) {
    if (!impl_->head(key)) return std::nullopt;
  } else {
    auto got = impl_->fetch(key, to_fetch);
    if (!got) return std::nullopt;
    for (std::size_t i = 0; i < plan.requests.size(); ++i) {
      if (fetched_index[i] != SIZE_MAX) fetched[i] = std::move((*got)[fetched_index[i]]);
    }
  }
  std::vector<Buffer> parts = split_ranges(plan, fetched);
  for (Buffer& part : parts) part = to_prototype(std::move(part), prototype, describe());
  return parts;
}

bool HttpStore::exists(std::string_view key) {
  validate_key(key);
  return impl_->head(key).has_value();
}

std::optional<std::uint64_t> HttpStore::size(std::string_view key) {
  validate_key(key);
  auto head = impl_->head(key);
  if (!head) return std::nullopt;
  if (*head) return **head;
  // No Content-Length on HEAD (some servers): read the value to measure it.
  auto value = impl_->get_whole(key);
  if (!value) return std::nullopt;
  return value->size();
}

void HttpStore::set(std::string_view key, ByteView) {
  fail_unsupported("{}: cannot write \"{}\": HTTP stores are read-only", describe(), key);
}

void HttpStore::erase(std::string_view key) {
  fail_unsupported("{}: cannot erase \"{}\": HTTP stores are read-only", describe(), key);
}

void HttpStore::erase_prefix(std::string_view prefix) {
  fail_unsupported("{}: cannot erase \"{}\": HTTP stores are read-only", describe(), prefix);
}

std::vector<std::string> HttpStore::list(std::string_view) {
  fail_unsupported("{}: HTTP stores cannot list their keys", describe());
}

DirListing HttpStore::list_dir(std::string_view) {
  fail_unsupported("{}: HTTP stores cannot list their keys", describe());
}

}  // namespace zarrkit
