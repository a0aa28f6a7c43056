#include "stores/remote/url.h"

#include <cctype>
#include <charconv>

#include "zarrkit/error.h"
#include "zarrkit/store.h"

namespace zarrkit::remote {
namespace {

bool is_unreserved(unsigned char c) {
  return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool has_control_or_space(std::string_view s) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return true;
  }
  return false;
}

}  // namespace

std::string uri_encode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() * 3 / 2);
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (is_unreserved(u) || (keep_slash && c == '/')) {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    }
  }
  return out;
}

std::string uri_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    int high = i + 2 < text.size() ? hex_digit(text[i + 1]) : -1;
    int low = i + 2 < text.size() ? hex_digit(text[i + 2]) : -1;
    if (i + 2 >= text.size() || high < 0 || low < 0) {
      fail_invalid("cannot decode \"{}\": bad percent-escape at offset {}", text, i);
    }
    char decoded = static_cast<char>(high * 16 + low);
    if (decoded == '\0') fail_invalid("cannot decode \"{}\": it encodes a NUL byte", text);
    out += decoded;
    i += 2;
  }
  return out;
}

std::string Url::authority() const {
  const bool default_port = !port || (scheme == "http" && *port == 80) || (scheme == "https" && *port == 443);
  return default_port ? host : host + ":" + std::to_string(*port);
}

std::string Url::origin() const { return scheme + "://" + authority(); }

Url parse_http_url(std::string_view url) {
  auto bad = [&](std::string_view why) -> Url { fail_invalid("invalid URL \"{}\": {}", url, why); };
  if (has_control_or_space(url)) return bad("it contains spaces or control characters");
  const std::size_t sep = url.find("://");
  if (sep == std::string_view::npos) return bad("it has no scheme (http:// or https://)");
  Url out;
  out.scheme = lower(url.substr(0, sep));
  if (out.scheme != "http" && out.scheme != "https") {
    fail_unsupported("URL \"{}\": the scheme \"{}\" is not http or https", url, out.scheme);
  }
  std::string_view rest = url.substr(sep + 3);
  if (rest.find('#') != std::string_view::npos) return bad("it has a fragment ('#')");
  const std::size_t path_start = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, path_start);
  std::string_view path_and_query = path_start == std::string_view::npos ? "" : rest.substr(path_start);
  if (authority.find('@') != std::string_view::npos) return bad("user names and passwords in URLs are not supported");
  if (authority.empty()) return bad("it has no host");

  std::string_view host = authority;
  std::string_view port;
  if (authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unterminated IPv6 address");
    host = authority.substr(0, close + 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("junk after the IPv6 address");
      port = after.substr(1);
    }
  } else if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty() || host == "[]") return bad("it has no host");
  if (authority.front() != '[') {
    for (char c : host) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') {
        return bad("the host name has a character that is not allowed");
      }
    }
  }
  out.host = lower(host);
  if (!port.empty()) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
      return bad("the port is not a number from 1 to 65535");
    }
    out.port = static_cast<std::uint16_t>(value);
  } else if (authority.back() == ':') {
    return bad("the port is empty");
  }
  const std::size_t question = path_and_query.find('?');
  out.path = std::string(path_and_query.substr(0, question));
  if (question != std::string_view::npos) out.query = std::string(path_and_query.substr(question + 1));
  return out;
}

S3Location parse_s3_url(std::string_view url) {
  constexpr std::string_view kScheme = "s3://";
  if (!url.starts_with(kScheme)) fail_invalid("invalid S3 URL \"{}\": it does not start with s3://", url);
  std::string_view rest = url.substr(kScheme.size());
  const std::size_t slash = rest.find('/');
  std::string_view bucket = rest.substr(0, slash);
  std::string_view prefix = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  if (bucket.empty()) fail_invalid("invalid S3 URL \"{}\": it names no bucket", url);
  if (bucket.size() > 255 || has_control_or_space(bucket) || bucket.find_first_of("?#%\\") != std::string_view::npos) {
    fail_invalid("invalid S3 URL \"{}\": \"{}\" is not a bucket name", url, bucket);
  }
  if (prefix.find_first_of("?#") != std::string_view::npos) {
    fail_invalid("invalid S3 URL \"{}\": queries and fragments are not supported", url);
  }
  while (prefix.ends_with('/')) prefix.remove_suffix(1);
  if (!prefix.empty()) {
    try {
      validate_key(prefix);
    } catch (const InvalidArgumentError& e) {
      fail_invalid("invalid S3 URL \"{}\": the prefix is not usable: {}", url, e.what());
    }
  }
  return {std::string(bucket), std::string(prefix)};
}

bool is_virtual_host_bucket(std::string_view bucket, bool for_https) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(bucket.front()) || !alnum(bucket.back())) return false;
  bool all_digits_and_dots = true;
  for (std::size_t i = 0; i < bucket.size(); ++i) {
    const char c = bucket[i];
    if (c == '.') {
      if (for_https) return false;
      if (bucket[i - 1] == '.' || bucket[i - 1] == '-' || bucket[i + 1] == '-') return false;
      continue;
    }
    if (!alnum(c) && c != '-') return false;
    if (!(c >= '0' && c <= '9')) all_digits_and_dots = false;
  }
  return !all_digits_and_dots;  // "192.168.1.1" is an IP address, not a host label
}

}  // namespace zarrkit::remote
