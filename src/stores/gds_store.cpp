// GdsStore: LocalStore's behaviour for everything but reads into device memory, which open
// the files here and hand them to the GPU module's engine (stores/gds_engine.h).
#include "zarrkit/stores/gds_store.h"

#include <algorithm>
#include <atomic>
#include <limits>

#include "core/checked_math.h"
#include "stores/gds_engine.h"
#include "stores/gds_plan.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {

namespace detail {
namespace {
std::atomic<GdsEngineFactory> g_factory{nullptr};
}
void set_gds_engine_factory(GdsEngineFactory factory) { g_factory.store(factory); }
GdsEngineFactory gds_engine_factory() { return g_factory.load(); }
}  // namespace detail

namespace {

// Values in get_many's one allocation start at multiples of this (as the GPU reader's
// chunk inputs do); the padding between them may be overwritten by a shared piece.
constexpr std::uint64_t kValueAlignment = 256;

bool wants_device(MemoryKind kind) { return kind == MemoryKind::kDevice; }

}  // namespace

std::string GdsPathReport::name() const {
  if (path == GdsPath::kCompat) return "compat";
  return cufile_compat_mode ? "cufile-compat" : "cufile";
}

GdsOptions resolve_gds_options(GdsOptions options) {
  const GpuConfig& settings = current_config().gpu;
  if (!options.mode) options.mode = settings.gds_mode;
  if (options.threads == 0) options.threads = settings.gds_threads;
  options.threads = std::clamp<std::size_t>(options.threads, 1, 256);
  if (options.piece_bytes == 0) options.piece_bytes = settings.gds_piece_bytes;
  if (options.piece_bytes == 0) fail_invalid("GDS pieces of 0 bytes: at least 1");
  if (options.piece_bytes > (1ull << 30)) fail_invalid("GDS pieces of {} bytes: at most 1 GiB", options.piece_bytes);
  return options;
}

// ---- The store ---------------------------------------------------------------------------

struct GdsStore::DeviceRead {
  std::string_view key;
  const LocalFile* file = nullptr;
  std::uint64_t file_offset = 0;
  std::uint64_t length = 0;
  std::byte* dest = nullptr;
};

GdsStore::GdsStore(std::shared_ptr<LocalStore> inner, GdsOptions options)
    : inner_(std::move(inner)),
      options_(resolve_gds_options(options)),
      cufile_library_(current_config().gpu.cufile_library) {
  if (!inner_) fail_invalid("a GDS store needs a local store to wrap");
}

GdsStore::~GdsStore() = default;

std::shared_ptr<GdsStore> GdsStore::open(std::filesystem::path root, LocalStoreOptions local, GdsOptions options) {
  return std::make_shared<GdsStore>(LocalStore::open(std::move(root), std::move(local)), options);
}

StoreCapabilities GdsStore::capabilities() const { return inner_->capabilities(); }

std::string GdsStore::describe() const { return "gds://" + inner_->root().string(); }

std::string GdsStore::cache_identity() const { return inner_->cache_identity(); }

std::shared_ptr<detail::GdsEngine> GdsStore::engine(std::string_view key) {
  // The factory keeps one engine per device (the current one) and settings; asked each time,
  // so that reads into another device's memory get that device's engine.
  std::lock_guard lock(engine_mutex_);
  const detail::GdsEngineFactory factory = detail::gds_engine_factory();
  if (factory == nullptr) {
    fail_unsupported("no CUDA device: {} cannot read {} into device memory without zarrkit's GPU module (a build "
                     "with CUDA, where a device allocation or install_gpu_support() loads it)",
                     describe(), key.empty() ? std::string("values") : fmt::format("\"{}\"", key));
  }
  engine_ = factory({*options_.mode, options_.threads, options_.piece_bytes, cufile_library_});
  return engine_;
}

GdsPathReport GdsStore::device_path() { return engine("")->path(); }

GdsStats GdsStore::stats() const {
  std::lock_guard lock(refusal_mutex_);
  return {values_cufile_.load(), values_compat_.load(), bytes_cufile_.load(), bytes_compat_.load(),
          cufile_refused_.load(), cufile_refusal_};
}

void GdsStore::run_device_reads(detail::GdsEngine& e, std::span<const DeviceRead> reads, std::uint64_t max_gap) {
  if (reads.empty()) return;
  std::vector<detail::DeviceFileRead> requests;
  requests.reserve(reads.size());
  for (const DeviceRead& r : reads) {
    requests.push_back({r.file->fd(), &r.file->io(), r.file_offset, r.length, r.dest});
  }
  const detail::DeviceReadOutcome outcome = e.read(requests, max_gap);
  values_cufile_.fetch_add(outcome.reads_cufile);
  values_compat_.fetch_add(outcome.reads_compat);
  bytes_cufile_.fetch_add(outcome.bytes_cufile);
  bytes_compat_.fetch_add(outcome.bytes_compat);
  cufile_refused_.fetch_add(outcome.cufile_refused);
  if (!outcome.cufile_refusal.empty()) {
    std::lock_guard lock(refusal_mutex_);
    if (cufile_refusal_.empty()) cufile_refusal_ = outcome.cufile_refusal;
  }
  if (!outcome.failures.empty()) {
    const auto& first = outcome.failures.front();
    const DeviceRead& r = reads[first.read];
    fail_io("{}: cannot read key \"{}\" into device memory (bytes [{}, {}) of its file): {}", describe(), r.key,
            r.file_offset, r.file_offset + r.length, first.what);
  }
}

namespace {

// Opens the values of `keys` (in parallel when there are many: each open checks the path
// component by component).
std::vector<std::optional<LocalFile>> open_all(const LocalStore& store, std::span<const std::string> keys) {
  std::vector<std::optional<LocalFile>> files(keys.size());
  auto open_one = [&](std::size_t i) {
    if (auto file = store.open_file(keys[i])) files[i].emplace(std::move(*file));
  };
  if (keys.size() <= 8) {
    for (std::size_t i = 0; i < keys.size(); ++i) open_one(i);
  } else {
    shared_thread_pool().parallel_for(keys.size(), open_one);
  }
  return files;
}

}  // namespace

std::optional<Buffer> GdsStore::get(std::string_view key, const BufferPrototype& prototype,
                                    std::optional<ByteRange> range) {
  if (!wants_device(prototype.kind())) return inner_->get(key, prototype, range);
  const ByteRange whole = ByteRange::from_offset(0);
  auto parts = get_ranges(key, std::span(range ? &*range : &whole, 1), prototype);
  if (!parts) return std::nullopt;
  return std::move(parts->front());
}

std::vector<std::optional<Buffer>> GdsStore::get_many(std::span<const std::string> keys,
                                                      const BufferPrototype& prototype) {
  if (!wants_device(prototype.kind())) return inner_->get_many(keys, prototype);
  const auto device = engine(keys.empty() ? std::string_view() : std::string_view(keys.front()));
  const std::vector<std::optional<LocalFile>> files = open_all(*inner_, keys);
  std::vector<std::uint64_t> sizes;
  for (const auto& f : files) sizes.push_back(f ? f->size() : 0);
  const std::vector<std::uint64_t> offsets = detail::pack_values(sizes, kValueAlignment);
  Buffer block = prototype.allocate(to_size(offsets.back(), "the values' total size"));
  std::vector<DeviceRead> reads;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (files[i] && sizes[i] > 0) reads.push_back({keys[i], &*files[i], 0, sizes[i], block.data() + offsets[i]});
  }
  run_device_reads(*device, reads, kValueAlignment - 1);
  std::vector<std::optional<Buffer>> values(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (files[i]) values[i] = block.slice(to_size(offsets[i]), to_size(sizes[i]));
  }
  return values;
}

std::optional<std::vector<Buffer>> GdsStore::get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                        const BufferPrototype& prototype) {
  if (!wants_device(prototype.kind())) return inner_->get_ranges(key, ranges, prototype);
  const auto device = engine(key);
  const std::optional<LocalFile> file = inner_->open_file(key);
  if (!file) return std::nullopt;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;  // begin, length
  std::vector<std::uint64_t> lengths;
  for (const ByteRange& range : ranges) {
    const auto [begin, end] = range.resolve(file->size());
    spans.emplace_back(begin, end - begin);
    lengths.push_back(end - begin);
  }
  const std::vector<std::uint64_t> offsets = detail::pack_values(lengths, kValueAlignment);
  Buffer block = prototype.allocate(to_size(offsets.back(), "the ranges' total size"));
  std::vector<DeviceRead> reads;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].second > 0) reads.push_back({key, &*file, spans[i].first, spans[i].second, block.data() + offsets[i]});
  }
  run_device_reads(*device, reads, kValueAlignment - 1);
  std::vector<Buffer> parts;
  for (std::size_t i = 0; i < spans.size(); ++i) parts.push_back(block.slice(to_size(offsets[i]), to_size(lengths[i])));
  return parts;
}

std::optional<std::uint64_t> GdsStore::read_into(std::string_view key, std::span<const ByteRange> ranges,
                                                 std::span<const MutableByteView> dests) {
  return inner_->read_into(key, ranges, dests);
}

std::optional<std::uint64_t> GdsStore::read_into(std::string_view key, std::span<const ByteRange> ranges,
                                                 std::span<const MutableByteView> dests, MemoryKind kind) {
  if (!wants_device(kind)) return inner_->read_into(key, ranges, dests);
  if (ranges.size() != dests.size()) {
    fail_invalid("read_into: {} ranges but {} destinations", ranges.size(), dests.size());
  }
  const auto device = engine(key);
  const std::optional<LocalFile> file = inner_->open_file(key);
  if (!file) return std::nullopt;
  std::vector<DeviceRead> reads;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto [begin, end] = ranges[i].resolve(file->size());
    if (end - begin > dests[i].size()) {
      fail_invalid("read_into: range {} has {} bytes, its destination {}", i, end - begin, dests[i].size());
    }
    if (end > begin) reads.push_back({key, &*file, begin, end - begin, dests[i].data()});
  }
  run_device_reads(*device, reads, 0);
  return file->size();
}

std::vector<std::optional<std::uint64_t>> GdsStore::read_values_into(std::span<const std::string> keys,
                                                                     std::span<const MutableByteView> dests,
                                                                     MemoryKind kind) {
  if (keys.size() != dests.size()) {
    fail_invalid("read_values_into: {} keys but {} destinations", keys.size(), dests.size());
  }
  std::vector<std::optional<std::uint64_t>> sizes(keys.size());
  if (!wants_device(kind)) {
    const ByteRange whole = ByteRange::from_offset(0);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const std::optional<std::uint64_t> size = inner_->size(keys[i]);
      if (size && *size > dests[i].size()) {
        sizes[i] = size;
        continue;
      }
      sizes[i] = inner_->read_into(keys[i], std::span(&whole, 1), dests.subspan(i, 1));
    }
    return sizes;
  }
  const auto device = engine(keys.empty() ? std::string_view() : std::string_view(keys.front()));
  const std::vector<std::optional<LocalFile>> files = open_all(*inner_, keys);
  std::vector<DeviceRead> reads;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!files[i]) continue;
    sizes[i] = files[i]->size();
    if (files[i]->size() > 0 && files[i]->size() <= dests[i].size()) {
      reads.push_back({keys[i], &*files[i], 0, files[i]->size(), dests[i].data()});
    }
  }
  run_device_reads(*device, reads, 0);
  return sizes;
}

bool GdsStore::exists(std::string_view key) { return inner_->exists(key); }
std::optional<std::uint64_t> GdsStore::size(std::string_view key) { return inner_->size(key); }
void GdsStore::set(std::string_view key, ByteView value) { inner_->set(key, value); }
void GdsStore::erase(std::string_view key) { inner_->erase(key); }
std::unique_ptr<UpdateLock> GdsStore::lock_for_update(std::string_view key) { return inner_->lock_for_update(key); }
void GdsStore::erase_prefix(std::string_view prefix) { inner_->erase_prefix(prefix); }
std::vector<std::string> GdsStore::list(std::string_view prefix) { return inner_->list(prefix); }
DirListing GdsStore::list_dir(std::string_view prefix) { return inner_->list_dir(prefix); }

}  // namespace zarrkit
