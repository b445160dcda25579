/* The trivial allow checker of bench/run.sh: reads its prompt to EOF, replies with one fenced
 * allow verdict. Compiled on the fly so the bare spawn and the gated move run the same binary,
 * and so the comparison measures the gate, not a shell's start-up. */
#include <unistd.h>

int main(void) {
  char buf[65536];
  while (read(0, buf, sizeof buf) > 0) {
  }
  static const char reply[] =
      "Nothing to object to.\n\n```json\n"
      "{\"verdict\": \"allow\", \"summary\": \"bench allow\", \"findings\": []}\n```\n";
  return write(1, reply, sizeof reply - 1) == (ssize_t)(sizeof reply - 1) ? 0 : 1;
}
