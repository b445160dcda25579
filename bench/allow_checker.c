/* The trivial allow checker of bench/run.sh: reads its prompt to EOF, replies with one fenced
 * allow verdict. Compiled on the fly so the bare spawn and the gated move run the same binary,
 * and so the comparison measures the gate, not a shell's start-up. With an argument N it sleeps
 * N ms after reading the prompt (bench/server.py's slow checks). */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  char buf[65536];
  while (read(0, buf, sizeof buf) > 0) {
  }
  if (argc > 1) {
    long ms = atol(argv[1]);
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
  }
  static const char reply[] =
      "Nothing to object to.\n\n```json\n"
      "{\"verdict\": \"allow\", \"summary\": \"bench allow\", \"findings\": []}\n```\n";
  return write(1, reply, sizeof reply - 1) == (ssize_t)(sizeof reply - 1) ? 0 : 1;
}
