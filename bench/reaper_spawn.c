/* The checker's start through the reaper, alone (issue 8; figures in docs/performance.md, "The
 * checker's signal resets"): N rounds of posix_spawn of ARGV, a one-byte prompt on its stdin,
 * its stdout read to EOF, the control pipe closed, waitpid; prints the median and p10/p90 wall
 * time of a round. The reaper gets its control pipe as fd 10 and its report pipe as fd 11, so
 * with the argv below it is the reaper the host starts at `sandbox: off`. Run it under
 * `perf stat -e task-clock,page-faults,raw_syscalls:sys_enter` for the load-independent counts:
 *
 *   cc -O2 -o /tmp/reaper_spawn bench/reaper_spawn.c && cc -O2 -o /tmp/allow bench/allow_checker.c
 *   perf stat -e task-clock,page-faults,raw_syscalls:sys_enter /tmp/reaper_spawn 300 \
 *     build/devflow-gate-reaper 10 11 0 0 0 0 -1 -1 -1 -1 -1 -- /tmp/allow
 *   perf stat ... /tmp/reaper_spawn 300 /tmp/allow          (the checker alone, the floor)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

static double NowMs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int Compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: reaper_spawn N PROGRAM [ARG...]\n");
    return 2;
  }
  int n = atoi(argv[1]);
  if (n <= 0) return 2;
  double* ms = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) {
    int control[2], in[2], out[2], report[2];
    if (pipe2(control, O_CLOEXEC) || pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) ||
        pipe2(report, O_CLOEXEC)) {
      perror("pipe2");
      return 1;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, control[0], 10);
    posix_spawn_file_actions_adddup2(&actions, report[1], 11);
    double t0 = NowMs();
    pid_t pid;
    if (posix_spawn(&pid, argv[2], &actions, NULL, argv + 2, environ) != 0) {
      perror("posix_spawn");
      return 1;
    }
    close(in[0]);
    close(out[1]);
    close(control[0]);
    close(report[1]);
    if (write(in[1], "x", 1) != 1) return 1;
    close(in[1]);
    char buf[4096];
    while (read(out[0], buf, sizeof buf) > 0) {
    }
    close(control[1]);
    int status;
    waitpid(pid, &status, 0);
    ms[i] = NowMs() - t0;
    close(out[0]);
    close(report[0]);
    posix_spawn_file_actions_destroy(&actions);
  }
  qsort(ms, (size_t)n, sizeof(double), Compare);
  printf("median %.3f ms  p10 %.3f  p90 %.3f  (N=%d)\n", ms[n / 2], ms[n / 10], ms[n * 9 / 10], n);
  free(ms);
  return 0;
}
