// Test support: a cgroup2 hierarchy in a temporary directory, laid out as the kernel lays it out (its file names and
// formats) and answering writes as the kernel does, errors included, so the v2 file protocol is tested on any machine.
#pragma once

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cgroup_files.h"

namespace tandem {

// What it models (Documentation/admin-guide/cgroup-v2.rst and kernel/cgroup/cgroup.c): a new group gets the core
// files (cgroup.procs, cgroup.threads, cgroup.type, cgroup.controllers, cgroup.subtree_control, cgroup.freeze,
// cgroup.events) and the files of every controller its parent enables (cpu.weight, cpu.max; cpuset.cpus,
// cpuset.cpus.partition); cgroup.procs refuses a group that is no valid domain (cgroup.type "domain invalid", beside
// a threaded sibling: EOPNOTSUPP; a threaded group itself takes whole processes), a non-root group with controllers
// enabled for its children (EBUSY) and a gone process (ESRCH); cgroup.subtree_control refuses a controller its group
// is not offered (ENOENT), an unknown one (EINVAL), enabling in a non-root group with processes (EBUSY) and disabling
// one a child still enables (EBUSY); cpu.weight takes 1 to 10000 (ERANGE; not a number: EINVAL); cgroup.freeze 0 or
// 1 (ERANGE); rmdir refuses a group with a process or a child (EBUSY). cgroup_fs_test.cc asks the kernel the same
// where it can. fail_next() gives any other answer of the kernel's to the next write of a file.
class FakeCgroup2 final : public CgroupFiles {
 public:
  // `offered`: the root's cgroup.controllers (a v2-only host offers "cpuset cpu io memory hugetlb pids").
  explicit FakeCgroup2(std::string offered = "cpuset cpu io memory hugetlb pids") {
    char pattern[] = "/tmp/tandem-fake-cgroup2-XXXXXX";
    root_ = mkdtemp(pattern);
    // Every v2 controller this kernel has, offered or not, in the kernel's order: naming one it lacks is EINVAL.
    known_ = words("cpuset cpu io memory perf_event hugetlb pids rdma misc");
    put(root_ + "/cgroup.controllers", offered + "\n");
    put(root_ + "/cgroup.subtree_control", "");
    put(root_ + "/cgroup.procs", "");
    put(root_ + "/cgroup.threads", "");
    mounts_ = root_ + ".mounts";
  }
  ~FakeCgroup2() override {
    std::filesystem::remove_all(root_);
    std::filesystem::remove(mounts_);
  }
  FakeCgroup2(const FakeCgroup2&) = delete;
  FakeCgroup2& operator=(const FakeCgroup2&) = delete;

  const std::string& root() const { return root_; }
  // A mounts file (as /proc/self/mounts) with this tree as the cgroup2 mount, after `v1_lines`.
  std::string mounts_file(const std::string& v1_lines = "") {
    put(mounts_, v1_lines + "cgroup2 " + root_ + " cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n");
    return mounts_;
  }
  // The next write to a file named `name` (a base name: "cgroup.subtree_control") fails with `error`.
  void fail_next(const std::string& name, int error) { failures_[name] = error; }
  // A file's text, as a test reads it ("" if there is none).
  std::string text(const std::string& file) const { return get(file); }
  bool exists(const std::string& path) const { return std::filesystem::exists(path); }
  // Every write that succeeded, "file=value" in order.
  const std::vector<std::string>& writes() const { return writes_; }

  int make_group(const std::string& dir) override {
    std::string parent = dir.substr(0, dir.find_last_of('/'));
    if (!std::filesystem::is_directory(parent)) return ENOENT;
    if (std::filesystem::exists(dir)) return EEXIST;
    std::filesystem::create_directory(dir);
    put(dir + "/cgroup.procs", "");
    put(dir + "/cgroup.threads", "");
    std::string parent_type = get(parent + "/cgroup.type");
    put(dir + "/cgroup.type", parent_type == "threaded\n"          ? "threaded\n"
                              : parent_type == "domain threaded\n" ? "domain invalid\n"
                                                                   : "domain\n");
    put(dir + "/cgroup.subtree_control", "");
    put(dir + "/cgroup.freeze", "0\n");
    put(dir + "/cgroup.events", "populated 0\nfrozen 0\n");
    offer(dir, words(get(parent + "/cgroup.subtree_control")));
    return 0;
  }
  int remove_group(const std::string& dir) override {
    if (!std::filesystem::is_directory(dir)) return ENOENT;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.is_directory()) return EBUSY;
    if (!get(dir + "/cgroup.procs").empty()) return EBUSY;
    std::filesystem::remove_all(dir);
    std::string parent = dir.substr(0, dir.find_last_of('/'));
    if (get(parent + "/cgroup.type") == "domain threaded\n" && children_of_type(parent, "threaded\n").empty()) {
      put(parent + "/cgroup.type", "domain\n");  // no threaded child left: a plain domain again, its children valid
      for (const std::string& child : children_of_type(parent)) put(child + "/cgroup.type", "domain\n");
    }
    return 0;
  }
  int write(const std::string& file, const std::string& value) override {
    std::string name = file.substr(file.find_last_of('/') + 1), dir = file.substr(0, file.find_last_of('/'));
    if (!std::filesystem::is_regular_file(file)) return ENOENT;
    if (auto failure = failures_.find(name); failure != failures_.end()) {
      int error = failure->second;
      failures_.erase(failure);
      return error;
    }
    std::string v = value;
    while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
    int error = apply(dir, name, v);
    if (error == 0) writes_.push_back(file + "=" + v);
    return error;
  }
  std::optional<std::string> read(const std::string& file) override {
    if (!std::filesystem::is_regular_file(file)) return std::nullopt;
    return get(file);
  }
  int open_for_writes(const std::string& file) override {
    if (!std::filesystem::is_regular_file(file)) return -ENOENT;
    int fd = next_fd_++;  // a number only: nothing is really held open
    open_[fd] = file;
    return fd;
  }
  int rewrite(int fd, const std::string& value) override {
    auto file = open_.find(fd);
    return file == open_.end() ? EBADF : write(file->second, value);
  }
  void close_file(int fd) override { open_.erase(fd); }

 private:
  static std::vector<std::string> words(const std::string& list) {
    std::istringstream in(list);
    std::vector<std::string> out;
    for (std::string word; in >> word;) out.push_back(word);
    return out;
  }
  static std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& name : names) out += (out.empty() ? "" : " ") + name;
    return out.empty() ? "" : out + "\n";  // the kernel ends a list with a newline only if it printed a name
  }
  static bool has(const std::vector<std::string>& names, const std::string& name) {
    for (const std::string& n : names)
      if (n == name) return true;
    return false;
  }
  static void put(const std::string& file, const std::string& text) { std::ofstream(file, std::ios::trunc) << text; }
  static std::string get(const std::string& file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // The controllers a group's parent enables for it: its cgroup.controllers and those controllers' files.
  static void offer(const std::string& dir, const std::vector<std::string>& controllers) {
    put(dir + "/cgroup.controllers", joined(controllers));
    const std::map<std::string, std::map<std::string, std::string>> files = {
        {"cpu", {{"cpu.weight", "100\n"}, {"cpu.max", "max 100000\n"}}},
        {"cpuset", {{"cpuset.cpus", "\n"}, {"cpuset.cpus.effective", "\n"}, {"cpuset.cpus.partition", "member\n"}}}};
    for (const auto& [controller, its_files] : files)
      for (const auto& [name, initial] : its_files) {
        std::string path = dir + "/" + name;
        if (!has(controllers, controller))
          std::filesystem::remove(path);
        else if (!std::filesystem::exists(path))
          put(path, initial);
      }
  }
  static std::vector<std::string> children_of_type(const std::string& dir, const std::string& type = "") {
    std::vector<std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.is_directory() && (type.empty() || get(entry.path().string() + "/cgroup.type") == type))
        out.push_back(entry.path().string());
    return out;
  }
  std::vector<std::string> groups() const {
    std::vector<std::string> out = {root_};
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root_))
      if (entry.is_directory()) out.push_back(entry.path().string());
    return out;
  }
  static bool alive(const std::string& pid) {
    return std::regex_match(pid, std::regex("[0-9]+")) && (kill(std::stoi(pid), 0) == 0 || errno == EPERM);
  }

  int apply(const std::string& dir, const std::string& name, const std::string& v) {
    bool is_root = dir == root_;
    if (name == "cgroup.procs") {
      if (!std::regex_match(v, std::regex("[0-9]+"))) return EINVAL;
      if (!alive(v)) return ESRCH;
      std::string type = get(dir + "/cgroup.type");
      if (type == "domain invalid\n") return EOPNOTSUPP;
      if (!is_root && type != "threaded\n" && !words(get(dir + "/cgroup.subtree_control")).empty()) return EBUSY;
      for (const std::string& group : groups()) {  // a process is in exactly one group
        std::string kept;
        for (const std::string& pid : words(get(group + "/cgroup.procs")))
          if (pid != v) kept += pid + "\n";
        put(group + "/cgroup.procs", kept);
      }
      put(dir + "/cgroup.procs", get(dir + "/cgroup.procs") + v + "\n");
      for (const std::string& group : groups())
        if (group != root_)
          put(group + "/cgroup.events", "populated " + std::string(get(group + "/cgroup.procs").empty() ? "0" : "1") +
                                            "\nfrozen " + get(group + "/cgroup.freeze").substr(0, 1) + "\n");
      return 0;
    }
    if (name == "cgroup.subtree_control") {
      std::vector<std::string> enabled = words(get(dir + "/cgroup.subtree_control"));
      std::vector<std::string> offered = words(get(dir + "/cgroup.controllers"));
      for (const std::string& token : words(v)) {
        std::string controller = token.substr(1);
        if ((token[0] != '+' && token[0] != '-') || !has(known_, controller)) return EINVAL;
        if (token[0] == '+') {
          if (!has(offered, controller)) return ENOENT;
          if (!is_root && !get(dir + "/cgroup.procs").empty()) return EBUSY;
          if (!has(enabled, controller)) enabled.push_back(controller);
        } else {
          for (const auto& entry : std::filesystem::directory_iterator(dir))
            if (entry.is_directory() && has(words(get(entry.path().string() + "/cgroup.subtree_control")), controller))
              return EBUSY;
          std::erase(enabled, controller);
        }
      }
      std::vector<std::string> ordered;  // the kernel lists controllers in its own order, not in the order written
      for (const std::string& controller : known_)
        if (has(enabled, controller)) ordered.push_back(controller);
      put(dir + "/cgroup.subtree_control", joined(ordered));
      for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (entry.is_directory()) offer(entry.path().string(), ordered);
      return 0;
    }
    if (name == "cgroup.type") {
      if (v != "threaded") return EINVAL;
      put(dir + "/cgroup.type", "threaded\n");
      std::string parent = dir.substr(0, dir.find_last_of('/'));
      if (parent == root_) return 0;                      // the root mixes threaded and domain children
      put(parent + "/cgroup.type", "domain threaded\n");  // a thread root: its other children can hold no process
      for (const std::string& sibling : children_of_type(parent, "domain\n"))
        put(sibling + "/cgroup.type", "domain invalid\n");
      return 0;
    }
    if (name == "cpu.weight") {
      if (!std::regex_match(v, std::regex("[0-9]{1,18}"))) return EINVAL;
      if (std::stoull(v) < 1 || std::stoull(v) > 10000) return ERANGE;
    } else if (name == "cpu.max") {
      if (!std::regex_match(v, std::regex("(max|[0-9]+)( [0-9]+)?"))) return EINVAL;
    } else if (name == "cgroup.freeze") {
      if (!std::regex_match(v, std::regex("-?[0-9]+"))) return EINVAL;
      if (v != "0" && v != "1") return ERANGE;
      put(dir + "/cgroup.events",
          "populated " + std::string(get(dir + "/cgroup.procs").empty() ? "0" : "1") + "\nfrozen " + v + "\n");
    } else if (name == "cpuset.cpus") {
      if (!std::regex_match(v, std::regex("([0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)?"))) return EINVAL;
      put(dir + "/cpuset.cpus.effective", v + "\n");
    } else if (name == "cpuset.cpus.partition") {
      if (v != "member" && v != "root" && v != "isolated") return EINVAL;
    } else if (name == "cgroup.controllers" || name == "cgroup.events" || name == "cpuset.cpus.effective") {
      return EACCES;  // read-only files (mode 0444): open(O_WRONLY) fails
    }
    put(dir + "/" + name, v + "\n");
    return 0;
  }

  std::string root_, mounts_;
  std::vector<std::string> known_;
  std::map<std::string, int> failures_;
  std::map<int, std::string> open_;
  int next_fd_ = 1000;
  std::vector<std::string> writes_;
};

}  // namespace tandem
