// The deployment the schedulers' planning tests share: chain a (a1, a2 on core 1, a3 on core 2, a4 on core 1) and
// chain b (b1 on core 1), macswap NFs, under the given scheduler.
#pragma once

#include "contract/deployment.h"

namespace tandem {

inline Deployment two_chain_deployment(const json& scheduler = {{"name", "rtc"}}) {
  json chain_a = {{"name", "a"},
                  {"traffic", {{"sizes", {{64, 1}}}}},
                  {"nfs",
                   {{{"name", "a1"}, {"type", "macswap"}, {"core", 1}},
                    {{"name", "a2"}, {"type", "macswap"}, {"core", 1}},
                    {{"name", "a3"}, {"type", "macswap"}, {"core", 2}},
                    {{"name", "a4"}, {"type", "macswap"}, {"core", 1}}}}};
  json chain_b = {{"name", "b"},
                  {"traffic", {{"sizes", {{64, 1}}}}},
                  {"nfs", {{{"name", "b1"}, {"type", "macswap"}, {"core", 1}}}}};
  return parse_deployment({{"scheduler", scheduler}, {"chains", {chain_a, chain_b}}});
}

}  // namespace tandem
