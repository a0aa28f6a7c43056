// A read-only store over HTTP(S): key "a/c/0" is GET BASE/a/c/0 (each path segment
// percent-encoded; a query string in the base URL is kept on every request, for signed
// URLs). Byte ranges are Range requests; get_ranges sends its ranges together, many in
// flight, merging nearby ones. exists() and size() are HEAD requests. 404 and 410 mean the
// key is absent. Redirects are followed (http and https only).
//
// A response is returned only when it holds exactly the bytes asked for: its length must
// match Content-Length, and a 206 must carry the Content-Range of the range requested.
// Anything else (a truncated body, a reset, a timeout, a 5xx or 429) is retried with backoff;
// when retries run out a short or inconsistent body is DataLossError and other failures are
// IoError naming the URL and the status.
//
// HTTP has no listing: list() and list_dir() are UnsupportedError, so groups must be read
// member by member (or through consolidated metadata). Writes are UnsupportedError.
#pragma once

#include <memory>
#include <string>

#include "zarrkit/store.h"
#include "zarrkit/stores/remote_options.h"

namespace zarrkit {

namespace remote {
class HttpTransport;
}

class HttpStore : public Store {
 public:
  // `url`: "http://host/path" or "https://..."; InvalidArgumentError if malformed.
  static std::shared_ptr<HttpStore> open(std::string_view url, const RemoteOptions& options = {});
  // Tests: a given transport instead of libcurl.
  static std::shared_ptr<HttpStore> open(std::string_view url, const RemoteOptions& options,
                                         std::shared_ptr<remote::HttpTransport> transport);
  ~HttpStore() override;

  StoreCapabilities capabilities() const override;
  std::string describe() const override;
  std::string cache_identity() const override;
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype = BufferPrototype::host(),
                            std::optional<ByteRange> range = std::nullopt) override;
  std::vector<std::optional<Buffer>> get_many(std::span<const std::string> keys,
                                              const BufferPrototype& prototype = BufferPrototype::host()) override;
  void get_each(std::span<const std::string> keys, const BufferPrototype& prototype,
                const ValueHandler& on_value) override;
  std::optional<std::vector<Buffer>> get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                const BufferPrototype& prototype = BufferPrototype::host()) override;
  bool exists(std::string_view key) override;
  std::optional<std::uint64_t> size(std::string_view key) override;
  void set(std::string_view key, ByteView value) override;
  void erase(std::string_view key) override;
  void erase_prefix(std::string_view prefix) override;
  std::vector<std::string> list(std::string_view prefix = "") override;
  DirListing list_dir(std::string_view prefix) override;

  struct Impl;

 private:
  explicit HttpStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zarrkit
