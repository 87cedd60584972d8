/* A CUDA runtime with no GPU behind it: enough for onnxruntime-gpu's CUDA execution provider to load, be
 * constructed and partition a model (session creation is real), while a Run computes nothing.
 * "Device" memory is host memory, copies are memmove, kernel launches are no-ops.
 * Compiled by tests/cuda_rig/build.py against the headers of NVIDIA's CUDA runtime wheel (the cudaDeviceProp
 * layout must be the real one); every other symbol the provider imports is generated as `return 0`.
 * Test hook: CUDA_RIG_FAIL_RUN=1 makes every device-to-host copy fail, so a Run fails on the CUDA EP after
 * the session was built (how a cuDNN error or an out-of-memory at Run time looks to ORT). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>

#define RIG_MEM (40ull << 30)
static size_t rig_used;
static uintptr_t rig_handles = 0x10000;

static void *rig_handle(void) { rig_handles += 64; return (void *)rig_handles; }
static int rig_fail_run(void) {
  static int v = -1;
  if (v < 0) { const char *e = getenv("CUDA_RIG_FAIL_RUN"); v = e && *e && *e != '0'; }
  return v;
}

cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
cudaError_t cudaRuntimeGetVersion(int *v) { *v = 12080; return cudaSuccess; }
cudaError_t cudaDriverGetVersion(int *v) { *v = 12080; return cudaSuccess; }
cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { (void)s; return cudaSuccess; }
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaPeekAtLastError(void) { return cudaSuccess; }
const char *cudaGetErrorString(cudaError_t e) { return e == cudaErrorLaunchFailure ? "unspecified launch failure (CUDA_RIG_FAIL_RUN)" : "cuda rig error"; }
const char *cudaGetErrorName(cudaError_t e) { return e == cudaErrorLaunchFailure ? "cudaErrorLaunchFailure" : "cudaErrorRig"; }

static void rig_props(struct cudaDeviceProp *p) {
  memset(p, 0, sizeof *p);
  strcpy(p->name, "onnxlint CUDA rig (no GPU)");
  p->major = 9; p->minor = 0;
  p->totalGlobalMem = RIG_MEM;
  p->multiProcessorCount = 80;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024; p->maxThreadsDim[1] = 1024; p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 0x7fffffff; p->maxGridSize[1] = 65535; p->maxGridSize[2] = 65535;
  p->sharedMemPerBlock = 48 << 10;
  p->sharedMemPerBlockOptin = 99 << 10;
  p->sharedMemPerMultiprocessor = 100 << 10;
  p->regsPerBlock = 65536; p->regsPerMultiprocessor = 65536;
  p->maxThreadsPerMultiProcessor = 1536;
  p->maxBlocksPerMultiProcessor = 16;
  p->l2CacheSize = 6 << 20;
  p->totalConstMem = 65536;
  p->clockRate = 1700000; p->memoryClockRate = 9500000; p->memoryBusWidth = 384;
  p->concurrentKernels = 1; p->asyncEngineCount = 2; p->unifiedAddressing = 1; p->canMapHostMemory = 1;
  p->managedMemory = 1; p->memoryPoolsSupported = 1; p->textureAlignment = 512;
}
cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *p, int d) { if (d) return cudaErrorInvalidDevice; rig_props(p); return cudaSuccess; }

cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d) {
  struct cudaDeviceProp p;
  (void)d;
  rig_props(&p);
  switch (a) {
    case cudaDevAttrComputeCapabilityMajor: *v = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *v = p.minor; break;
    case cudaDevAttrMultiProcessorCount: *v = p.multiProcessorCount; break;
    case cudaDevAttrMaxThreadsPerBlock: *v = p.maxThreadsPerBlock; break;
    case cudaDevAttrWarpSize: *v = p.warpSize; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *v = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = (int)p.sharedMemPerBlockOptin; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *v = (int)p.sharedMemPerMultiprocessor; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *v = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrMaxBlockDimX: *v = 1024; break;
    case cudaDevAttrMaxGridDimX: *v = 0x7fffffff; break;
    case cudaDevAttrMaxGridDimY: case cudaDevAttrMaxGridDimZ: *v = 65535; break;
    default: *v = 0;
  }
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *f, size_t *t) { *f = RIG_MEM - rig_used; *t = RIG_MEM; return cudaSuccess; }
static void *rig_alloc(size_t n) { void *p = NULL; if (posix_memalign(&p, 256, n ? n : 1)) return NULL; rig_used += n; return p; }
cudaError_t cudaMalloc(void **p, size_t n) { *p = rig_alloc(n); return *p ? cudaSuccess : cudaErrorMemoryAllocation; }
cudaError_t cudaMallocHost(void **p, size_t n) { return cudaMalloc(p, n); }
cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int f) { (void)f; return cudaMalloc(p, n); }
cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s) { (void)s; return cudaMalloc(p, n); }
cudaError_t cudaMallocFromPoolAsync(void **p, size_t n, cudaMemPool_t m, cudaStream_t s) { (void)m; (void)s; return cudaMalloc(p, n); }
cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
cudaError_t cudaFreeHost(void *p) { free(p); return cudaSuccess; }
cudaError_t cudaFreeAsync(void *p, cudaStream_t s) { (void)s; free(p); return cudaSuccess; }
cudaError_t cudaMemPoolCreate(cudaMemPool_t *m, const struct cudaMemPoolProps *pr) { (void)pr; *m = (cudaMemPool_t)rig_handle(); return cudaSuccess; }

cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind k) {
  if (k == cudaMemcpyDeviceToHost && rig_fail_run()) return cudaErrorLaunchFailure;
  if (n && d != s) memmove(d, s, n);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, enum cudaMemcpyKind k, cudaStream_t st) { (void)st; return cudaMemcpy(d, s, n, k); }
cudaError_t cudaMemcpy2DAsync(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, enum cudaMemcpyKind k, cudaStream_t st) {
  (void)st;
  if (k == cudaMemcpyDeviceToHost && rig_fail_run()) return cudaErrorLaunchFailure;
  for (size_t r = 0; r < h; r++) memmove((char *)d + r * dp, (const char *)s + r * sp, w);
  return cudaSuccess;
}
cudaError_t cudaMemset(void *p, int v, size_t n) { if (n) memset(p, v, n); return cudaSuccess; }
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s) { (void)s; return cudaMemset(p, v, n); }

cudaError_t cudaStreamCreate(cudaStream_t *s) { *s = (cudaStream_t)rig_handle(); return cudaSuccess; }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int f) { (void)f; return cudaStreamCreate(s); }
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int f, int p) { (void)f; (void)p; return cudaStreamCreate(s); }
cudaError_t cudaEventCreate(cudaEvent_t *e) { *e = (cudaEvent_t)rig_handle(); return cudaSuccess; }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int f) { (void)f; return cudaEventCreate(e); }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) { (void)a; (void)b; *ms = 0; return cudaSuccess; }
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) { (void)s; *g = (cudaGraph_t)rig_handle(); return cudaSuccess; }
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long f) { (void)g; (void)f; *e = (cudaGraphExec_t)rig_handle(); return cudaSuccess; }
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *data) { (void)s; fn(data); return cudaSuccess; }
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *a, const void *f) {
  (void)f; memset(a, 0, sizeof *a); a->maxThreadsPerBlock = 1024; a->numRegs = 32; a->ptxVersion = 90; a->binaryVersion = 90;
  return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *f, int b, size_t sm, unsigned int fl) {
  (void)f; (void)b; (void)sm; (void)fl; *n = 1; return cudaSuccess;
}

/* kernels: registered by the provider's static constructors, launched (as no-ops) by a Run */
static void *rig_fatbin[4];
void **__cudaRegisterFatBinary(void *c) { (void)c; return rig_fatbin; }
void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
void __cudaUnregisterFatBinary(void **h) { (void)h; }
void __cudaRegisterFunction(void **h, const char *a, char *b, const char *c, int d, void *e, void *f, void *g, void *i, int *j) {
  (void)h; (void)a; (void)b; (void)c; (void)d; (void)e; (void)f; (void)g; (void)i; (void)j;
}
void __cudaRegisterVar(void **h, char *a, char *b, const char *c, int d, size_t e, int f, int g) {
  (void)h; (void)a; (void)b; (void)c; (void)d; (void)e; (void)f; (void)g;
}
unsigned __cudaPushCallConfiguration(dim3 g, dim3 b, size_t sm, void *st) { (void)g; (void)b; (void)sm; (void)st; return 0; }
cudaError_t __cudaPopCallConfiguration(dim3 *g, dim3 *b, size_t *sm, void *st) {
  g->x = g->y = g->z = b->x = b->y = b->z = 1; *sm = 0; *(void **)st = NULL; return cudaSuccess;
}
cudaError_t cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **a, size_t sm, cudaStream_t st) {
  (void)f; (void)g; (void)b; (void)a; (void)sm; (void)st; return cudaSuccess;
}
