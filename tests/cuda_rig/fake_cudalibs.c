/* The entry points of cuBLAS(Lt), cuDNN, cuFFT, the CUDA driver and TensorRT that must hand something back
 * (a handle, a version, a string) for onnxruntime-gpu's CUDA EP to be built on tests/cuda_rig's fake CUDA.
 * build.py compiles this once per library with -DRIG_<LIB>; the other imports are generated `return 0`
 * (every one of these libraries uses 0 for success). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static void *rig_object(void) { return calloc(1, 4096); }
#define RIG_CREATE(fn) int fn(void **out) { *out = rig_object(); return 0; }

#ifdef RIG_CUBLAS
RIG_CREATE(cublasCreate_v2)
int cublasGetVersion_v2(void *h, int *v) { (void)h; *v = 120800; return 0; }
int cublasGetMathMode(void *h, int *m) { (void)h; *m = 0; return 0; }
#endif

#ifdef RIG_CUBLASLT
RIG_CREATE(cublasLtCreate)
RIG_CREATE(cublasLtMatmulPreferenceCreate)
size_t cublasLtGetVersion(void) { return 120800; }
int cublasLtMatmulDescCreate(void **d, int c, int s) { (void)c; (void)s; *d = rig_object(); return 0; }
int cublasLtMatrixLayoutCreate(void **l, int t, uint64_t r, uint64_t c, int64_t ld) { (void)t; (void)r; (void)c; (void)ld; *l = rig_object(); return 0; }
int cublasLtMatrixTransformDescCreate(void **d, int s) { (void)s; *d = rig_object(); return 0; }
#endif

#ifdef RIG_CUDNN
size_t cudnnGetVersion(void) { return 90800; }
size_t cudnnGetCudartVersion(void) { return 12080; }
const char *cudnnGetErrorString(int s) { (void)s; return "cuDNN rig status"; }
void cudnnGetLastErrorString(char *m, size_t n) { if (m && n) m[0] = 0; }
RIG_CREATE(cudnnCreate)
RIG_CREATE(cudnnCreateTensorDescriptor)
RIG_CREATE(cudnnCreateFilterDescriptor)
RIG_CREATE(cudnnCreateConvolutionDescriptor)
RIG_CREATE(cudnnCreateActivationDescriptor)
RIG_CREATE(cudnnCreatePoolingDescriptor)
RIG_CREATE(cudnnCreateLRNDescriptor)
RIG_CREATE(cudnnCreateDropoutDescriptor)
RIG_CREATE(cudnnCreateReduceTensorDescriptor)
RIG_CREATE(cudnnCreateOpTensorDescriptor)
RIG_CREATE(cudnnCreateRNNDescriptor)
RIG_CREATE(cudnnCreateRNNDataDescriptor)
RIG_CREATE(cudnnCreateSpatialTransformerDescriptor)
RIG_CREATE(cudnnCreateCTCLossDescriptor)
int cudnnBackendCreateDescriptor(int t, void **d) { (void)t; *d = rig_object(); return 0; }
int cudnnGetStream(void *h, void **s) { (void)h; *s = NULL; return 0; }
int cudnnDropoutGetStatesSize(void *h, size_t *n) { (void)h; *n = 256; return 0; }
/* An RNN with constant weights packs them in its kernel's constructor: it asks where each matrix goes and
 * checks the returned tensor is packed; answer with a packed 1x1x1 tensor at a scratch buffer. */
static double rig_rnn_scratch[16];
int cudnnGetRNNWeightParams(void *h, void *r, int32_t l, size_t sz, const void *w, int32_t id, void *md, void **ma, void *bd, void **ba) {
  (void)h; (void)r; (void)l; (void)sz; (void)w; (void)id; (void)md; (void)bd;
  if (ma) *ma = rig_rnn_scratch;
  if (ba) *ba = rig_rnn_scratch + 8;
  return 0;
}
int cudnnGetTensorNdDescriptor(const void *d, int req, int *dt, int *nb, int dims[], int strides[]) {
  (void)d;
  if (dt) *dt = 0;
  if (nb) *nb = req;
  for (int i = 0; i < req; i++) { if (dims) dims[i] = 1; if (strides) strides[i] = 1; }
  return 0;
}
#endif

#ifdef RIG_CUFFT
int cufftCreate(int *plan) { static int next; *plan = ++next; return 0; }
#endif

#ifdef RIG_DRIVER
/* libcuda.so.1 is dlopen'ed (and its symbols looked up) when the provider library loads */
int cuInit(unsigned f) { (void)f; return 0; }
int cuDriverGetVersion(int *v) { *v = 12080; return 0; }
int cuGetErrorName(int e, const char **s) { (void)e; *s = "CUDA_ERROR_RIG"; return 0; }
int cuDeviceGetAttribute(int *v, int a, int d) { (void)a; (void)d; *v = 0; return 0; }
#endif

#ifdef RIG_NVINFER
int getInferLibVersion(void) { return 100400; }
#endif
