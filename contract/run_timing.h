// How long the manager gives a run's phases. The control plane's watchdog allows for them too: it reads them from
// `tandem-manager --catalog` (limits), so the two never disagree.
#pragma once

namespace tandem {

inline constexpr double kAttachSeconds = 10.0;          // workers attaching to shared memory: this, plus
inline constexpr double kAttachSecondsPerWorker = 0.5;  // this per worker, started one at a time (~80 ms each here)
inline constexpr double kStopSeconds = 5.0;  // workers leaving their loops and detaching before they are killed

}  // namespace tandem
