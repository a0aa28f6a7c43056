// The key-value store interface.
//
// Keys are '/'-separated relative paths ("group/array/c/0/1"). Every store validates keys
// with validate_key() before touching anything: no empty segments, no "." or "..", no
// backslash, no NUL, no leading '/'. Extra behaviour (caching, metrics, fault injection)
// is a wrapper store around another, never a flag.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zarrkit/buffer.h"

namespace zarrkit {

// A request for part of a value. Like zarr-python's RangeByteRequest, OffsetByteRequest
// and SuffixByteRequest. A range past the end of the value is clamped to it.
struct ByteRange {
  enum class Kind : std::uint8_t { kRange, kFromOffset, kSuffix };
  Kind kind = Kind::kRange;
  std::uint64_t start = 0;   // kRange, kFromOffset
  std::uint64_t end = 0;     // kRange: one past the last byte
  std::uint64_t suffix = 0;  // kSuffix: the last `suffix` bytes

  static ByteRange range(std::uint64_t start, std::uint64_t end) {
    return {Kind::kRange, start, end, 0};
  }
  static ByteRange from_offset(std::uint64_t start) { return {Kind::kFromOffset, start, 0, 0}; }
  static ByteRange last(std::uint64_t n) { return {Kind::kSuffix, 0, 0, n}; }

  // The [begin, end) this range selects of a value of `value_size` bytes, clamped.
  std::pair<std::uint64_t, std::uint64_t> resolve(std::uint64_t value_size) const;
};

struct StoreCapabilities {
  bool writable = true;
  bool listable = true;
  bool partial_reads = true;  // byte ranges are cheaper than whole reads
  // get_many and get_each keep many requests in flight (remote stores): readers fetch
  // chunks in batches through them rather than one get per worker thread.
  bool batched_gets = false;
  // How many requests the store keeps in flight at once (its transport's concurrency), 0
  // when it does not say: batched readers keep about twice as many chunks on the way.
  std::size_t requests_in_flight = 0;
};

struct DirListing {
  std::vector<std::string> keys;      // values directly under the prefix (names only)
  std::vector<std::string> prefixes;  // sub-directories directly under it (names only)
};

// Held while a value is read, changed and written back; released by destruction.
class UpdateLock {
 public:
  virtual ~UpdateLock() = default;
};

class Store {
 public:
  virtual ~Store() = default;

  virtual StoreCapabilities capabilities() const = 0;
  // "file:///data/x.zarr", "memory://0x..."; used in error messages.
  virtual std::string describe() const = 0;

  // The value of `key`, or nullopt if there is none. The bytes land in memory of the
  // prototype's kind. The buffer may share memory with the store (MemoryStore): treat it
  // as read-only.
  virtual std::optional<Buffer> get(std::string_view key,
                                    const BufferPrototype& prototype = BufferPrototype::host(),
                                    std::optional<ByteRange> range = std::nullopt) = 0;
  // The whole values of several keys (nullopt for an absent one). The default calls get()
  // once per key; remote stores send the requests together (capabilities().batched_gets).
  virtual std::vector<std::optional<Buffer>> get_many(std::span<const std::string> keys,
                                                      const BufferPrototype& prototype = BufferPrototype::host());
  // The whole values of several keys, each handed to `on_value` (its index in `keys`, the
  // value or nullopt when absent) on the calling thread as soon as it is there, in any
  // order; returns once every key has been handed over. Readers start decoding the first
  // values while the others still arrive. On a failure it throws; values handed over
  // before stay handed over, the others never come. The default runs get_many() and hands
  // the values over in order; remote stores hand each over as its response completes.
  using ValueHandler = std::function<void(std::size_t index, std::optional<Buffer> value)>;
  virtual void get_each(std::span<const std::string> keys, const BufferPrototype& prototype,
                        const ValueHandler& on_value);
  // Several ranges of one value; the default calls get() once per range.
  virtual std::optional<std::vector<Buffer>> get_ranges(
      std::string_view key, std::span<const ByteRange> ranges,
      const BufferPrototype& prototype = BufferPrototype::host());
  // Reads ranges of the value of `key` straight into the caller's memory: ranges[i] into
  // dests[i], which has that range's length. Returns the value's size, or nullopt when it is
  // absent. Where a range reaches past the end of the value, the rest of its destination is
  // left as it was: callers compare the size with what they expect. The default gets the
  // whole value and copies the ranges; LocalStore preads into the destinations.
  virtual std::optional<std::uint64_t> read_into(std::string_view key, std::span<const ByteRange> ranges,
                                                 std::span<const MutableByteView> dests);
  // The value of `key` opened for reading a part at a time (a large chunk decoded piece by
  // piece without holding all of it), or null when it is absent. Every read sees the value
  // as it was when opened. The default holds the whole value (get); LocalStore keeps the
  // file open and reads it with pread.
  virtual std::unique_ptr<ByteSource> open_reader(std::string_view key);
  virtual bool exists(std::string_view key);
  // Size in bytes of the value, nullopt if absent.
  virtual std::optional<std::uint64_t> size(std::string_view key);

  // Writes are atomic per key: a reader sees the old value or the new one, never a mix.
  virtual void set(std::string_view key, ByteView value) = 0;
  // Removes the key; no error if it is absent.
  virtual void erase(std::string_view key) = 0;
  // A lock that other processes updating this store take too, held by a read-modify-write
  // of `key` (a chunk written in part, an inner chunk of a shard) from reading the old value
  // to storing the new one, so that two processes changing different parts of one value do
  // not lose each other's change. nullptr (the default) where the store has none: memory
  // stores (one process), and stores whose writers are not coordinated yet. Threads of one
  // process are serialised by the engine's own key locks either way.
  virtual std::unique_ptr<UpdateLock> lock_for_update(std::string_view key);
  // A read-modify-write of `key` that loses no other writer's update: `change` gets the
  // current value (nullopt where absent) and returns the new one (nullopt: erase the key).
  // By default the read and the write happen under lock_for_update(key); stores with
  // conditional writes (S3) write only if the value is still the one read, and otherwise call
  // `change` again with the newer one, so `change` must compute from its argument alone.
  // Threads of one process still hold the engine's key lock around it.
  using UpdateFunction = std::function<std::optional<Buffer>(std::optional<Buffer> current)>;
  virtual void update(std::string_view key, const UpdateFunction& change);
  // Removes every key under `prefix` ("" means everything).
  virtual void erase_prefix(std::string_view prefix);

  // Prefixes name directories, not string prefixes: "a" and "a/" both mean the keys below
  // "a/" ("a/b", "a/c/d"), never "ab" nor "a" itself. "" is the root.
  // Every key under `prefix` (recursively), as full keys, sorted.
  virtual std::vector<std::string> list(std::string_view prefix = "") = 0;
  // The immediate children of the directory `prefix` ("" for the root), each list sorted.
  virtual DirListing list_dir(std::string_view prefix);

  // How the decoded-chunk cache (zarrkit/chunk_cache.h) names this store's values: a text
  // that, followed by a key, says where that value lives, the same for stores that read the
  // same values ("file:///data/x.zarr/" for a directory: a store opened on x.zarr/a names
  // "b" as one on x.zarr names "a/b"). The default is unique to this object.
  virtual std::string cache_identity() const;

 protected:
  // Made by a write of `key` (with `below`, of every key under the directory `key`) before
  // it starts: when it ends, done or failed, the process's decoded-chunk caches drop what
  // they hold of what it may have changed. Every store that writes makes one per write.
  class WriteScope {
   public:
    WriteScope(const Store& store, std::string_view key, bool below = false);
    ~WriteScope();
    WriteScope(const WriteScope&) = delete;
    WriteScope& operator=(const WriteScope&) = delete;

   private:
    const Store& store_;
    std::string_view key_;
    bool below_;
  };

 private:
  std::uint64_t instance_ = next_instance();
  static std::uint64_t next_instance();
};

// Throws InvalidArgumentError unless `key` is a safe relative key (see the file comment).
void validate_key(std::string_view key);
// Same for a prefix, which may also be "" (the root) or end in '/'.
void validate_prefix(std::string_view prefix);
// Joins path segments with '/', skipping empty ones: join_key("a/b", "zarr.json").
std::string join_key(std::string_view a, std::string_view b);
// Validates `prefix` and returns it without its trailing '/' ("" stays "").
std::string_view normalize_prefix(std::string_view prefix);
// True when `key` lies below the directory `dir` (already normalized; "" is the root).
bool key_is_under(std::string_view key, std::string_view dir);

}  // namespace zarrkit
