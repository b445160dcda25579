#define DOCTEST_CONFIG_IMPLEMENT
#include <csignal>

#include <doctest/doctest.h>

int main(int argc, char** argv) {
  std::signal(SIGPIPE,
              SIG_IGN);  // as the product does: a checker that exits early must not kill us
  doctest::Context context(argc, argv);
  return context.run();
}
