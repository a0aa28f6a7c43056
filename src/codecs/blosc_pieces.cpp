#include "codecs/blosc_pieces.h"

#include <blosc.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

namespace zarrkit::blosc_pieces {
namespace {

constexpr std::size_t kHeader = BLOSC_MIN_HEADER_LENGTH;  // 16 bytes, then the block offsets
constexpr std::size_t kCbytesAt = 12;                     // the header's compressed size

std::uint32_t load_le32(const std::byte* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

void store_le32(std::byte* p, std::size_t value) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
}

// Whole blocks are decoded straight into the piece; a block that a piece ends inside is
// decoded whole into a buffer, and the next piece starts with the rest of it, so every
// block is decoded once.
class BloscPieces final : public PieceReader {
 public:
  BloscPieces(std::shared_ptr<ByteSource> source, const Frame& frame)
      : source_(std::move(source)), frame_(frame), whole_(source_->in_memory()) {}

  // For a frame not in memory: reads its header and block offsets, which must rise from
  // block to block within the frame. False where they do not.
  bool read_offsets() {
    if ((frame_.flags & BLOSC_MEMCPYED) != 0) return frame_.cbytes == frame_.nbytes + kHeader;  // a plain copy
    const std::size_t blocks = (frame_.nbytes + frame_.blocksize - 1) / frame_.blocksize;
    table_ = kHeader + 4 * blocks;
    if (table_ >= frame_.cbytes) return false;
    prefix_.resize(table_);
    if (source_->read(0, prefix_) != table_) return false;
    starts_.resize(blocks);
    for (std::size_t i = 0; i < blocks; ++i) {
      starts_[i] = load_le32(prefix_.data() + kHeader + 4 * i);
      if (starts_[i] < table_ || starts_[i] >= frame_.cbytes || (i > 0 && starts_[i] <= starts_[i - 1])) return false;
    }
    return true;
  }
  bool in_memory() const { return whole_.has_value(); }

  bool read(MutableByteView out) override {
    if (out.size() > frame_.nbytes - pos_) return false;
    std::size_t done = 0;
    if (pos_ < held_end_) {  // the rest of the block the last piece ended in
      done = std::min(out.size(), held_end_ - pos_);
      std::memcpy(out.data(), held_.data() + (pos_ - held_begin_), done);
      pos_ += done;
    }
    // pos_ is at a block's start now, or the piece is complete.
    std::size_t whole = (out.size() - done) / frame_.blocksize * frame_.blocksize;
    if (pos_ + (out.size() - done) == frame_.nbytes) whole = out.size() - done;  // the last block may be shorter
    if (whole > 0) {
      if (!blocks(pos_, whole, out.data() + done)) return false;
      pos_ += whole;
      done += whole;
    }
    if (done < out.size()) {
      const std::size_t block = std::min(frame_.blocksize, frame_.nbytes - pos_);
      if (held_.empty()) held_ = Buffer::allocate(frame_.blocksize);
      if (!blocks(pos_, block, held_.data())) return false;
      held_begin_ = pos_;
      held_end_ = pos_ + block;
      const std::size_t rest = out.size() - done;
      std::memcpy(out.data() + done, held_.data(), rest);
      pos_ += rest;
    }
    return true;
  }
  bool finish() override { return pos_ == frame_.nbytes; }
  std::uint64_t granularity() const override { return frame_.blocksize; }

 private:
  // Bytes [offset, offset + size) of the decoded frame, whole blocks, into `dest`.
  bool blocks(std::size_t offset, std::size_t size, std::byte* dest) {
    if (whole_) return getitem(whole_->data(), offset, size, dest);
    if ((frame_.flags & BLOSC_MEMCPYED) != 0) return source_->read(kHeader + offset, MutableByteView(dest, size)) == size;
    // The compressed bytes of blocks first..last, in a frame of their own.
    const std::size_t first = offset / frame_.blocksize, last = (offset + size - 1) / frame_.blocksize;
    const std::size_t from = starts_[first];
    const std::size_t to = last + 1 < starts_.size() ? starts_[last + 1] : frame_.cbytes;
    // More than blocks of this size ever take (a plain copy of each split, four bytes of
    // length each): the offsets are not to be trusted; decode the whole frame instead.
    if (to - from > 2 * size + 64 * (last - first + 1)) return false;
    const std::size_t need = table_ + (to - from);
    if (part_.size() < need) {
      part_ = Buffer::allocate(need + need / 4);
      std::memcpy(part_.data(), prefix_.data(), table_);
    }
    store_le32(part_.data() + kCbytesAt, need);
    for (std::size_t i = first; i <= last; ++i) store_le32(part_.data() + kHeader + 4 * i, starts_[i] - from + table_);
    if (source_->read(from, part_.mutable_view().subspan(table_, to - from)) != to - from) return false;
    return getitem(part_.data(), offset, size, dest);
  }

  // blosc_getitem counts in items of the header's typesize; whole blocks are whole items.
  // The counts fit an int: the header's sizes are at most BLOSC_MAX_BUFFERSIZE.
  bool getitem(const std::byte* frame, std::size_t offset, std::size_t size, std::byte* dest) const {
    const int got = blosc_getitem(frame, static_cast<int>(offset / frame_.typesize),
                                  static_cast<int>(size / frame_.typesize), dest);
    return got >= 0 && static_cast<std::size_t>(got) == size;
  }

  std::shared_ptr<ByteSource> source_;
  Frame frame_;
  std::optional<ByteView> whole_;    // the frame, where it is in memory
  std::size_t table_ = 0;            // bytes of header and block offsets
  std::vector<std::byte> prefix_;    // the header and block offsets, as stored
  std::vector<std::size_t> starts_;  // each block's offset
  Buffer part_;                      // a frame of a few blocks
  std::size_t pos_ = 0;
  Buffer held_;  // one decoded block, bytes [held_begin_, held_end_) of the frame
  std::size_t held_begin_ = 0;
  std::size_t held_end_ = 0;
};

}  // namespace

std::unique_ptr<PieceReader> make_reader(std::shared_ptr<ByteSource> source, const Frame& frame) {
  if (frame.nbytes == 0 || frame.version != BLOSC_VERSION_FORMAT || frame.typesize == 0 || frame.blocksize == 0 ||
      frame.blocksize > frame.nbytes || frame.blocksize % frame.typesize != 0 || frame.nbytes % frame.typesize != 0) {
    return nullptr;
  }
  auto reader = std::make_unique<BloscPieces>(std::move(source), frame);
  if (!reader->in_memory() && !reader->read_offsets()) return nullptr;
  return reader;
}

}  // namespace zarrkit::blosc_pieces
