// Ready-made frames, one per flow and frame size of a chain's traffic, that the generator copies instead of building.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "dataplane/packets/frame_builder.h"

namespace tandem {

// A chain's frames differ only in flow and size, so each can be built once (headers, a zero payload, both
// checksums) and copied per packet, as testpmd's txonly mode copies its header template. Building every 64 B
// frame anew cost the generator ~90 cycles a frame, most of the control core at 22 Mpps.
class FrameTemplates {
 public:
  // Many flows of large frames would no longer stay in the cache, and copying them from memory would cost
  // more than building them: beyond this, there are no templates and the generator builds every frame.
  static constexpr size_t kDefaultBudgetBytes = 256 * 1024;

  FrameTemplates() = default;  // none: frame() is always nullptr
  // Builds the frames of every size in `frame_sizes` (with FCS; repeats allowed) for flows 0..flows-1 of chain
  // `chain`, unless together they would take more than `budget_bytes`; throws std::invalid_argument for a size
  // below shape.min_frame().
  FrameTemplates(const std::vector<uint16_t>& frame_sizes, uint32_t flows, const FrameShape& shape, uint16_t chain,
                 size_t budget_bytes = kDefaultBudgetBytes);

  // The frame (frame_size - FCS bytes) of `flow` < flows, or nullptr when that size was not prebuilt.
  const uint8_t* frame(uint16_t frame_size, uint32_t flow) const {
    if (frame_size >= offsets_.size() || offsets_[frame_size] < 0) return nullptr;
    return bytes_.data() + static_cast<size_t>(offsets_[frame_size]) + static_cast<size_t>(flow) * stride(frame_size);
  }
  size_t bytes() const { return bytes_.size(); }

 private:
  // Each frame starts on a cache line of its own, so a copy reads no more lines than the frame spans.
  static size_t stride(uint16_t frame_size) { return (static_cast<size_t>(frame_size - kFcsBytes) + 63) & ~size_t{63}; }

  std::vector<int64_t> offsets_;  // by frame size: where its flows' frames start in bytes_; -1: not prebuilt
  std::vector<uint8_t> bytes_;
};

}  // namespace tandem
