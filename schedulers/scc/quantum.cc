// Eq. 1 of the SCC paper (Sec. 5.2.1).
#include "quantum.h"

namespace tandem {

double eq1_quantum_ms(int nice) {
  int priority = 120 + nice;
  return priority < 120 ? (140 - priority) * 20.0 : (140 - priority) * 5.0;
}

}  // namespace tandem
