// LD_PRELOAD shim for bench/server_cost.py's callgrind mode only (never for the product or its
// tests): valgrind 3.19 (Debian 12) does not know pidfd_send_signal (424), so under it the
// server's unix-socket peer screen (host/server/peer.cc) cannot prove that the peer whose pidfd
// SO_PEERPIDFD gave still runs, and refuses every connection, as it must. Here the peer is the
// bench's own client, alive throughout; the shim answers "alive" (0) to signal 0 on a pidfd
// when the real call says ENOSYS. Everything else goes to the real syscall(3).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

long syscall(long number, ...) {
  static long (*real)(long, ...);
  if (!real) real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
  va_list ap;
  va_start(ap, number);
  long a[6];
  for (int i = 0; i < 6; ++i) a[i] = va_arg(ap, long);
  va_end(ap);
  long r = real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
  if (r == -1 && errno == ENOSYS && number == SYS_pidfd_send_signal && a[1] == 0) return 0;
  return r;
}
