// Decoding a c-blosc 1.x frame piece by piece (PieceReader in codec.h), for the blosc codec.
//
// A frame's blocks are independent: each piece is decoded block by block with
// blosc_getitem. Where the frame is in memory, blosc_getitem reads it there. Where it is
// read from a store, only a few blocks' compressed bytes are held at a time: they go into
// a small frame of their own (the frame's header and block offsets, with the offsets of
// these blocks and the compressed size rewritten to match), which blosc_getitem decodes
// exactly as it would the whole frame, or fails on where a block's bytes reach past those
// read (the caller then decodes the whole frame, as always).
#pragma once

#include <cstdint>
#include <memory>

#include "zarrkit/buffer.h"
#include "zarrkit/codec.h"

namespace zarrkit::blosc_pieces {

// What the frame's header says, checked by the codec against the data and the chunk.
struct Frame {
  std::size_t nbytes = 0;    // decoded
  std::size_t cbytes = 0;    // encoded, header included
  std::size_t typesize = 0;
  std::size_t blocksize = 0;
  int version = 0;
  int flags = 0;
};

// A reader of the frame in `source`; null where this frame cannot be decoded in pieces (an
// older format version, sizes that are not whole items of the typesize, block offsets out
// of order when the frame is not in memory): the caller decodes it whole then.
std::unique_ptr<PieceReader> make_reader(std::shared_ptr<ByteSource> source, const Frame& frame);

}  // namespace zarrkit::blosc_pieces
