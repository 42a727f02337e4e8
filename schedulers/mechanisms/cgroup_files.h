// The system calls Tandem makes on cgroup files, behind one interface: kernel_cgroup_files() makes them for real,
// and tests replay the kernel's cgroup2 files and errors on a plain directory (fake_cgroup2_test_support.h).
#pragma once

#include <optional>
#include <string>

namespace tandem {

class CgroupFiles {
 public:
  virtual ~CgroupFiles() = default;
  // Each returns 0, or the errno the kernel answered.
  virtual int make_group(const std::string& dir) = 0;    // mkdir(2): the kernel fills the group with its files
  virtual int remove_group(const std::string& dir) = 0;  // rmdir(2): EBUSY while a task or a child group is in it
  virtual int write(const std::string& file, const std::string& value) = 0;  // open(2) and one write(2)
  virtual std::optional<std::string> read(const std::string& file) = 0;
  // A file written again and again (cpu.shares, cpu.weight, cgroup.freeze) is kept open: its descriptor, or -errno.
  virtual int open_for_writes(const std::string& file) = 0;
  virtual int rewrite(int fd, const std::string& value) = 0;  // one pwrite(2) at offset 0
  virtual void close_file(int fd) = 0;
};

CgroupFiles& kernel_cgroup_files();

// "`file`: `what`: strerror(error)", and what the kernel means by that error on that cgroup file (cgroup v2's rules:
// Documentation/admin-guide/cgroup-v2.rst), so a refused write says why rather than only "Device or resource busy".
std::string cgroup_failure(const std::string& file, const std::string& what, int error);

}  // namespace tandem
