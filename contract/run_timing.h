// How long the manager gives a run's phases. The control plane's watchdog allows for them too: it reads them from
// `tandem-manager --catalog` (limits), so the two never disagree.
#pragma once

namespace tandem {

// A worker attaching to shared memory, from its launch: they start one at a time (~80 ms each on our machines, ~1 s
// on an emulated CPU at a run's start, 30 s there during a re-layout beside polling NFs). So a worker is late only
// when it has used no CPU for kAttachSeconds, or has not attached kAttachMostSeconds after its launch though it ran
// (dataplane/run/attach_clock.h): a slow host that makes progress is not failed, a worker that makes none is named.
inline constexpr double kAttachSeconds = 10.0;
inline constexpr double kAttachMostSeconds = 120.0;
inline constexpr double kStopSeconds = 5.0;  // workers leaving their loops and detaching before they are killed

}  // namespace tandem
