/* The memory-speed floor of bench/grounding/scan.py: maps a file and counts its newlines with
 * memchr, the least work any reader of every byte can do. Prints the count. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: memchr_floor FILE\n");
    return 2;
  }
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    perror(argv[1]);
    return 2;
  }
  size_t size = (size_t)st.st_size, lines = 0;
  const char* p = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0) : "";
  if (p == MAP_FAILED) {
    perror("mmap");
    return 2;
  }
  for (const char *at = p, *end = p + size; (at = memchr(at, '\n', (size_t)(end - at))); ++at) {
    ++lines;
  }
  printf("%zu\n", lines);
  return 0;
}
