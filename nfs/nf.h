// The NF API: a network function is an object with one per-batch function, registered by type name.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "contract/arg_schema.h"
#include "contract/batch.h"
#include "descriptor.h"

namespace tandem {

// What an NF instance knows about where it runs; DPDK objects it creates are named after `unique_name`
// so that several instances of one type can live in one deployment.
struct NfContext {
  std::string name;         // the NF's name in the spec
  std::string unique_name;  // short, unique in the run; safe for rte_* object names (nf_instance_name)
  int index = 0;            // global NF index in the deployment
};

// The unique name of NF `nf_index`'s instance in the worker process the manager started with `process_serial`
// (never reused in a run, unlike a pid), built from the arguments of `generation` (0: the spec's). The manager
// finds the DPDK objects of a gone instance by it (NfType::release_objects).
std::string nf_instance_name(uint64_t process_serial, int nf_index, uint32_t generation);

class NetworkFunction {
 public:
  virtual ~NetworkFunction() = default;
  // Processes `batch` in place; packets to drop go to batch.dropped (see Batch::filter).
  virtual void process(Batch& batch) = 0;
  // NF-specific counters for the results (e.g. the flow table size of `counter`).
  virtual json report() const { return json::object(); }
};

struct NfType {
  std::string name;
  std::string help;
  std::vector<ArgSpec> args;
  // Checks what the schema cannot (e.g. the syntax of firewall rules); needs no EAL.
  std::function<void(const json& args, const std::string& path, SpecErrors& errors)> check = nullptr;
  // Builds an instance from resolved arguments; may use DPDK libraries, so runs after EAL init.
  std::function<std::unique_ptr<NetworkFunction>(const json& args, const NfContext& context)> create;
  // For a type whose instances create DPDK objects (hugepage memory, shared by every process): frees those of the
  // instance named `unique_name`, found by their names, once its process is gone or the instance retired (a worker
  // frees none itself: dataplane/worker/worker_main.cc). Returns how many it found and freed.
  std::function<int(const std::string& unique_name)> release_objects = nullptr;
  // What it does to a packet under any of its arguments (nfs/descriptor.h); a test holds each type to it.
  NfDescriptor descriptor;
  // The output gates where the arguments name them (a flow classifier's SFCs); unset: descriptor.gates.
  std::function<std::vector<std::string>(const json& args)> gates_of = nullptr;
};

const std::map<std::string, NfType>& nf_types();

// The output gates of an NF of `type` with `args` (resolved), gate 0 first.
std::vector<std::string> nf_gates(const NfType& type, const json& args);

// Each NF file registers its type with one static NfRegistration.
struct NfRegistration {
  explicit NfRegistration(NfType type);
};

}  // namespace tandem
