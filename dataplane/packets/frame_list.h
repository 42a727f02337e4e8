// Ready frames of any sizes, back to back in one buffer: what the generator copies for HTTP requests or a replay.
#pragma once

#include <cstdint>
#include <vector>

#include "frame_builder.h"

namespace tandem {

class FrameList {
 public:
  // Zeroed room for one more frame of `frame_size` (with FCS) bytes; valid until the next append.
  uint8_t* append(uint16_t frame_size) {
    offsets_.push_back(bytes_.size());
    sizes_.push_back(frame_size);
    bytes_.resize(bytes_.size() + frame_size - kFcsBytes, 0);
    return bytes_.data() + offsets_.back();
  }
  bool empty() const { return sizes_.empty(); }
  size_t count() const { return sizes_.size(); }
  uint16_t frame_size(size_t i) const { return sizes_[i]; }  // with FCS, as spec sizes are given
  const uint8_t* frame(size_t i) const { return bytes_.data() + offsets_[i]; }

 private:
  std::vector<uint16_t> sizes_;
  std::vector<size_t> offsets_;
  std::vector<uint8_t> bytes_;
};

}  // namespace tandem
