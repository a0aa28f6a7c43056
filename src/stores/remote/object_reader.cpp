#include "stores/remote/object_reader.h"

#include <charconv>
#include <cstdint>

#include "stores/remote/byte_ranges.h"

namespace zarrkit::remote {

std::optional<Verdict> ObjectProtocol::check_whole(const HttpResponse&) const { return std::nullopt; }

std::optional<std::uint64_t> content_length(const HttpResponse& response) {
  const auto value = response.header("content-length");
  if (!value) return std::nullopt;
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
  if (ec != std::errc() || end != value->data() + value->size()) return std::nullopt;
  return n;
}

Verdict ObjectReader::judge_head(const HttpResponse& response) const {
  if (auto v = protocol_.verdict(response)) return *v;
  if (protocol_.absent(response)) return Verdict::accept();
  if (response.status != 200) return protocol_.unexpected(response);
  if (protocol_.head_needs_length() && !content_length(response)) {
    return Verdict::retry("a HEAD answer without Content-Length");
  }
  return Verdict::accept();
}

Verdict ObjectReader::judge_whole(const HttpResponse& response) const {
  if (auto v = protocol_.verdict(response)) return *v;
  if (protocol_.absent(response)) return Verdict::accept();
  if (response.status != 200) return protocol_.unexpected(response);
  if (auto v = protocol_.check_whole(response)) return *v;
  return Verdict::accept();
}

Verdict ObjectReader::judge_range(const ByteRange& range, HttpResponse& response, Buffer& out) const {
  if (auto v = protocol_.verdict(response)) return *v;
  if (protocol_.absent(response)) return Verdict::accept();
  if (response.status != 200 && response.status != 206 && response.status != 416) {
    return protocol_.unexpected(response);
  }
  return check_range_response(range, response, out);
}

std::optional<ObjectHead> ObjectReader::head(std::string_view key) const {
  const HttpRequest request = protocol_.head_request(key);
  std::vector<HttpResponse> responses = perform_with_retries(
      settings_.transport->get(), std::span(&request, 1),
      [&](std::size_t, HttpResponse& response) { return judge_head(response); }, settings_.retry);
  const HttpResponse& r = responses.front();
  if (protocol_.absent(r)) return std::nullopt;
  return ObjectHead{content_length(r), std::string(r.header("etag").value_or(""))};
}

std::optional<std::pair<Buffer, std::string>> ObjectReader::get_with_etag(std::string_view key) const {
  const HttpRequest request = protocol_.get_request(key, std::nullopt);
  std::vector<HttpResponse> responses = perform_with_retries(
      settings_.transport->get(), std::span(&request, 1),
      [&](std::size_t, HttpResponse& response) { return judge_whole(response); }, settings_.retry);
  HttpResponse& r = responses.front();
  if (protocol_.absent(r)) return std::nullopt;
  return std::pair(std::move(r.body), std::string(r.header("etag").value_or("")));
}

std::optional<std::vector<Buffer>> ObjectReader::fetch(std::string_view key, std::span<const ByteRange> ranges) const {
  std::vector<HttpRequest> requests;
  requests.reserve(ranges.size());
  for (const ByteRange& range : ranges) requests.push_back(protocol_.get_request(key, range_header(range)));
  std::vector<Buffer> out(ranges.size());
  const std::vector<HttpResponse> responses = perform_with_retries(
      settings_.transport->get(), requests,
      [&](std::size_t i, HttpResponse& response) { return judge_range(ranges[i], response, out[i]); },
      settings_.retry);
  for (const HttpResponse& r : responses) {
    if (protocol_.absent(r)) return std::nullopt;
  }
  return out;
}

std::optional<Buffer> ObjectReader::get(std::string_view key, const BufferPrototype& prototype,
                                        std::optional<ByteRange> range) const {
  validate_key(key);
  std::optional<Buffer> data;
  if (!range) {
    if (auto whole = get_with_etag(key)) data = std::move(whole->first);
  } else if (!range_header(*range)) {
    // Surely nothing selected: only whether the key exists is asked.
    if (head(key)) data = Buffer();
  } else if (auto parts = fetch(key, std::span(&*range, 1))) {
    data = std::move(parts->front());
  }
  if (!data) return std::nullopt;
  return to_prototype(std::move(*data), prototype, description_);
}

void ObjectReader::get_each(std::span<const std::string> keys, const BufferPrototype& prototype,
                            const Store::ValueHandler& on_value) const {
  for (const std::string& key : keys) validate_key(key);
  std::vector<HttpRequest> requests;
  requests.reserve(keys.size());
  for (const std::string& key : keys) requests.push_back(protocol_.get_request(key, std::nullopt));
  perform_each_with_retries(
      settings_.transport->get(), requests, [&](std::size_t, HttpResponse& response) { return judge_whole(response); },
      [&](std::size_t i, HttpResponse& response) {
        if (protocol_.absent(response)) return on_value(i, std::nullopt);
        on_value(i, to_prototype(std::move(response.body), prototype, description_));
      },
      settings_.retry);
}

std::vector<std::optional<Buffer>> ObjectReader::get_many(std::span<const std::string> keys,
                                                         const BufferPrototype& prototype) const {
  std::vector<std::optional<Buffer>> values(keys.size());
  get_each(keys, prototype, [&](std::size_t i, std::optional<Buffer> value) { values[i] = std::move(value); });
  return values;
}

std::optional<std::vector<Buffer>> ObjectReader::get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                            const BufferPrototype& prototype) const {
  validate_key(key);
  const RangePlan plan = plan_ranges(ranges, settings_.coalesce_gap, settings_.coalesce_max);
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
    if (!head(key)) return std::nullopt;
  } else {
    auto got = fetch(key, to_fetch);
    if (!got) return std::nullopt;
    for (std::size_t i = 0; i < plan.requests.size(); ++i) {
      if (fetched_index[i] != SIZE_MAX) fetched[i] = std::move((*got)[fetched_index[i]]);
    }
  }
  std::vector<Buffer> parts = split_ranges(plan, fetched);
  for (Buffer& part : parts) part = to_prototype(std::move(part), prototype, description_);
  return parts;
}

bool ObjectReader::exists(std::string_view key) const {
  validate_key(key);
  return head(key).has_value();
}

std::optional<std::uint64_t> ObjectReader::size(std::string_view key) const {
  validate_key(key);
  const std::optional<ObjectHead> info = head(key);
  if (!info) return std::nullopt;
  if (info->size) return info->size;
  // No Content-Length on HEAD (some servers): read the value to measure it.
  const auto value = get_with_etag(key);
  if (!value) return std::nullopt;
  return value->first.size();
}

}  // namespace zarrkit::remote
