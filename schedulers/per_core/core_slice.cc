// Cutting a run's deployment down to one core's part, and the part's worker plans back to the run's indexes.
#include "core_slice.h"

#include <algorithm>
#include <stdexcept>

namespace tandem {

namespace {

// The part's index of each of the run's (-1: not in the part), from the run's index of each of the part's.
std::vector<int> inverse(const std::vector<int>& run_of_local, size_t run_size) {
  std::vector<int> local(run_size, -1);
  for (size_t i = 0; i < run_of_local.size(); i++) local[static_cast<size_t>(run_of_local[i])] = static_cast<int>(i);
  return local;
}

// `indexes` in the part's numbering, those outside it left out.
std::vector<int> in_part(const std::vector<int>& indexes, const std::vector<int>& local) {
  std::vector<int> kept;
  for (int index : indexes)
    if (index >= 0 && local[static_cast<size_t>(index)] >= 0) kept.push_back(local[static_cast<size_t>(index)]);
  return kept;
}

int local_or_none(int index, const std::vector<int>& local) {
  return index < 0 ? -1 : local[static_cast<size_t>(index)];
}

// The items of `all` at `taken`, each given its index among them and its references renumbered by `renumber`.
template <typename Item, typename Renumber>
std::vector<Item> taken_renumbered(const std::vector<Item>& all, const std::vector<int>& taken, Renumber renumber) {
  std::vector<Item> part;
  for (int index : taken) {
    Item item = all[static_cast<size_t>(index)];
    item.index = static_cast<int>(part.size());
    renumber(item);
    part.push_back(std::move(item));
  }
  return part;
}

}  // namespace

CoreSlice slice_of_core(const Deployment& run, int core) {
  CoreSlice slice{core, run, {}};
  slice.map.whole = false;
  for (const NfConfig& nf : run.nfs)
    if (nf.core == core) slice.map.nfs.push_back(nf.index);
  std::vector<int> nf_local = inverse(slice.map.nfs, run.nfs.size());
  for (const RingConfig& ring : run.rings)
    if (local_or_none(ring.from, nf_local) >= 0 || local_or_none(ring.to, nf_local) >= 0)
      slice.map.rings.push_back(ring.index);
  std::vector<int> ring_local = inverse(slice.map.rings, run.rings.size());
  for (const ChainConfig& chain : run.chains)
    if (!in_part(chain.nfs, nf_local).empty()) slice.map.chains.push_back(chain.index);
  std::vector<int> chain_local = inverse(slice.map.chains, run.chains.size());
  for (const WorkerPlan& plan : run.workers)
    if (plan.core == core) slice.map.workers.push_back(plan.index);

  Deployment& part = slice.deployment;
  part.nfs = taken_renumbered(run.nfs, slice.map.nfs, [&](NfConfig& nf) {
    nf.chain = chain_local[static_cast<size_t>(nf.chain)];
    nf.in_rings = in_part(nf.in_rings, ring_local);
    nf.out_rings = in_part(nf.out_rings, ring_local);
    std::vector<std::vector<int>> branches;
    for (const std::vector<int>& branch : nf.branches)
      if (std::vector<int> kept = in_part(branch, nf_local); !kept.empty()) branches.push_back(kept);
    nf.branches = branches;
    nf.scale_group = local_or_none(nf.scale_group, nf_local);
    if (nf.scale_group < 0) nf.instance = 0;  // its instance 1 runs on another core: here it is an NF of its own
    if (nf.scale) nf.scale->instances = in_part(nf.scale->instances, nf_local);
  });
  part.rings = taken_renumbered(run.rings, slice.map.rings, [&](RingConfig& ring) {
    ring.chain = chain_local[static_cast<size_t>(ring.chain)];
    ring.from = local_or_none(ring.from, nf_local);
    ring.to = local_or_none(ring.to, nf_local);
  });
  part.chains = taken_renumbered(run.chains, slice.map.chains, [&](ChainConfig& chain) {
    chain.nfs = in_part(chain.nfs, nf_local);
    chain.rings = in_part(chain.rings, ring_local);
    chain.exit_rings.clear();
    chain.entry_ring = -1;
    // The part's entry is the chain's where its first NF is here, else the ring from another core that comes first
    // in the chain; its exits, the rings that leave it (to the sink or another core).
    for (int ring : chain.rings) {
      const RingConfig& config = part.rings[static_cast<size_t>(ring)];
      if (config.from < 0 && chain.entry_ring < 0) chain.entry_ring = ring;
      if (config.to < 0) chain.exit_rings.push_back(ring);
    }
    if (chain.entry_ring < 0) chain.entry_ring = chain.rings.front();
  });
  part.workers.clear();
  for (int w : slice.map.workers) {
    WorkerPlan plan = run.workers[static_cast<size_t>(w)];
    plan.index = static_cast<int>(part.workers.size());
    for (Segment& segment : plan.segments) {
      for (int nf : segment.nfs)
        if (nf_local[static_cast<size_t>(nf)] < 0)
          throw std::logic_error("worker " + plan.name + " on core " + std::to_string(core) + " runs NF " +
                                 run.nfs[static_cast<size_t>(nf)].name + " of core " +
                                 std::to_string(run.nfs[static_cast<size_t>(nf)].core));
      segment.nfs = in_part(segment.nfs, nf_local);
      segment.in_rings = in_part(segment.in_rings, ring_local);
      segment.out_rings = in_part(segment.out_rings, ring_local);
    }
    part.workers.push_back(std::move(plan));
  }
  return slice;
}

std::vector<WorkerPlan> plans_in_run(const CoreSlice& slice, std::vector<WorkerPlan> plans) {
  auto to_run = [](std::vector<int>& indexes, const std::vector<int>& run_of_local) {
    for (int& index : indexes) index = run_of_local[static_cast<size_t>(index)];
  };
  for (WorkerPlan& plan : plans)
    for (Segment& segment : plan.segments) {
      to_run(segment.nfs, slice.map.nfs);
      to_run(segment.in_rings, slice.map.rings);
      to_run(segment.out_rings, slice.map.rings);
    }
  return plans;
}

}  // namespace tandem
