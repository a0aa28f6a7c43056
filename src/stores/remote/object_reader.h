// Reading objects over HTTP, shared by the HTTP and S3 stores: whole values (many in
// flight, each handed over as it arrives), byte ranges (coalesced into few requests and
// checked against Content-Range), HEAD for existence and size, all with retries. A store
// says only how its requests are made and how its error answers are judged (ObjectProtocol).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stores/remote/http_transport.h"
#include "stores/remote/remote_settings.h"
#include "stores/remote/retry.h"
#include "zarrkit/store.h"

namespace zarrkit::remote {

// What one store does its own way.
class ObjectProtocol {
 public:
  virtual ~ObjectProtocol() = default;
  virtual HttpRequest head_request(std::string_view key) const = 0;
  // A GET of the whole value (`range` nullopt) or of a Range header value.
  virtual HttpRequest get_request(std::string_view key, const std::optional<std::string>& range) const = 0;
  // The verdict on an answer that failed (transport failures, error statuses), or nullopt
  // for the successes and for the answers each read judges itself: absent(), 412, 416.
  virtual std::optional<Verdict> verdict(const HttpResponse& response) const = 0;
  // The answer says that the object does not exist.
  virtual bool absent(const HttpResponse& response) const = 0;
  // The failure to report for an answer no read expects (a 204 to a GET, a 412).
  virtual Verdict unexpected(const HttpResponse& response) const = 0;
  // A whole value's answer checked beyond its length (S3: the checksum the server stores);
  // nullopt when it passes.
  virtual std::optional<Verdict> check_whole(const HttpResponse& response) const;
  // HEAD answers must carry Content-Length (one without is retried); else the size is
  // measured by a GET when one comes without.
  virtual bool head_needs_length() const { return false; }
};

struct ObjectHead {
  std::optional<std::uint64_t> size;  // Content-Length, when sent
  std::string etag;                   // as the server sent it, quotes included; "" if none
};

// The Content-Length of an answer, when it carries a valid one.
std::optional<std::uint64_t> content_length(const HttpResponse& response);

// The Store read operations of a remote store. Keys are validated here; values are handed
// out in memory of the prototype's kind. `protocol`, `settings` and `description` (the
// store's describe(), for error messages) must outlive the reader.
class ObjectReader {
 public:
  ObjectReader(const ObjectProtocol& protocol, const RemoteSettings& settings, const std::string& description)
      : protocol_(protocol), settings_(settings), description_(description) {}

  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype,
                            std::optional<ByteRange> range) const;
  void get_each(std::span<const std::string> keys, const BufferPrototype& prototype,
                const Store::ValueHandler& on_value) const;
  std::vector<std::optional<Buffer>> get_many(std::span<const std::string> keys,
                                              const BufferPrototype& prototype) const;
  // Nearby ranges merged (RemoteOptions::coalesce_gap_bytes, coalesce_max_bytes), every
  // request sent together; ranges that surely select nothing cost no GET, only one HEAD.
  std::optional<std::vector<Buffer>> get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                const BufferPrototype& prototype) const;
  bool exists(std::string_view key) const;
  // HEAD's Content-Length, else the length of the value read whole.
  std::optional<std::uint64_t> size(std::string_view key) const;

  // For keys already validated. nullopt: the object is absent.
  std::optional<ObjectHead> head(std::string_view key) const;
  // The whole value (host memory) and its ETag ("" if none).
  std::optional<std::pair<Buffer, std::string>> get_with_etag(std::string_view key) const;

 private:
  // The bytes of each range (each with a Range header), or nullopt when the key is absent.
  std::optional<std::vector<Buffer>> fetch(std::string_view key, std::span<const ByteRange> ranges) const;
  Verdict judge_head(const HttpResponse& response) const;
  Verdict judge_whole(const HttpResponse& response) const;
  Verdict judge_range(const ByteRange& range, HttpResponse& response, Buffer& out) const;

  const ObjectProtocol& protocol_;
  const RemoteSettings& settings_;
  const std::string& description_;
};

}  // namespace zarrkit::remote
