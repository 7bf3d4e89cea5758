// Writes DIR/rank0.<tensor>.bin for each line "name element_bytes elements"
// of a manifest, each element holding reshard-run's --pattern=hash value of
// its global row-major index (a 1-device mesh: the shard is the tensor).
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>
static uint64_t hashPattern(uint64_t z, int64_t eb) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return eb >= 8 ? z : z & ((uint64_t(1) << (8 * eb)) - 1);
}
int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MANIFEST DIR\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  std::string name;
  int64_t eb, n;
  while (in >> name >> eb >> n) {
    std::vector<uint8_t> buf(eb * n);
    for (int64_t i = 0; i < n; ++i) {
      uint64_t v = hashPattern(i, eb);
      for (int64_t b = 0; b < eb; ++b)
        buf[i * eb + b] = uint8_t(v >> (8 * b));
    }
    std::string path = std::string(argv[2]) + "/rank0." + name + ".bin";
    FILE *f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(buf.data(), 1, buf.size(), f) != buf.size() ||
        std::fclose(f)) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
  }
  return 0;
}
