// The manager's thread that frees gone and retired NF instances' DPDK objects.
#include "nf_object_reclaim.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "nfs/nf.h"

namespace tandem {
namespace {

// How often it looks for exited processes when nothing wakes it; a freed table is no hurry.
constexpr auto kLookEvery = std::chrono::milliseconds(100);

bool has_exited(int pidfd) {
  pollfd look{.fd = pidfd, .events = POLLIN, .revents = 0};
  return poll(&look, 1, 0) == 1 && (look.revents & POLLIN) != 0;
}

}  // namespace

NfObjectReclaim::NfObjectReclaim(std::function<uint32_t(int nf)> latest_generation)
    : latest_generation_(std::move(latest_generation)), thread_([this] { work(); }) {}

NfObjectReclaim::~NfObjectReclaim() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  for (const Process& process : processes_)
    if (process.pidfd >= 0) close(process.pidfd);
}

void NfObjectReclaim::watch(uint64_t serial, pid_t pid, std::vector<Nf> nfs) {
  // A pidfd names this process, not whatever process gets its pid once it has been reaped.
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  std::lock_guard lock(mutex_);
  if (pidfd < 0) {
    unwatched_++;
    return;
  }
  processes_.push_back({.serial = serial, .pid = pid, .pidfd = pidfd, .nfs = std::move(nfs), .freed_below = {}});
}

void NfObjectReclaim::retire(pid_t pid, int nf, uint32_t generation) {
  {
    std::lock_guard lock(mutex_);
    retirements_.push_back({pid, nf, generation});
  }
  wake_.notify_all();
}

void NfObjectReclaim::set_quiet(bool quiet) {
  if (quiet == quiet_seen_) return;
  quiet_seen_ = quiet;
  std::unique_lock lock(mutex_);
  quiet_ = quiet;
  if (quiet) {
    lock.unlock();
    wake_.notify_all();
    return;
  }
  idle_.wait(lock, [this] { return !busy_; });
}

std::vector<NfObjectReclaim::Release> NfObjectReclaim::due() {
  std::vector<Release> releases;
  for (const Retirement& retirement : retirements_) {
    // The live process of that pid (one that exited is freed whole below).
    auto process = std::find_if(processes_.begin(), processes_.end(),
                                [&](const Process& p) { return p.pid == retirement.pid && !has_exited(p.pidfd); });
    if (process == processes_.end()) continue;
    auto nf = std::find_if(process->nfs.begin(), process->nfs.end(),
                           [&](const Nf& candidate) { return candidate.index == retirement.nf; });
    uint32_t& below = process->freed_below[retirement.nf];
    if (nf == process->nfs.end() || retirement.generation <= below) continue;
    releases.push_back({process->serial, *nf, below, retirement.generation - 1});
    below = retirement.generation;
  }
  retirements_.clear();
  for (auto process = processes_.begin(); process != processes_.end();) {
    if (!has_exited(process->pidfd)) {
      ++process;
      continue;
    }
    for (const Nf& nf : process->nfs) {
      uint32_t from = process->freed_below[nf.index], to = latest_generation_(nf.index);
      if (from <= to) releases.push_back({process->serial, nf, from, to});
    }
    close(process->pidfd);
    process = processes_.erase(process);
  }
  return releases;
}

void NfObjectReclaim::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, kLookEvery, [this] { return stop_ || (quiet_ && !retirements_.empty()); });
    if (stop_) return;
    if (!quiet_) continue;
    std::vector<Release> releases = due();
    if (releases.empty()) continue;
    busy_ = true;
    lock.unlock();
    auto begin = std::chrono::steady_clock::now();
    uint64_t freed = 0;
    for (const Release& release : releases) {
      const auto& release_objects = nf_types().at(release.nf.type).release_objects;
      if (!release_objects) continue;
      for (uint32_t generation = release.from; generation <= release.to; generation++)
        freed += static_cast<uint64_t>(release_objects(nf_instance_name(release.serial, release.nf.index, generation)));
    }
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    lock.lock();
    busy_ = false;
    objects_freed_ += freed;
    passes_++;
    seconds_ += took;
    longest_s_ = std::max(longest_s_, took);
    idle_.notify_all();
  }
}

json NfObjectReclaim::report() const {
  std::lock_guard lock(mutex_);
  return {{"objects_freed", objects_freed_},
          {"passes", passes_},
          {"ms", seconds_ * 1e3},
          {"longest_ms", longest_s_ * 1e3},
          {"processes_unwatched", unwatched_}};
}

}  // namespace tandem
