// libFuzzer target: attacker-chosen bytes as the deployment document the manager reads (`tandem-manager --check`),
// under ASan and UBSan. Bad documents must be refused with an exception the manager reports; nothing may crash.
#include <cstdint>
#include <stdexcept>

#include "catalog/catalog.h"

using namespace tandem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  json doc = json::parse(data, data + size, nullptr, false);
  if (doc.is_discarded()) return -1;  // not JSON: the control plane never writes such a file
  try {
    Deployment deployment = parse_deployment(doc);
    (void)check_report(deployment, {}).dump();
  } catch (const std::exception&) {
    // A refusal: the manager prints it and exits 2. A crash or a sanitizer report is the bug this looks for.
  }
  return 0;
}
