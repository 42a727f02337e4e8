// How long the manager gives a run's phases. The control plane's watchdog allows for them too: it reads them from
// `tandem-manager --catalog` (limits), so the two never disagree.
#pragma once

namespace tandem {

// A worker attaching to shared memory, from its launch: they start one at a time (~80 ms each on our machines, ~1 s
// on an emulated CPU), each given this from its own launch, so a slow host that makes progress is not failed and a
// worker that makes none is named within it.
inline constexpr double kAttachSeconds = 10.0;
inline constexpr double kStopSeconds = 5.0;  // workers leaving their loops and detaching before they are killed

}  // namespace tandem
