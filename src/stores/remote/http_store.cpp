#include "zarrkit/stores/http_store.h"

#include <fmt/format.h>

#include "stores/remote/object_reader.h"
#include "stores/remote/url.h"
#include "zarrkit/error.h"

namespace zarrkit {

using namespace remote;

struct HttpStore::Impl final : ObjectProtocol {
  Url base;
  std::string base_url;  // scheme://authority/path, without a trailing '/'
  RemoteSettings settings;
  ObjectReader reader{*this, settings, base_url};

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

  HttpRequest head_request(std::string_view key) const override { return request("HEAD", key, std::nullopt); }
  HttpRequest get_request(std::string_view key, const std::optional<std::string>& range) const override {
    return request("GET", key, range);
  }

  bool absent(const HttpResponse& r) const override { return r.status == 404 || r.status == 410; }

  std::optional<Verdict> verdict(const HttpResponse& r) const override {
    if (auto v = transport_verdict(r)) return v;
    if ((r.status >= 200 && r.status < 300) || absent(r) || r.status == 416) return std::nullopt;
    if (retryable_status(r.status)) return Verdict::retry(fmt::format("HTTP {}", r.status));
    return Verdict::fail(
        fmt::format("HTTP {}{}", r.status, r.status == 401 || r.status == 403 ? " (access denied)" : ""));
  }

  Verdict unexpected(const HttpResponse& r) const override {
    return Verdict::fail(fmt::format("unexpected HTTP status {}", r.status));
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

std::string HttpStore::cache_identity() const { return impl_->base_url + "/"; }

std::optional<Buffer> HttpStore::get(std::string_view key, const BufferPrototype& prototype,
                                     std::optional<ByteRange> range) {
  return impl_->reader.get(key, prototype, range);
}

std::vector<std::optional<Buffer>> HttpStore::get_many(std::span<const std::string> keys,
                                                      const BufferPrototype& prototype) {
  return impl_->reader.get_many(keys, prototype);
}

void HttpStore::get_each(std::span<const std::string> keys, const BufferPrototype& prototype,
                         const ValueHandler& on_value) {
  impl_->reader.get_each(keys, prototype, on_value);
}

std::optional<std::vector<Buffer>> HttpStore::get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                         const BufferPrototype& prototype) {
  return impl_->reader.get_ranges(key, ranges, prototype);
}

bool HttpStore::exists(std::string_view key) { return impl_->reader.exists(key); }

std::optional<std::uint64_t> HttpStore::size(std::string_view key) { return impl_->reader.size(key); }

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
