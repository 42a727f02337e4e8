// Ready-made frames for the generator: every flow at every frame size of a chain, built once.
#include "frame_templates.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace tandem {

FrameTemplates::FrameTemplates(const std::vector<uint16_t>& frame_sizes, uint32_t flows, const FrameShape& shape,
                               uint16_t chain, size_t budget_bytes) {
  std::set<uint16_t> sizes(frame_sizes.begin(), frame_sizes.end());
  if (!sizes.empty() && *sizes.begin() < shape.min_frame())  // the control plane refuses such a spec first
    throw std::invalid_argument("a " + std::to_string(*sizes.begin()) + " B frame cannot hold these headers");
  size_t total = 0;
  for (uint16_t size : sizes) total += stride(size) * flows;
  if (sizes.empty() || total > budget_bytes) return;
  offsets_.assign(*sizes.rbegin() + 1u, -1);
  bytes_.assign(total, 0);  // the payload stays zero
  size_t offset = 0;
  for (uint16_t size : sizes) {
    offsets_[size] = static_cast<int64_t>(offset);
    for (uint32_t flow = 0; flow < flows; flow++, offset += stride(size))
      build_frame(bytes_.data() + offset, size, shape, flow_address(flow, chain));
  }
}

}  // namespace tandem
