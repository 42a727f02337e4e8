// SCC's Eq. 1: the timeslice Linux 3.13's scheduler granted a CFS task of a given nice value, which SCC tunes.
// Today's CFS/EEVDF turns nice into a weight instead, so the SCC module reports this beside the slices measured.
#pragma once

namespace tandem {

// (140 - P) x 20 ms if P < 120, (140 - P) x 5 ms otherwise, P = 120 + nice (the static priority, 100..139).
double eq1_quantum_ms(int nice);

}  // namespace tandem
