// Run 27: what NVRTC makes of src/gpu/kernel.cu with and without __grid_constant__ on its
// parameter. Variant 0 is the source as shipped, 1 has the CUDA version macros removed (the
// attribute left out), 2 has them set to 13.0 (the attribute in). Writes /tmp/k<variant>.cubin
// for cuobjdump -res-usage, and says whether NVRTC defines __CUDACC_VER_MAJOR__ itself; see
// README.md beside this file.
#include <nvrtc.h>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static nvrtcResult compile(const std::string& src, std::vector<char>* cubin) {
  nvrtcProgram p;
  nvrtcCreateProgram(&p, src.c_str(), "kernel.cu", 0, nullptr, nullptr);
  const char* opts[] = {"--gpu-architecture=sm_90"};
  const nvrtcResult r = nvrtcCompileProgram(p, 1, opts);
  if (r == NVRTC_SUCCESS && cubin) {
    size_t n;
    nvrtcGetCUBINSize(p, &n);
    cubin->resize(n);
    nvrtcGetCUBIN(p, cubin->data());
  }
  nvrtcDestroyProgram(&p);
  return r;
}

int main(int argc, char** argv) {
  std::ifstream f(argv[1]);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string src = ss.str();
  int maj, min;
  nvrtcVersion(&maj, &min);
  const nvrtcResult defined =
      compile("#ifndef __CUDACC_VER_MAJOR__\n#error no version macro\n#endif\n__global__ void k() {}\n", nullptr);
  printf("nvrtc %d.%d defines __CUDACC_VER_MAJOR__: %s\n", maj, min, defined == NVRTC_SUCCESS ? "yes" : "no");
  const char* prefix[] = {"", "#undef __CUDACC_VER_MAJOR__\n#undef __CUDACC_VER_MINOR__\n",
                          "#undef __CUDACC_VER_MAJOR__\n#undef __CUDACC_VER_MINOR__\n"
                          "#define __CUDACC_VER_MAJOR__ 13\n#define __CUDACC_VER_MINOR__ 0\n"};
  const char* name[] = {"as shipped", "attribute left out", "attribute in"};
  for (int v = 0; v < 3; v++) {
    std::vector<char> cubin;
    const nvrtcResult r = compile(prefix[v] + src, &cubin);
    char path[64];
    snprintf(path, sizeof path, "/tmp/k%d.cubin", v);
    FILE* o = fopen(path, "wb");
    fwrite(cubin.data(), 1, cubin.size(), o);
    fclose(o);
    printf("k%d (%s): %s, %zu bytes of cubin\n", v, name[v], nvrtcGetErrorString(r), cubin.size());
  }
}
