// One array read into several GPUs at once, and written from several: the selection is cut
// into parts (split_selection), each part lands in (or comes from) memory on its own device.
//
//   auto parts = zarrkit::split_selection(array.metadata(), {}, /*axis=*/0, /*parts=*/4);
//   std::vector<zarrkit::DevicePart> work;   // one view per part, each in its device's memory
//   zarrkit::read_into_devices(array, work);
//
// Each part runs on a thread of its own with its device current: its own streams, pinned
// staging and batches; the host's threads (the shared pool) serve all parts. The device of
// a part is the device that holds its memory. Host views work too (the parts are then read
// in parallel into host memory), so the same code runs where there is no GPU.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "zarrkit/array.h"
#include "zarrkit/metadata.h"
#include "zarrkit/ndbuffer.h"
#include "zarrkit/selection.h"

namespace zarrkit {

// One part: the selection it covers and the memory its values land in (or come from), in
// the selection's shape.
struct DevicePart {
  Selection selection;
  NDView view;
};

// Cuts `selection` (of an array with metadata `m`) along array axis `axis` into at most
// `parts` consecutive pieces, in order; together they select what `selection` selects.
// The cuts fall on the boundaries of the stored chunks (shards, for sharded arrays) and
// balance the chunks among the pieces, so that no chunk is read by two parts (and parts
// written from several devices never share a chunk); where the axis holds fewer chunks than
// `parts`, fewer pieces come back (never an empty one, unless the selection is empty: then
// one). An axis selected by an index list is cut by its entries (chunks may then be shared).
// InvalidArgumentError where `axis` is out of range, selected by an integer, or `parts` is 0.
std::vector<Selection> split_selection(const ArrayMetadata& m, const Selection& selection, std::size_t axis,
                                       std::size_t parts);

// Reads every part, all at once: one thread per part, on the device that holds its view.
// Errors of a part name it ("part 2 of 4 (device 1)"); the other parts still finish, then
// the first error is thrown.
void read_into_devices(const Array& array, std::span<const DevicePart> parts);

// Writes every part, all at once from its own device (views in device memory; host views
// work too). Parts whose selections touch a common stored chunk would each rewrite that
// chunk: such parts are written one after another, the others at once.
void write_from_devices(Array& array, std::span<const DevicePart> parts);

}  // namespace zarrkit
