// Chain-ordered, chain-interleaved NF order on a core.
#include "chain_order.h"

namespace tandem {

std::vector<int> chain_order_on_core(const Deployment& deployment, int core) {
  std::vector<std::vector<int>> per_chain;
  for (const ChainConfig& chain : deployment.chains) {
    std::vector<int> here;
    for (int nf : chain.nfs)
      if (deployment.nfs[nf].core == core) here.push_back(nf);
    if (!here.empty()) per_chain.push_back(here);
  }
  std::vector<int> order;
  for (size_t depth = 0;; depth++) {
    bool any = false;
    for (const auto& chain : per_chain)
      if (depth < chain.size()) {
        order.push_back(chain[depth]);
        any = true;
      }
    if (!any) break;
  }
  return order;
}

}  // namespace tandem
