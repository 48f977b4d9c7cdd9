// Exits 0 where this machine's CPU has x86-64-v3 (AVX2, BMI2, FMA, ...): cmake/host_arch.cmake.
int main() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("x86-64-v3") ? 0 : 1;
}
