// Cache-line round trip between CPUs 0 and 1: how long one line takes to go to the other core and back.
// The control core and the NF core hand every packet over through shared cache lines (rings, mbufs), so when
// this VM's host places its two vCPUs far apart, everything at `rate: max` slows down with it (README, Results).
// Build and run: cc -O2 -pthread bench/cache_line_round_trip.c -o /tmp/round-trip && /tmp/round-trip
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

enum { kRounds = 200000 };
static _Alignas(64) _Atomic int ball = 0;  // 1: at CPU 1's side, 0: back at CPU 0's

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void* returner(void* unused) {
  (void)unused;
  pin(1);
  for (int i = 0; i < kRounds; i++) {
    while (atomic_load_explicit(&ball, memory_order_acquire) != 1) {
    }
    atomic_store_explicit(&ball, 0, memory_order_release);
  }
  return NULL;
}

int main(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, returner, NULL);
  pin(0);
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int i = 0; i < kRounds; i++) {
    atomic_store_explicit(&ball, 1, memory_order_release);
    while (atomic_load_explicit(&ball, memory_order_acquire) != 0) {
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  pthread_join(thread, NULL);
  double ns = (double)(end.tv_sec - start.tv_sec) * 1e9 + (double)(end.tv_nsec - start.tv_nsec);
  printf("cache-line round trip CPU 0 <-> 1: %.0f ns\n", ns / kRounds);
  return 0;
}
