#include "core/settings_env.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <limits>

#include "core/checked_math.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The words the variables take for a boolean (any case): 1, true, yes, on and 0, false, no, off.
std::optional<bool> boolean_word(std::string_view text) {
  const std::string v = lower(text);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

// Reads the variables of one environment; every parser returns nullopt for an unset or
// empty variable.
class Reader {
 public:
  explicit Reader(const EnvironmentLookup& environment) : environment_(environment) {}

  std::optional<std::string> text(const char* name) const {
    std::optional<std::string> value = environment_(name);
    if (!value || value->empty()) return std::nullopt;
    return value;
  }

  // Decimal digits, at most INT64_MAX.
  std::optional<std::uint64_t> non_negative_integer(const char* name) const {
    const auto value = text(name);
    if (!value) return std::nullopt;
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
    if (ec != std::errc() || end != value->data() + value->size() || n < 0) {
      fail_invalid("environment variable {}=\"{}\" is not a non-negative integer", name, *value);
    }
    return static_cast<std::uint64_t>(n);
  }

  std::optional<std::chrono::milliseconds> milliseconds(const char* name) const {
    const auto n = non_negative_integer(name);
    if (!n) return std::nullopt;
    return std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(*n));
  }

  std::optional<std::uint64_t> bytes(const char* name) const {
    const auto value = text(name);
    if (!value) return std::nullopt;
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
    if (ec != std::errc() || end != value->data() + value->size()) {
      fail_invalid("environment variable {}=\"{}\" is not a number of bytes", name, *value);
    }
    return n;
  }

  // A positive number, with an optional k, M or G (binary) suffix: "4M", "512k", "1G", "16".
  std::optional<std::uint64_t> positive_size(const char* name) const {
    const std::optional<std::uint64_t> n = size(name);
    if (n && *n == 0) fail_invalid("{} is \"{}\": it must be a positive number (with k, M or G)", name, *text(name));
    return n;
  }

  // A number of bytes, 0 included, with an optional k, M or G (binary) suffix: "512M", "4G".
  std::optional<std::uint64_t> size(const char* name) const {
    const auto value = text(name);
    if (!value) return std::nullopt;
    std::uint64_t n = 0;
    const char* const begin = value->data();
    const char* const end = begin + value->size();
    const auto [digits_end, ec] = std::from_chars(begin, end, n);
    const std::string_view suffix(digits_end, static_cast<std::size_t>(end - digits_end));
    std::uint64_t scale = 1;
    if (suffix == "k" || suffix == "K") {
      scale = std::uint64_t{1} << 10;
    } else if (suffix == "m" || suffix == "M") {
      scale = std::uint64_t{1} << 20;
    } else if (suffix == "g" || suffix == "G") {
      scale = std::uint64_t{1} << 30;
    } else if (!suffix.empty()) {
      fail_invalid("{} is \"{}\": it must be a number of bytes (with k, M or G)", name, *value);
    }
    const std::optional<std::uint64_t> bytes = try_mul(n, scale);
    if (ec != std::errc() || digits_end == begin || !bytes) {
      fail_invalid("{} is \"{}\": it must be a number of bytes (with k, M or G) below 2^64", name, *value);
    }
    return bytes;
  }

  std::optional<bool> boolean(const char* name) const {
    const auto value = text(name);
    if (!value) return std::nullopt;
    if (const auto b = boolean_word(*value)) return b;
    fail_invalid("environment variable {}=\"{}\" is not a boolean (1, true, yes, on or 0, false, no, off)", name,
                 *value);
  }

 private:
  const EnvironmentLookup& environment_;
};

}  // namespace

std::optional<std::string> environment_variable(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

Config config_from_environment(const EnvironmentLookup& environment) {
  const Reader env(environment);
  Config c;
  if (auto v = env.non_negative_integer("ZARRKIT_NUM_THREADS")) {
    if (*v > kMaxNumThreads) fail_invalid("ZARRKIT_NUM_THREADS is \"{}\": at most {} threads", *v, kMaxNumThreads);
    c.num_threads = to_size(*v);
  }
  if (auto v = env.boolean("ZARRKIT_DURABLE_WRITES")) c.durable_writes = *v;
  if (auto v = env.positive_size("ZARRKIT_MAX_CHUNK_BYTES")) c.max_chunk_bytes = *v;
  if (auto v = env.positive_size("ZARRKIT_MAX_REQUEST_BYTES")) c.max_request_bytes = *v;

  RemoteConfig& r = c.remote;
  if (auto v = env.non_negative_integer("ZARRKIT_HTTP_CONCURRENCY")) r.concurrency = to_size(std::max<std::uint64_t>(*v, 1));
  if (auto v = env.non_negative_integer("ZARRKIT_HTTP_THREADS")) r.event_loops = to_size(std::min<std::uint64_t>(*v, 64));
  if (auto v = env.milliseconds("ZARRKIT_HTTP_CONNECT_TIMEOUT_MS")) r.connect_timeout = *v;
  if (auto v = env.milliseconds("ZARRKIT_HTTP_STALL_TIMEOUT_MS")) r.stall_timeout = *v;
  if (auto v = env.milliseconds("ZARRKIT_HTTP_REQUEST_TIMEOUT_MS")) r.request_timeout = *v;
  if (auto v = env.non_negative_integer("ZARRKIT_HTTP_MAX_ATTEMPTS")) {
    r.max_attempts = static_cast<int>(std::clamp<std::uint64_t>(*v, 1, 100));
  }
  if (auto v = env.milliseconds("ZARRKIT_HTTP_RETRY_INITIAL_MS")) r.retry_initial_delay = *v;
  if (auto v = env.milliseconds("ZARRKIT_HTTP_RETRY_MAX_MS")) r.retry_max_delay = *v;
  if (auto v = env.milliseconds("ZARRKIT_HTTP_RETRY_TOTAL_MS")) r.retry_total = *v;
  if (auto v = env.boolean("ZARRKIT_HTTP_VERIFY_TLS")) r.verify_tls = *v;
  // The first of these that is set: zarrkit's own, boto3's, curl's.
  for (const char* name : {"ZARRKIT_CA_BUNDLE", "AWS_CA_BUNDLE", "CURL_CA_BUNDLE"}) {
    if (auto path = env.text(name)) {
      r.ca_bundle = *path;
      break;
    }
  }
  if (auto v = env.bytes("ZARRKIT_S3_MULTIPART_THRESHOLD")) r.s3_multipart_threshold_bytes = *v;
  if (auto v = env.bytes("ZARRKIT_S3_PART_SIZE")) r.s3_part_size_bytes = *v;

  GpuConfig& g = c.gpu;
  if (auto v = env.positive_size("ZARRKIT_GPU_BATCH_BYTES")) g.batch_budget_bytes = *v;
  if (auto v = env.non_negative_integer("ZARRKIT_GPU_PIPELINE_DEPTH")) {
    g.pipeline_depth = to_size(std::clamp<std::uint64_t>(*v, 1, 8));
  }
  if (auto v = env.non_negative_integer("ZARRKIT_GPU_DEVICES_SHARING_HOST")) {
    g.devices_sharing_host = to_size(std::clamp<std::uint64_t>(*v, 1, 1024));
  }
  if (auto v = env.boolean("ZARRKIT_NVCOMP_DECODE")) g.nvcomp_decode = *v;
  if (auto v = env.non_negative_integer("ZARRKIT_NVCOMP_MIN_CHUNKS")) g.nvcomp_min_chunks = std::max<std::uint64_t>(*v, 1);
  if (auto v = env.text("ZARRKIT_ZSTD_KERNELS")) g.zstd_kernels = detail::parse_kernel_use(*v, "ZARRKIT_ZSTD_KERNELS");
  if (auto v = env.text("ZARRKIT_DEFLATE_KERNELS")) {
    g.deflate_kernels = detail::parse_kernel_use(*v, "ZARRKIT_DEFLATE_KERNELS");
  }
  if (auto v = env.boolean("ZARRKIT_GDS_DIRECT")) g.gds_direct = *v;
  if (auto v = env.text("ZARRKIT_GDS_MODE")) g.gds_mode = detail::parse_gds_mode(*v, "ZARRKIT_GDS_MODE");
  if (auto v = env.positive_size("ZARRKIT_GDS_THREADS")) g.gds_threads = to_size(std::min<std::uint64_t>(*v, 256));
  if (auto v = env.positive_size("ZARRKIT_GDS_PIECE_BYTES")) g.gds_piece_bytes = *v;
  if (auto v = env.text("ZARRKIT_CUFILE_LIBRARY")) g.cufile_library = *v;
  if (auto v = env.text("ZARRKIT_NVCOMP_LIBRARY")) g.nvcomp_library = *v;

  CacheConfig& cache = c.cache;
  if (auto v = env.size("ZARRKIT_CACHE_BYTES")) cache.host_bytes = *v;
  if (auto v = env.size("ZARRKIT_CACHE_ARRAY_BYTES")) cache.array_bytes = *v;
  if (auto v = env.size("ZARRKIT_CACHE_DEVICE_BYTES")) cache.device_bytes = *v;
  return c;
}

namespace detail {

GdsMode parse_gds_mode(std::string_view text, std::string_view where) {
  const std::string mode = lower(text);
  if (mode == "auto") return GdsMode::kAuto;
  if (mode == "cufile") return GdsMode::kCufile;
  if (mode == "compat") return GdsMode::kCompat;
  fail_invalid("{} is \"{}\": it must be auto, cufile or compat", where, text);
}

KernelUse parse_kernel_use(std::string_view text, std::string_view where) {
  if (lower(text) == "auto") return KernelUse::kAuto;
  if (const auto b = boolean_word(text)) return *b ? KernelUse::kOn : KernelUse::kOff;
  fail_invalid("{} is \"{}\": it must be auto, on (1, true, yes) or off (0, false, no)", where, text);
}

std::string_view kernel_use_name(KernelUse use) {
  switch (use) {
    case KernelUse::kOff: return "off";
    case KernelUse::kAuto: return "auto";
    case KernelUse::kOn: return "on";
  }
  return "?";
}

std::string_view gds_mode_name(GdsMode mode) {
  switch (mode) {
    case GdsMode::kAuto: return "auto";
    case GdsMode::kCufile: return "cufile";
    case GdsMode::kCompat: return "compat";
  }
  return "?";
}

}  // namespace detail

}  // namespace zarrkit
