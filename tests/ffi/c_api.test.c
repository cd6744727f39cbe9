/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The C facade from C: every function's contract, errors and ownership rules.
 * Built as C99, as C11 and as C++ (c_api_as_cxx.test.cpp includes this file). */
#include <dlpack_mdspan.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed = 0, failed = 0;

#define CHECK(cond)                                                  \
  do {                                                               \
    if (cond) {                                                      \
      ++passed;                                                      \
    } else {                                                         \
      ++failed;                                                      \
      printf("%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
    }                                                                \
  } while (0)

#define CHECK_STATUS(expr, expected)                                                                     \
  do {                                                                                                   \
    dlpm_status s_ = (expr);                                                                             \
    if (s_ == (expected)) {                                                                              \
      ++passed;                                                                                          \
    } else {                                                                                             \
      ++failed;                                                                                          \
      printf("%s:%d: %s returned %d (%s: %s), expected %d\n", __FILE__, __LINE__, #expr, (int)s_,        \
             dlpm_status_string(s_), dlpm_last_error(), (int)(expected));                                \
    }                                                                                                    \
  } while (0)

static DLTensor make_tensor(void* data, int32_t ndim, int64_t* shape, int64_t* strides, DLDataType dtype) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = 0;
  return t;
}

static DLDataType dtype(uint8_t code, uint8_t bits, uint16_t lanes) {
  DLDataType d;
  d.code = code;
  d.bits = bits;
  d.lanes = lanes;
  return d;
}

static DLDevice host_device(void) {
  DLDevice d;
  d.device_type = kDLCPU;
  d.device_id = 0;
  return d;
}

static int releases = 0;
static void count_release(void* ctx) {
  ++releases;
  ++*(int*)ctx;
}

static int deleter_calls = 0;
static void counting_deleter(DLManagedTensorVersioned* self) {
  ++deleter_calls;
  free(self);
}
static void counting_legacy_deleter(DLManagedTensor* self) {
  ++deleter_calls;
  free(self);
}

static void test_status_and_version(void) {
  dlpm_version_info v;
  CHECK_STATUS(dlpm_version(&v), DLPM_OK);
  CHECK(v.dlpack_major == DLPACK_MAJOR_VERSION);
  CHECK(v.dlpack_minor == DLPACK_MINOR_VERSION);
  CHECK_STATUS(dlpm_version(NULL), DLPM_E_NULL_POINTER);
  CHECK(strcmp(dlpm_last_error(), "dlpm_version: out is NULL") == 0);
  CHECK(strcmp(dlpm_status_string(DLPM_OK), "ok") == 0);
  CHECK(strcmp(dlpm_status_string(DLPM_E_DTYPE_MISMATCH), "dtype mismatch") == 0);
  CHECK(strcmp(dlpm_status_string(12345), "unknown status") == 0);
  CHECK(strcmp(dlpm_status_string(-1), "unknown status") == 0);
}

static void test_dtype_name(void) {
  char name[40];
  char small[6];
  CHECK(dlpm_dtype_name(dtype(kDLFloat, 32, 1), name, sizeof name) == 7);
  CHECK(strcmp(name, "float32") == 0);
  CHECK(dlpm_dtype_name(dtype(kDLBfloat, 16, 1), name, sizeof name) == 8);
  CHECK(strcmp(name, "bfloat16") == 0);
  CHECK(dlpm_dtype_name(dtype(kDLFloat8_e4m3fn, 8, 1), name, sizeof name) == 13);
  CHECK(strcmp(name, "float8_e4m3fn") == 0);
  CHECK(dlpm_dtype_name(dtype(kDLInt, 16, 4), name, sizeof name) == 7);
  CHECK(strcmp(name, "int16x4") == 0);
  CHECK(dlpm_dtype_name(dtype(200, 7, 1), name, sizeof name) == 27);
  CHECK(strcmp(name, "(code 200, bits 7, lanes 1)") == 0);
  /* snprintf's contract: cut, NUL-terminated, the whole length returned. */
  CHECK(dlpm_dtype_name(dtype(kDLComplex, 128, 1), small, sizeof small) == 10);
  CHECK(strcmp(small, "compl") == 0);
  CHECK(dlpm_dtype_name(dtype(kDLFloat, 64, 1), NULL, 0) == 7);
}

/* dlpm_dtype_from_name against dlpm_dtype_name: every name it writes comes back as its
 * dtype (each code and width, valid or not, at several lane counts), and near misses are
 * refused with a message naming the text. */
static void test_dtype_from_name(void) {
  static const uint16_t lanes[] = {0, 1, 2, 3, 4, 16, 65535};
  static const char* const refused[] = {"",          "float",      "Float32",   "float32 ",  " float32",
                                        "float32x1", "float32x0",  "float32x",  "float32x04", "float32x65536",
                                        "int08",     "int7",       "bool8",     "xfloat32",   "float8_e4m3fnx",
                                        "(code 2, bits 32, lanes 1)", "(code 42, bits 7, lanes 1", "(code 300, bits 7, lanes 1)"};
  char name[48];
  int round_trips = 1, wrong = 0;
  DLDataType d = dtype(kDLFloat, 32, 1);
  for (unsigned code = 0; code < 256; ++code)
    for (unsigned bits = 0; bits < 256; ++bits)
      for (size_t l = 0; l < sizeof lanes / sizeof lanes[0]; ++l) {
        const DLDataType want = dtype((uint8_t)code, (uint8_t)bits, lanes[l]);
        DLDataType got = dtype(0, 0, 0);
        dlpm_dtype_name(want, name, sizeof name);
        /* raw forms of codes the core does not know are cheap: all of them; named ones at
         * every width of the known codes */
        if (dlpm_dtype_from_name(name, &got) != DLPM_OK || got.code != want.code || got.bits != want.bits ||
            got.lanes != want.lanes) {
          if (round_trips) printf("%s:%d: dlpm_dtype_from_name(\"%s\") is not (%u, %u, %u): %s\n", __FILE__, __LINE__,
                                  name, code, bits, (unsigned)lanes[l], dlpm_last_error());
          round_trips = 0;
        }
      }
  CHECK(round_trips);
  CHECK_STATUS(dlpm_dtype_from_name("bfloat16", &d), DLPM_OK);
  CHECK(d.code == kDLBfloat && d.bits == 16 && d.lanes == 1);
  CHECK_STATUS(dlpm_dtype_from_name("bool", &d), DLPM_OK);
  CHECK(d.code == kDLBool && d.bits == 8 && d.lanes == 1);
  CHECK_STATUS(dlpm_dtype_from_name("bool1", &d), DLPM_OK);
  CHECK(d.code == kDLBool && d.bits == 1 && d.lanes == 1);
  CHECK_STATUS(dlpm_dtype_from_name("complex64x2", &d), DLPM_OK);
  CHECK(d.code == kDLComplex && d.bits == 64 && d.lanes == 2);
  d = dtype(kDLFloat, 32, 1);
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
    DLDataType untouched = d;
    const dlpm_status s = dlpm_dtype_from_name(refused[i], &untouched);
    if (s != DLPM_E_INVALID_DTYPE || strstr(dlpm_last_error(), "names no DLPack dtype") == NULL ||
        untouched.code != d.code || untouched.bits != d.bits || untouched.lanes != d.lanes) {
      printf("%s:%d: dlpm_dtype_from_name(\"%s\") returned %d: %s\n", __FILE__, __LINE__, refused[i], (int)s,
             dlpm_last_error());
      ++wrong;
    }
  }
  CHECK(wrong == 0);
  CHECK_STATUS(dlpm_dtype_from_name("int8x", &d), DLPM_E_INVALID_DTYPE);
  CHECK(strstr(dlpm_last_error(), "\"int8x\"") != NULL);
  CHECK_STATUS(dlpm_dtype_from_name(NULL, &d), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_dtype_from_name("float32", NULL), DLPM_E_NULL_POINTER);
}

static void test_validate_and_inspect(void) {
  float data[12];
  int64_t shape[2] = {3, 4}, strides[2] = {4, 1}, fstrides[2] = {1, 3};
  DLTensor t = make_tensor(data, 2, shape, strides, dtype(kDLFloat, 32, 1));
  int64_t n = -7;
  int32_t yes = -7;
  int64_t index[2] = {2, 3}, offset = -7;

  CHECK_STATUS(dlpm_validate(&t), DLPM_OK);
  CHECK_STATUS(dlpm_validate(NULL), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_numel(&t, &n), DLPM_OK);
  CHECK(n == 12);
  CHECK_STATUS(dlpm_nbytes(&t, &n), DLPM_OK);
  CHECK(n == 48);
  CHECK_STATUS(dlpm_is_contiguous(&t, 'C', &yes), DLPM_OK);
  CHECK(yes == 1);
  CHECK_STATUS(dlpm_is_contiguous(&t, 'F', &yes), DLPM_OK);
  CHECK(yes == 0);
  CHECK_STATUS(dlpm_is_contiguous(&t, 'A', &yes), DLPM_OK);
  CHECK(yes == 1);
  yes = -7;
  CHECK_STATUS(dlpm_is_contiguous(&t, 'X', &yes), DLPM_E_INVALID_ARGUMENT);
  CHECK(yes == -7); /* out untouched on failure */
  CHECK_STATUS(dlpm_is_unique(&t, &yes), DLPM_OK);
  CHECK(yes == 1);
  CHECK_STATUS(dlpm_is_unique(&t, NULL), DLPM_E_NULL_POINTER);
  {
    /* an extent-1 dimension may carry INT64_MIN, whose magnitude no int64_t holds (UB under
     * the asan preset's UBSan before the magnitude was unsigned; found by test_hostile.py) */
    int64_t one_shape[2] = {2, 1}, one_strides[2] = {1, INT64_MIN};
    DLTensor one = make_tensor(data, 2, one_shape, one_strides, dtype(kDLFloat, 32, 1));
    yes = -7;
    CHECK_STATUS(dlpm_is_unique(&one, &yes), DLPM_OK);
    CHECK(yes == 1);
    yes = -7;
    CHECK_STATUS(dlpm_is_contiguous(&one, 'A', &yes), DLPM_OK);
    CHECK(yes == 1);
  }
  CHECK_STATUS(dlpm_element_offset(&t, index, &offset), DLPM_OK);
  CHECK(offset == (2 * 4 + 3) * 4);
  index[1] = 4;
  offset = -7;
  CHECK_STATUS(dlpm_element_offset(&t, index, &offset), DLPM_E_INVALID_ARGUMENT);
  CHECK(offset == -7);
  CHECK(strcmp(dlpm_last_error(), "index[1] = 4 is outside [0, 4)") == 0);

  /* dlpm_layout: the strides as the library reads them, and the element count */
  {
    int64_t resolved[3] = {-7, -7, -7}, count = -7;
    CHECK_STATUS(dlpm_layout(&t, resolved, 3, &count), DLPM_OK);
    CHECK(resolved[0] == 4 && resolved[1] == 1 && resolved[2] == -7 && count == 12);
    t.strides = NULL; /* row-major, computed by the library */
    resolved[0] = resolved[1] = -7;
    CHECK_STATUS(dlpm_layout(&t, resolved, 2, &count), DLPM_OK);
    CHECK(resolved[0] == 4 && resolved[1] == 1 && count == 12);
    t.strides = fstrides;
    CHECK_STATUS(dlpm_layout(&t, resolved, 2, &count), DLPM_OK);
    CHECK(resolved[0] == fstrides[0] && resolved[1] == fstrides[1]);
    count = -7;
    CHECK_STATUS(dlpm_layout(&t, resolved, 1, &count), DLPM_E_INVALID_ARGUMENT); /* capacity < ndim */
    CHECK(count == -7);
    CHECK_STATUS(dlpm_layout(&t, resolved, -1, &count), DLPM_E_INVALID_ARGUMENT);
    CHECK_STATUS(dlpm_layout(&t, NULL, 2, &count), DLPM_E_NULL_POINTER);
    CHECK_STATUS(dlpm_layout(&t, resolved, 2, NULL), DLPM_E_NULL_POINTER);
    CHECK_STATUS(dlpm_layout(NULL, resolved, 2, &count), DLPM_E_NULL_POINTER);
    shape[0] = -1; /* invalid tensors are refused before anything is written */
    CHECK_STATUS(dlpm_layout(&t, resolved, 2, &count), DLPM_E_NEGATIVE_EXTENT);
    CHECK(count == -7);
    shape[0] = 3;
    t.strides = NULL;
  }

  t.strides = fstrides;
  CHECK_STATUS(dlpm_is_contiguous(&t, 'F', &yes), DLPM_OK);
  CHECK(yes == 1);
  t.strides = NULL; /* pre-1.2 producer: row-major */
  CHECK_STATUS(dlpm_is_contiguous(&t, 'C', &yes), DLPM_OK);
  CHECK(yes == 1);

  /* packed sub-byte: three fp4 values are two bytes */
  shape[0] = 3;
  t = make_tensor(data, 1, shape, NULL, dtype(kDLFloat4_e2m1fn, 4, 1));
  CHECK_STATUS(dlpm_nbytes(&t, &n), DLPM_OK);
  CHECK(n == 2);
  CHECK_STATUS(dlpm_element_offset(&t, index, &offset), DLPM_E_SUBBYTE_NOT_VIEWABLE);
}

static void test_malformed(void) {
  float data[4];
  int64_t shape[2] = {2, 2}, strides[2] = {2, 1};
  DLTensor t = make_tensor(data, 2, shape, strides, dtype(kDLFloat, 32, 1));
  int64_t n = -7;
  t.ndim = -1;
  CHECK_STATUS(dlpm_validate(&t), DLPM_E_INVALID_NDIM);
  CHECK_STATUS(dlpm_numel(&t, &n), DLPM_E_INVALID_NDIM);
  CHECK(n == -7);
  t.ndim = 2;
  t.shape = NULL;
  CHECK_STATUS(dlpm_validate(&t), DLPM_E_NULL_SHAPE);
  t.shape = shape;
  shape[1] = -1;
  CHECK_STATUS(dlpm_validate(&t), DLPM_E_NEGATIVE_EXTENT);
  CHECK(strcmp(dlpm_last_error(), "shape[1] = -1 is negative") == 0);
  shape[1] = 2;
  t.dtype = dtype(kDLInt, 6, 1);
  CHECK_STATUS(dlpm_validate(&t), DLPM_E_INVALID_DTYPE);
  t.dtype = dtype(kDLFloat, 32, 1);
  t.byte_offset = 2;
  CHECK_STATUS(dlpm_validate(&t), DLPM_E_MISALIGNED_BYTE_OFFSET);
  t.byte_offset = 0;
  t.data = NULL;
  CHECK_STATUS(dlpm_validate(&t), DLPM_E_NULL_DATA);
  shape[0] = 0; /* empty tensors may have NULL data */
  CHECK_STATUS(dlpm_validate(&t), DLPM_OK);
}

static void test_requirements(void) {
  float data[12];
  int64_t shape[2] = {3, 4}, strides[2] = {4, 1};
  int64_t want_shape[2] = {-1, 4}, wrong_shape[2] = {3, 5};
  int32_t host_only[1] = {kDLCPU};
  DLTensor t = make_tensor(data, 2, shape, strides, dtype(kDLFloat, 32, 1));
  dlpm_requirements req;

  CHECK_STATUS(dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION), DLPM_OK);
  CHECK(req.ndim == -1 && req.device_id == -1 && req.check_dtype == 0 && req.shape == NULL);
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_OK);
  req.check_dtype = 1;
  req.dtype = dtype(kDLFloat, 32, 1);
  req.ndim = 2;
  req.shape = want_shape;
  req.order = 'C';
  req.device_types = host_only;
  req.num_device_types = 1;
  req.device_id = 0;
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_OK);
  req.dtype = dtype(kDLFloat, 64, 1);
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_DTYPE_MISMATCH);
  req.dtype = dtype(kDLFloat, 32, 1);
  req.ndim = 3;
  req.shape = NULL; /* a shape has ndim entries: want_shape has 2 */
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_NDIM_MISMATCH);
  req.ndim = 2;
  req.shape = wrong_shape;
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_SHAPE_MISMATCH);
  CHECK(strcmp(dlpm_last_error(), "shape[1] = 4 but 5 is required") == 0);
  { /* an entry below -1 is nonsense, not a second wildcard */
    int64_t nonsense[2] = {3, -2};
    req.shape = nonsense;
    CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_INVALID_ARGUMENT);
    CHECK(strcmp(dlpm_last_error(), "requirements: shape[1] = -2 is neither -1 (any extent) nor an extent") == 0);
    nonsense[1] = INT64_MIN;
    CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_INVALID_ARGUMENT);
  }
  req.shape = want_shape;
  req.order = 'F';
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_NON_COMPACT_STRIDES);
  req.order = 'Q';
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_INVALID_ARGUMENT);
  req.order = 'A';
  t.device.device_type = kDLCUDA;
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_DEVICE_MISMATCH);
  t.device.device_type = kDLCPU;
  t.device.device_id = 1;
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_DEVICE_ID_MISMATCH);
  t.device.device_id = 0;
  req.min_alignment = 3;
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_INVALID_ARGUMENT);
  req.min_alignment = 4;
  t.data = (char*)data + 2;
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_MISALIGNED_DATA);
  t.data = data;
  req.null_strides = DLPM_NULL_STRIDES_REJECT;
  t.strides = NULL;
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_NULL_STRIDES);
  req.null_strides = 2; /* not a DLPM_NULL_STRIDES_* value: read as REJECT, as "nonzero" was */
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_NULL_STRIDES);
  req.null_strides = DLPM_NULL_STRIDES_ROW_MAJOR;
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_OK);
  CHECK_STATUS(dlpm_check(NULL, &req), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_check(&t, NULL), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_requirements_init(NULL, DLPM_REQUIREMENTS_VERSION), DLPM_E_NULL_POINTER);
}

static void test_managed_new_and_delete(void) {
  float* data = (float*)malloc(6 * sizeof(float));
  int64_t shape[2] = {2, 3};
  int ctx_count = 0;
  DLManagedTensorVersioned* out = NULL;
  DLManagedTensorVersioned* untouched = (DLManagedTensorVersioned*)(uintptr_t)0x1;
  DLDevice cpu;
  dlpm_requirements req;
  cpu.device_type = kDLCPU;
  cpu.device_id = 0;
  releases = 0;

  CHECK_STATUS(dlpm_managed_new(data, 2, shape, NULL, dtype(kDLFloat, 32, 1), cpu, 0, DLPACK_FLAG_BITMASK_READ_ONLY,
                                count_release, &ctx_count, &out),
               DLPM_OK);
  CHECK(out != NULL);
  if (out == NULL) return;
  shape[0] = 99; /* copied: the tensor keeps its own shape */
  CHECK(out->dl_tensor.shape[0] == 2);
  CHECK(out->dl_tensor.strides != NULL && out->dl_tensor.strides[0] == 3 && out->dl_tensor.strides[1] == 1);
  CHECK(out->version.major == DLPACK_MAJOR_VERSION);
  CHECK(out->flags == DLPACK_FLAG_BITMASK_READ_ONLY);
  CHECK_STATUS(dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION), DLPM_OK);
  req.writable = 1;
  CHECK_STATUS(dlpm_check_managed(out, &req), DLPM_E_READ_ONLY);
  CHECK(releases == 0);
  dlpm_managed_delete(out);
  CHECK(releases == 1 && ctx_count == 1);
  dlpm_managed_delete(NULL); /* NULL-safe */
  free(data);

  /* invalid description: error, out untouched, release not called */
  shape[0] = -2;
  CHECK_STATUS(dlpm_managed_new(NULL, 2, shape, NULL, dtype(kDLFloat, 32, 1), cpu, 0, 0, count_release, &ctx_count, &untouched),
               DLPM_E_NEGATIVE_EXTENT);
  CHECK(untouched == (DLManagedTensorVersioned*)(uintptr_t)0x1);
  CHECK(releases == 1);
  CHECK_STATUS(dlpm_managed_new(NULL, 0, NULL, NULL, dtype(kDLFloat, 32, 1), cpu, 0, 0, NULL, NULL, NULL), DLPM_E_NULL_POINTER);
}

/* dlpm_managed_new_from: the description and the versioned options by pointer. Order 0 is
 * dlpm_managed_new's reading (NULL strides row-major, explicit ones kept), 'C' and 'F' are
 * dlpm_managed_new_ordered's; on any refusal *out is untouched and release not called. */
static void test_managed_new_from(void) {
  float* data = (float*)malloc(6 * sizeof(float));
  int64_t shape[2] = {2, 3}, odd[2] = {2, 1}, fstrides[2] = {1, 2};
  int ctx_count = 0, other_count = 0;
  DLManagedTensorVersioned* out = NULL;
  DLManagedTensorVersioned* const sentinel = (DLManagedTensorVersioned*)(uintptr_t)0x1;
  DLManagedTensorVersioned* untouched = sentinel;
  dlpm_managed_options options = DLPM_MANAGED_OPTIONS_INIT;
  DLTensor d;
  memset(&d, 0, sizeof d);
  d.data = data;
  d.ndim = 2;
  d.shape = shape;
  d.strides = NULL;
  d.dtype = dtype(kDLFloat, 32, 1);
  d.device.device_type = kDLCPU;
  d.device.device_id = 0;
  releases = 0;
  CHECK(options.version == DLPM_MANAGED_OPTIONS_VERSION && options.order == 0 && options.flags == 0 &&
        options.release == NULL && options.ctx == NULL);

  /* order 0 with NULL strides: row-major, stored explicitly; shape copied; flags stored; the
   * release is the one the options named at the call (they need not outlive it) */
  options.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  options.release = count_release;
  options.ctx = &ctx_count;
  CHECK_STATUS(dlpm_managed_new_from(&d, &options, &out), DLPM_OK);
  CHECK(out != NULL);
  if (out == NULL) return;
  options.ctx = &other_count;
  shape[0] = 99;
  CHECK(out->dl_tensor.data == data && out->dl_tensor.ndim == 2);
  CHECK(out->dl_tensor.shape[0] == 2 && out->dl_tensor.shape[1] == 3);
  CHECK(out->dl_tensor.strides != NULL && out->dl_tensor.strides[0] == 3 && out->dl_tensor.strides[1] == 1);
  CHECK(out->flags == DLPACK_FLAG_BITMASK_READ_ONLY && out->version.major == DLPACK_MAJOR_VERSION);
  CHECK(releases == 0);
  dlpm_managed_delete(out);
  CHECK(releases == 1 && ctx_count == 1 && other_count == 0);
  shape[0] = 2;
  options.ctx = &ctx_count;
  options.flags = 0;

  /* order 0 with explicit strides: kept as given, compact or not */
  out = NULL;
  d.strides = odd;
  CHECK_STATUS(dlpm_managed_new_from(&d, &options, &out), DLPM_OK);
  CHECK(out != NULL && out->dl_tensor.strides != odd && out->dl_tensor.strides[0] == 2 && out->dl_tensor.strides[1] == 1);
  dlpm_managed_delete(out);
  CHECK(releases == 2 && ctx_count == 2);

  /* 'F': NULL strides are column-major; explicit strides must be that layout */
  out = NULL;
  d.strides = NULL;
  options.order = 'F';
  CHECK_STATUS(dlpm_managed_new_from(&d, &options, &out), DLPM_OK);
  CHECK(out != NULL && out->dl_tensor.strides[0] == 1 && out->dl_tensor.strides[1] == 2);
  dlpm_managed_delete(out);
  CHECK(releases == 3);
  d.strides = odd;
  CHECK_STATUS(dlpm_managed_new_from(&d, &options, &untouched), DLPM_E_NON_COMPACT_STRIDES);
  options.order = 'C';
  d.strides = fstrides;
  CHECK_STATUS(dlpm_managed_new_from(&d, &options, &untouched), DLPM_E_NON_COMPACT_STRIDES);
  /* an order other than 0, 'C' and 'F' */
  options.order = 'A';
  CHECK_STATUS(dlpm_managed_new_from(&d, &options, &untouched), DLPM_E_INVALID_ARGUMENT);
  CHECK(strstr(dlpm_last_error(), "'C'") != NULL && strstr(dlpm_last_error(), "'F'") != NULL);
  options.order = 0;
  /* an invalid description */
  d.strides = NULL;
  shape[1] = -3;
  CHECK_STATUS(dlpm_managed_new_from(&d, &options, &untouched), DLPM_E_NEGATIVE_EXTENT);
  shape[1] = 3;
  /* options of a version this library does not know: told, not misread */
  options.version = 0;
  CHECK_STATUS(dlpm_managed_new_from(&d, &options, &untouched), DLPM_E_UNSUPPORTED_VERSION);
  CHECK(strstr(dlpm_last_error(), "dlpm_managed_options version 0") != NULL &&
        strstr(dlpm_last_error(), "options->version") != NULL);
  options.version = DLPM_MANAGED_OPTIONS_VERSION + 1;
  CHECK_STATUS(dlpm_managed_new_from(&d, &options, &untouched), DLPM_E_UNSUPPORTED_VERSION);
  options.version = DLPM_MANAGED_OPTIONS_VERSION;
  /* NULL arguments */
  CHECK_STATUS(dlpm_managed_new_from(NULL, &options, &untouched), DLPM_E_NULL_POINTER);
  CHECK(strstr(dlpm_last_error(), "description") != NULL);
  CHECK_STATUS(dlpm_managed_new_from(&d, NULL, &untouched), DLPM_E_NULL_POINTER);
  CHECK(strstr(dlpm_last_error(), "options") != NULL);
  CHECK_STATUS(dlpm_managed_new_from(&d, &options, NULL), DLPM_E_NULL_POINTER);
  CHECK(untouched == sentinel);
  CHECK(releases == 3 && ctx_count == 3 && other_count == 0);
  free(data);
}

/* dlpm_managed_new_ordered: NULL strides stand for 'C' or 'F' and are stored explicitly;
 * explicit strides must be that layout (or order 0 keeps them as given). */
static void test_managed_new_ordered(void) {
  float* data = (float*)malloc(24 * sizeof(float));
  int64_t shape[2] = {2, 3}, shape3[3] = {2, 3, 4};
  int64_t fstrides[2] = {1, 2}, cstrides[2] = {3, 1}, odd[2] = {2, 1};
  int64_t row_shape[2] = {1, 3}, row_strides[2] = {99, 1};
  const int64_t p40 = (int64_t)1 << 40, p32 = (int64_t)1 << 32;
  int64_t empty_inner[3] = {0, 0, 0}, empty_outer[3] = {0, 0, 0}, too_big[2] = {0, 0};
  int ctx_count = 0;
  int32_t yes = -1;
  dlpm_status c_status, f_status, plain_status;
  DLManagedTensorVersioned* out = NULL;
  DLManagedTensorVersioned* const sentinel = (DLManagedTensorVersioned*)(uintptr_t)0x1;
  DLManagedTensorVersioned* untouched = sentinel;
  DLDevice cpu;
  DLDataType f32 = dtype(kDLFloat, 32, 1);
  cpu.device_type = kDLCPU;
  cpu.device_id = 0;
  releases = 0;

  /* 'F' with NULL strides: explicit column-major strides, shape copied, one release */
  CHECK_STATUS(dlpm_managed_new_ordered(data, 2, shape, NULL, 'F', f32, cpu, 0, 0, count_release, &ctx_count, &out), DLPM_OK);
  CHECK(out != NULL);
  if (out == NULL) return;
  shape[0] = 99;
  CHECK(out->dl_tensor.shape[0] == 2 && out->dl_tensor.shape[1] == 3);
  CHECK(out->dl_tensor.strides != NULL && out->dl_tensor.strides[0] == 1 && out->dl_tensor.strides[1] == 2);
  CHECK(out->version.major == DLPACK_MAJOR_VERSION && out->flags == 0);
  CHECK_STATUS(dlpm_is_contiguous(&out->dl_tensor, 'F', &yes), DLPM_OK);
  CHECK(yes == 1);
  CHECK_STATUS(dlpm_is_contiguous(&out->dl_tensor, 'C', &yes), DLPM_OK);
  CHECK(yes == 0);
  dlpm_managed_delete(out);
  CHECK(releases == 1 && ctx_count == 1);
  shape[0] = 2;

  /* rank 3, both orders; 'C' stores what dlpm_managed_new stores */
  out = NULL;
  CHECK_STATUS(dlpm_managed_new_ordered(data, 3, shape3, NULL, 'F', f32, cpu, 0, DLPACK_FLAG_BITMASK_READ_ONLY, NULL, NULL, &out),
               DLPM_OK);
  CHECK(out != NULL && out->dl_tensor.strides[0] == 1 && out->dl_tensor.strides[1] == 2 && out->dl_tensor.strides[2] == 6);
  CHECK(out != NULL && out->flags == DLPACK_FLAG_BITMASK_READ_ONLY);
  dlpm_managed_delete(out);
  out = NULL;
  CHECK_STATUS(dlpm_managed_new_ordered(data, 3, shape3, NULL, 'C', f32, cpu, 0, 0, NULL, NULL, &out), DLPM_OK);
  CHECK(out != NULL && out->dl_tensor.strides[0] == 12 && out->dl_tensor.strides[1] == 4 && out->dl_tensor.strides[2] == 1);
  dlpm_managed_delete(out);

  /* rank 0: no strides to store */
  out = NULL;
  CHECK_STATUS(dlpm_managed_new_ordered(data, 0, NULL, NULL, 'F', f32, cpu, 0, 0, NULL, NULL, &out), DLPM_OK);
  CHECK(out != NULL && out->dl_tensor.ndim == 0);
  dlpm_managed_delete(out);

  /* an order other than 'C', 'F' (or 0 with explicit strides): refused before the
   * description is read, out untouched, release not called */
  CHECK_STATUS(dlpm_managed_new_ordered(data, 2, shape, NULL, 'A', f32, cpu, 0, 0, count_release, &ctx_count, &untouched),
               DLPM_E_INVALID_ARGUMENT);
  CHECK(strstr(dlpm_last_error(), "'C'") != NULL && strstr(dlpm_last_error(), "'F'") != NULL);
  CHECK_STATUS(dlpm_managed_new_ordered(data, 2, shape, cstrides, 'c', f32, cpu, 0, 0, count_release, &ctx_count, &untouched),
               DLPM_E_INVALID_ARGUMENT);
  shape[1] = -3;
  CHECK_STATUS(dlpm_managed_new_ordered(data, 2, shape, NULL, 'X', f32, cpu, 0, 0, count_release, &ctx_count, &untouched),
               DLPM_E_INVALID_ARGUMENT);
  CHECK_STATUS(dlpm_managed_new_ordered(data, 2, shape, NULL, 'F', f32, cpu, 0, 0, count_release, &ctx_count, &untouched),
               DLPM_E_NEGATIVE_EXTENT);
  shape[1] = 3;
  /* order 0 says nothing about NULL strides */
  CHECK_STATUS(dlpm_managed_new_ordered(data, 2, shape, NULL, 0, f32, cpu, 0, 0, count_release, &ctx_count, &untouched),
               DLPM_E_INVALID_ARGUMENT);
  CHECK(strstr(dlpm_last_error(), "'C'") != NULL && strstr(dlpm_last_error(), "'F'") != NULL);
  CHECK(untouched == sentinel);
  CHECK(releases == 1 && ctx_count == 1);

  /* explicit strides: order 0 keeps any; 'C' or 'F' must match them */
  out = NULL;
  CHECK_STATUS(dlpm_managed_new_ordered(data, 2, shape, odd, 0, f32, cpu, 0, 0, NULL, NULL, &out), DLPM_OK);
  CHECK(out != NULL && out->dl_tensor.strides[0] == 2 && out->dl_tensor.strides[1] == 1);
  dlpm_managed_delete(out);
  out = NULL;
  CHECK_STATUS(dlpm_managed_new_ordered(data, 2, shape, fstrides, 'F', f32, cpu, 0, 0, NULL, NULL, &out), DLPM_OK);
  CHECK(out != NULL && out->dl_tensor.strides[0] == 1 && out->dl_tensor.strides[1] == 2);
  dlpm_managed_delete(out);
  out = NULL;
  CHECK_STATUS(dlpm_managed_new_ordered(data, 2, shape, cstrides, 'C', f32, cpu, 0, 0, NULL, NULL, &out), DLPM_OK);
  dlpm_managed_delete(out);
  CHECK_STATUS(dlpm_managed_new_ordered(data, 2, shape, fstrides, 'C', f32, cpu, 0, 0, count_release, &ctx_count, &untouched),
               DLPM_E_NON_COMPACT_STRIDES);
  CHECK_STATUS(dlpm_managed_new_ordered(data, 2, shape, odd, 'F', f32, cpu, 0, 0, count_release, &ctx_count, &untouched),
               DLPM_E_NON_COMPACT_STRIDES);
  CHECK(strstr(dlpm_last_error(), "strides[0] = 2") != NULL);
  CHECK(untouched == sentinel);
  CHECK(releases == 1 && ctx_count == 1);
  /* an extent-1 dimension may carry any stride, as dlpm_is_contiguous says */
  out = NULL;
  CHECK_STATUS(dlpm_managed_new_ordered(data, 2, row_shape, row_strides, 'F', f32, cpu, 0, 0, NULL, NULL, &out), DLPM_OK);
  CHECK(out != NULL && out->dl_tensor.strides[0] == 99);
  dlpm_managed_delete(out);

  /* an empty tensor's computed strides saturate instead of overflowing */
  empty_inner[1] = p40;
  empty_inner[2] = p40;
  out = NULL;
  CHECK_STATUS(dlpm_managed_new_ordered(NULL, 3, empty_inner, NULL, 'F', f32, cpu, 0, 0, NULL, NULL, &out), DLPM_OK);
  CHECK(out != NULL && out->dl_tensor.strides[0] == 1 && out->dl_tensor.strides[1] == 0 && out->dl_tensor.strides[2] == 0);
  dlpm_managed_delete(out);
  empty_outer[0] = p40;
  empty_outer[1] = p40;
  out = NULL;
  CHECK_STATUS(dlpm_managed_new_ordered(NULL, 3, empty_outer, NULL, 'F', f32, cpu, 0, 0, NULL, NULL, &out), DLPM_OK);
  CHECK(out != NULL && out->dl_tensor.strides[0] == 1 && out->dl_tensor.strides[1] == p40 &&
        out->dl_tensor.strides[2] == INT64_MAX);
  dlpm_managed_delete(out);

  /* an empty tensor leaves with its order's compact strides, whatever it was given: PyTorch's
   * from_dlpack overflows on (INT64_MIN, INT64_MAX) */
  {
    int64_t e05[2] = {0, 5}, extreme[2] = {INT64_MIN, INT64_MAX};
    out = NULL;
    CHECK_STATUS(dlpm_managed_new(NULL, 2, e05, extreme, f32, cpu, 0, 0, NULL, NULL, &out), DLPM_OK);
    CHECK(out != NULL && out->dl_tensor.strides[0] == 5 && out->dl_tensor.strides[1] == 1);
    dlpm_managed_delete(out);
    out = NULL;
    CHECK_STATUS(dlpm_managed_new_ordered(NULL, 2, e05, extreme, 'F', f32, cpu, 0, 0, NULL, NULL, &out), DLPM_OK);
    CHECK(out != NULL && out->dl_tensor.strides[0] == 1 && out->dl_tensor.strides[1] == 0);
    dlpm_managed_delete(out);
  }

  /* a non-empty tensor whose element count overflows is refused in either order, as
   * dlpm_managed_new refuses it */
  too_big[0] = p32;
  too_big[1] = p32;
  c_status = dlpm_managed_new_ordered(data, 2, too_big, NULL, 'C', f32, cpu, 0, 0, count_release, &ctx_count, &untouched);
  f_status = dlpm_managed_new_ordered(data, 2, too_big, NULL, 'F', f32, cpu, 0, 0, count_release, &ctx_count, &untouched);
  plain_status = dlpm_managed_new(data, 2, too_big, NULL, f32, cpu, 0, 0, count_release, &ctx_count, &untouched);
  CHECK(c_status != DLPM_OK && f_status == c_status && plain_status == c_status);
  CHECK(untouched == sentinel && releases == 1);

  CHECK_STATUS(dlpm_managed_new_ordered(data, 2, shape, NULL, 'F', f32, cpu, 0, 0, NULL, NULL, NULL), DLPM_E_NULL_POINTER);
  CHECK(strcmp(dlpm_last_error(), "dlpm_managed_new_ordered: out is NULL") == 0);
  free(data);
}

static DLManagedTensorVersioned* hand_made(uint32_t major, uint32_t minor) {
  DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)calloc(1, sizeof *m);
  m->version.major = major;
  m->version.minor = minor;
  m->deleter = counting_deleter;
  return m;
}

static void test_version_and_legacy(void) {
  static float data[4] = {1, 2, 3, 4};
  static int64_t shape[1] = {4};
  DLManagedTensorVersioned* v = NULL;
  DLManagedTensor* legacy = NULL;
  DLManagedTensor* original = NULL;
  const char* reason = NULL;
  DLManagedTensorVersioned* ok = hand_made(1, 99);
  dlpm_requirements writer;
  deleter_calls = 0;
  CHECK_STATUS(dlpm_requirements_init(&writer, DLPM_REQUIREMENTS_VERSION), DLPM_OK);
  writer.writable = 1;

  CHECK_STATUS(dlpm_managed_check_version(hand_made(2, 0)), DLPM_E_VERSION_MISMATCH);
  CHECK(deleter_calls == 1);
  CHECK_STATUS(dlpm_managed_check_version(hand_made(0, 8)), DLPM_E_VERSION_MISMATCH);
  CHECK(deleter_calls == 2);
  CHECK_STATUS(dlpm_managed_check_version(ok), DLPM_OK);
  CHECK(deleter_calls == 2); /* still ours */
  dlpm_managed_delete(ok);
  CHECK(deleter_calls == 3);
  CHECK_STATUS(dlpm_managed_check_version(NULL), DLPM_E_NULL_POINTER);

  legacy = (DLManagedTensor*)calloc(1, sizeof *legacy);
  legacy->deleter = counting_legacy_deleter;
  legacy->dl_tensor = make_tensor(data, 1, shape, NULL, dtype(kDLFloat, 32, 1));
  CHECK_STATUS(dlpm_from_legacy(legacy, &v), DLPM_OK);
  CHECK(v != NULL && (v->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0); /* legacy: read-only, as NumPy does */
  CHECK(v->dl_tensor.data == data);
  CHECK(dlpm_managed_read_only_cause(v, &reason) == DLPM_READ_ONLY_LEGACY_UNKNOWN && reason == NULL);
  CHECK_STATUS(dlpm_check_managed(v, &writer), DLPM_E_READ_ONLY); /* says why, and what to do */
  CHECK(strstr(dlpm_last_error(), "a legacy DLPack tensor cannot say whether it may be written") != NULL);
  CHECK(strstr(dlpm_last_error(), "legacy_writable") != NULL);
  original = legacy;
  legacy = NULL;
  CHECK_STATUS(dlpm_to_legacy(v, &legacy), DLPM_OK); /* unknown writability: a legacy tensor says no less */
  CHECK(legacy == original);                          /* and it is the producer's own, unwrapped */
  dlpm_legacy_delete(legacy);
  CHECK(deleter_calls == 4);

  legacy = (DLManagedTensor*)calloc(1, sizeof *legacy);
  legacy->deleter = counting_legacy_deleter;
  legacy->dl_tensor = make_tensor(data, 1, shape, NULL, dtype(kDLFloat, 32, 1));
  CHECK_STATUS(dlpm_from_legacy_writable(legacy, &v), DLPM_OK);
  CHECK((v->flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0);
  legacy = NULL;
  CHECK_STATUS(dlpm_to_legacy(v, &legacy), DLPM_OK);
  CHECK(legacy != NULL && legacy->dl_tensor.data == data);
  legacy->deleter(legacy); /* runs the versioned deleter, which runs the original legacy one */
  CHECK(deleter_calls == 5);

  legacy = (DLManagedTensor*)calloc(1, sizeof *legacy);
  legacy->deleter = counting_legacy_deleter;
  CHECK_STATUS(dlpm_from_legacy(legacy, NULL), DLPM_E_NULL_POINTER); /* ownership was passed: released */
  CHECK(deleter_calls == 6);
  CHECK_STATUS(dlpm_from_legacy(NULL, &v), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_to_legacy(NULL, &legacy), DLPM_E_NULL_POINTER);

  /* A producer that forbids writes: READ_ONLY with its reason, which the legacy export names. */
  ok = hand_made(DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  ok->dl_tensor = make_tensor(data, 1, shape, NULL, dtype(kDLFloat, 32, 1));
  CHECK(dlpm_managed_read_only_cause(ok, &reason) == DLPM_READ_ONLY_NONE && reason == NULL);
  CHECK_STATUS(dlpm_managed_forbid_writes(ok, DLPM_READ_ONLY_FLAGGED, "x", &v), DLPM_E_INVALID_ARGUMENT);
  CHECK_STATUS(dlpm_managed_forbid_writes(ok, DLPM_READ_ONLY_PRODUCER_FORBIDS, NULL, &v), DLPM_E_INVALID_ARGUMENT);
  CHECK_STATUS(dlpm_managed_forbid_writes(ok, DLPM_READ_ONLY_LEGACY_UNKNOWN, NULL, NULL), DLPM_E_NULL_POINTER);
  CHECK(deleter_calls == 6); /* refused: still ours */
  CHECK_STATUS(dlpm_managed_forbid_writes(ok, DLPM_READ_ONLY_PRODUCER_FORBIDS, "the producer forbids it", &v), DLPM_OK);
  CHECK((v->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  CHECK(dlpm_managed_read_only_cause(v, &reason) == DLPM_READ_ONLY_PRODUCER_FORBIDS);
  CHECK(reason != NULL && strcmp(reason, "the producer forbids it") == 0);
  CHECK_STATUS(dlpm_check_managed(v, &writer), DLPM_E_READ_ONLY);
  CHECK(strstr(dlpm_last_error(), "READ_ONLY because the producer forbids it") != NULL);
  CHECK_STATUS(dlpm_to_legacy(v, &legacy), DLPM_E_READ_ONLY);
  CHECK(strstr(dlpm_last_error(), "READ_ONLY because the producer forbids it, and a legacy") != NULL);
  /* Wrapped again as of unknown writability, it keeps the stronger cause: a legacy export,
   * which would drop READ_ONLY, stays refused (it was accepted, and the flag lost) */
  CHECK_STATUS(dlpm_managed_forbid_writes(v, DLPM_READ_ONLY_LEGACY_UNKNOWN, NULL, &v), DLPM_OK);
  CHECK(dlpm_managed_read_only_cause(v, &reason) == DLPM_READ_ONLY_PRODUCER_FORBIDS);
  CHECK(reason != NULL && strcmp(reason, "the producer forbids it") == 0);
  CHECK_STATUS(dlpm_to_legacy(v, &legacy), DLPM_E_READ_ONLY);
  dlpm_managed_delete(v);
  CHECK(deleter_calls == 7); /* the wrappers ran the producer's deleter, once */

  /* READ_ONLY set elsewhere (FLAGGED) is replaced by the caller's LEGACY_UNKNOWN, as the
   * header says: a re-export of a legacy import copied the flag; a legacy export is then
   * accepted (the caller said the writability is unknown) */
  ok = hand_made(DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  ok->dl_tensor = make_tensor(data, 1, shape, NULL, dtype(kDLFloat, 32, 1));
  ok->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  CHECK(dlpm_managed_read_only_cause(ok, NULL) == DLPM_READ_ONLY_FLAGGED);
  CHECK_STATUS(dlpm_to_legacy(ok, &legacy), DLPM_E_READ_ONLY);
  CHECK_STATUS(dlpm_managed_forbid_writes(ok, DLPM_READ_ONLY_LEGACY_UNKNOWN, NULL, &v), DLPM_OK);
  CHECK(dlpm_managed_read_only_cause(v, NULL) == DLPM_READ_ONLY_LEGACY_UNKNOWN);
  CHECK_STATUS(dlpm_to_legacy(v, &legacy), DLPM_OK);
  dlpm_legacy_delete(legacy);
  CHECK(deleter_calls == 8);

  CHECK(dlpm_managed_read_only_cause(NULL, &reason) == DLPM_READ_ONLY_NONE);
}

/* Soundness at the extremes: each case was undefined behaviour or a wrong answer once. */
static void test_extremes(void) {
  static float data[32];
  int64_t out = -1;
  int32_t flag = -1;
  const int64_t p32 = (int64_t)1 << 32, p62 = (int64_t)1 << 62;
  int64_t span_shape[2] = {2, 3}, span_strides[2] = {0, -((int64_t)1 << 60)};
  int64_t empty_shape[3] = {0, 0, 0}, ones[3] = {1, 1, 1};
  int64_t e30_shape[2] = {3, 0}, e30_strides[2] = {INT64_MAX, 1}, e30_index[2] = {2, 0};
  int64_t wide_shape[3] = {2, 2, 1}, wide_strides[3] = {p62, p62, 1};
  int64_t huge_shape[1] = {(int64_t)1 << 60};
  int64_t garbage_shape[2] = {0, -3};
  int64_t storage[5] = {2, 3, 3, 1, 0};
  DLTensor t;

  /* data 64 bytes into a buffer, strides reaching INT64_MIN bytes below it */
  t = make_tensor((char*)data + 64, 2, span_shape, span_strides, dtype(kDLFloat, 32, 1));
  CHECK(dlpm_validate(&t) == DLPM_E_BYTE_OFFSET_OVERFLOW || dlpm_validate(&t) == DLPM_E_SPAN_OVERFLOW);

  /* an empty tensor has 0 elements, whichever extent is the zero */
  empty_shape[0] = p32;
  empty_shape[1] = p32;
  t = make_tensor(NULL, 3, empty_shape, ones, dtype(kDLInt, 32, 1));
  CHECK_STATUS(dlpm_validate(&t), DLPM_OK);
  CHECK_STATUS(dlpm_numel(&t, &out), DLPM_OK);
  CHECK(out == 0);
  CHECK_STATUS(dlpm_nbytes(&t, &out), DLPM_OK);
  CHECK(out == 0);

  /* every index is bounds-checked before any arithmetic */
  out = -1;
  t = make_tensor(data, 2, e30_shape, e30_strides, dtype(kDLInt, 32, 1));
  CHECK_STATUS(dlpm_element_offset(&t, e30_index, &out), DLPM_E_INVALID_ARGUMENT);
  CHECK(out == -1);
  t = make_tensor(data, 3, wide_shape, wide_strides, dtype(kDLInt, 32, 1));
  CHECK_STATUS(dlpm_validate(&t), DLPM_E_SPAN_OVERFLOW);

  /* nbytes without an intermediate overflow */
  t = make_tensor(data, 1, huge_shape, NULL, dtype(kDLInt, 8, 1));
  CHECK_STATUS(dlpm_nbytes(&t, &out), DLPM_OK);
  CHECK(out == (int64_t)1 << 60);

  /* garbage is never contiguous: the C function refuses it */
  t = make_tensor(data, 2, garbage_shape, NULL, dtype(kDLFloat, 32, 1));
  CHECK_STATUS(dlpm_is_contiguous(&t, 'C', &flag), DLPM_E_NEGATIVE_EXTENT);
  CHECK(flag == -1);

  /* misaligned shape or strides pointers: their own status, nothing read through them */
  t = make_tensor(data, 2, (int64_t*)((char*)storage + 1), storage + 2, dtype(kDLFloat, 32, 1));
  CHECK_STATUS(dlpm_validate(&t), DLPM_E_MISALIGNED_METADATA);
  CHECK_STATUS(dlpm_numel(&t, &out), DLPM_E_MISALIGNED_METADATA);
  t = make_tensor(data, 2, storage, (int64_t*)((char*)(storage + 2) + 4), dtype(kDLFloat, 32, 1));
  CHECK_STATUS(dlpm_validate(&t), DLPM_E_MISALIGNED_METADATA);
}

/* Requirements are versioned and validated; nothing is silently read as "anything". */
static void test_requirements_are_checked(void) {
  float data[12];
  int64_t shape[2] = {3, 4}, strides[2] = {4, 1}, wrong_shape[2] = {5, 5};
  DLTensor t = make_tensor(data, 2, shape, strides, dtype(kDLFloat, 32, 1));
  dlpm_requirements req;

  memset(&req, 0x5a, sizeof req);
  CHECK_STATUS(dlpm_requirements_init(&req, 0), DLPM_E_UNSUPPORTED_VERSION);
  CHECK_STATUS(dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION + 1), DLPM_E_UNSUPPORTED_VERSION);
  CHECK(req.ndim == 0x5a5a5a5a); /* untouched */
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_UNSUPPORTED_VERSION);
  CHECK_STATUS(dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION), DLPM_OK);
  CHECK(req.version == DLPM_REQUIREMENTS_VERSION);
  {
    /* DLPM_REQUIREMENTS_INIT, a constant initializer, is what dlpm_requirements_init writes. */
    static const dlpm_requirements any = DLPM_REQUIREMENTS_INIT;
    CHECK(any.version == req.version && any.check_dtype == req.check_dtype && any.dtype.code == req.dtype.code &&
          any.dtype.bits == req.dtype.bits && any.dtype.lanes == req.dtype.lanes && any.ndim == req.ndim &&
          any.shape == req.shape && any.order == req.order && any.device_types == req.device_types &&
          any.num_device_types == req.num_device_types && any.device_id == req.device_id &&
          any.min_alignment == req.min_alignment && any.writable == req.writable);
    CHECK(any.null_strides == DLPM_NULL_STRIDES_ROW_MAJOR && req.null_strides == DLPM_NULL_STRIDES_ROW_MAJOR);
    CHECK(any.layout.leading_dim == DLPM_ANY_LEADING_DIM && req.layout.leading_dim == DLPM_ANY_LEADING_DIM);
    CHECK(any.layout.compact == 0 && req.layout.compact == 0 && any.layout.stride_order == NULL &&
          req.layout.stride_order == NULL && any.layout.shape_divisors == NULL && req.layout.shape_divisors == NULL &&
          any.layout.stride_divisors == NULL && req.layout.stride_divisors == NULL);
  }

  req.shape = wrong_shape; /* with ndim left at -1 this passed silently */
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_INVALID_ARGUMENT);
  req.ndim = 2;
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_SHAPE_MISMATCH);
  req.shape = NULL;
  req.ndim = -2; /* was taken as "any rank" */
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_INVALID_ARGUMENT);
  req.ndim = 65;
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_INVALID_ARGUMENT);
  req.ndim = -1;
  req.version = 0;
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_UNSUPPORTED_VERSION);
}

/* CuTe DSL's layout vocabulary through C, on the examples of CuTe's documentation
 * (tests/modules/dlpack_mdspan/layout_requirements.test.cpp walks all of them in C++). */
static void test_cute_layout_vocabulary(void) {
  float data[8 * 4 * 16 * 2];
  int64_t a_shape[4] = {8, 4, 16, 2}, a_strides[4] = {2, 16, 64, 1}; /* torch.empty(16,4,8,2).permute(2,1,0,3) */
  int64_t b_shape[5] = {1, 4, 1, 32, 1}, b_strides[5] = {1, 1, 1, 4, 1};
  int64_t c_shape[2] = {2, 2}, c_strides[2] = {8, 2};
  DLTensor a = make_tensor(data, 4, a_shape, a_strides, dtype(kDLFloat, 32, 1));
  DLTensor b = make_tensor(data, 5, b_shape, b_strides, dtype(kDLFloat, 32, 1));
  DLTensor c = make_tensor(data, 2, c_shape, c_strides, dtype(kDLFloat, 32, 1));
  int32_t leading = 7, order[5] = {0, 0, 0, 0, 0};
  const int32_t a_order[4] = {2, 1, 0, 3}, wrong_order[4] = {0, 1, 2, 3};
  const int32_t b_order[5] = {3, 0, 2, 4, 1}, b_bad[5] = {2, 1, 3, 0, 4}, b_missing[5] = {2, 1, 2, 3, 4};
  const int64_t by_2[4] = {2, 1, 1, 1}, strides_by[4] = {2, 4, 16, 1}, b_by_4[5] = {4, 1, 1, 1, 1};
  dlpm_requirements req;

  /* mark_layout_dynamic(): deduction */
  CHECK_STATUS(dlpm_leading_dim(&a, &leading), DLPM_OK);
  CHECK(leading == 3);
  CHECK_STATUS(dlpm_leading_dim(&b, &leading), DLPM_OK);
  CHECK(leading == 1);
  CHECK_STATUS(dlpm_leading_dim(&c, &leading), DLPM_OK);
  CHECK(leading == -1); /* no unit stride: every stride dynamic */
  CHECK_STATUS(dlpm_leading_dim(NULL, &leading), DLPM_E_NULL_POINTER);
  /* mark_compact_shape_dynamic(): the deduced stride_order */
  CHECK_STATUS(dlpm_stride_order(&a, order, 5), DLPM_OK);
  CHECK(order[0] == 2 && order[1] == 1 && order[2] == 0 && order[3] == 3);
  CHECK_STATUS(dlpm_stride_order(&b, order, 5), DLPM_E_AMBIGUOUS_LAYOUT); /* t7 */
  CHECK_STATUS(dlpm_stride_order(&a, order, 3), DLPM_E_INVALID_ARGUMENT);

  /* requirements: leading_dim, stride_order, compact, divisibility */
  CHECK_STATUS(dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION), DLPM_OK);
  CHECK(req.layout.leading_dim == DLPM_ANY_LEADING_DIM && req.layout.stride_order == NULL && req.layout.compact == 0);
  req.layout.leading_dim = -1;
  req.layout.stride_order = a_order;
  req.layout.compact = 1;
  req.layout.shape_divisors = by_2;
  req.layout.stride_divisors = strides_by;
  CHECK_STATUS(dlpm_check(&a, &req), DLPM_OK);
  req.layout.leading_dim = 1; /* t6: "Expected strides[leading_dim] == 1, but got 16" */
  CHECK_STATUS(dlpm_check(&a, &req), DLPM_E_NON_COMPACT_STRIDES);
  CHECK(strstr(dlpm_last_error(), "strides[1] = 16") != NULL);
  req.layout.leading_dim = DLPM_ANY_LEADING_DIM;
  req.layout.stride_order = wrong_order; /* t6: "not consistent with the deduced stride_order" */
  CHECK_STATUS(dlpm_check(&a, &req), DLPM_E_NON_COMPACT_STRIDES);
  CHECK_STATUS(dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION), DLPM_OK);
  req.layout.stride_order = b_order; /* t3 */
  req.layout.compact = 1;
  CHECK_STATUS(dlpm_check(&b, &req), DLPM_OK);
  req.layout.stride_order = b_bad; /* t12 */
  CHECK_STATUS(dlpm_check(&b, &req), DLPM_E_NON_COMPACT_STRIDES);
  req.layout.stride_order = b_missing; /* t9 */
  CHECK_STATUS(dlpm_check(&b, &req), DLPM_E_INVALID_ARGUMENT);
  CHECK(strcmp(dlpm_last_error(), "layout requirement: stride_order must contain every mode, and 0 is missing") == 0);
  CHECK_STATUS(dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION), DLPM_OK);
  req.layout.shape_divisors = b_by_4; /* t11: "The shape(1) of mode(0) is not divisible by the divisibility(4)" */
  CHECK_STATUS(dlpm_check(&b, &req), DLPM_E_DIVISIBILITY);
  CHECK(strcmp(dlpm_last_error(), "shape[0] = 1 is not a multiple of 4") == 0);
  req.layout.shape_divisors = NULL;
  req.layout.leading_dim = 30; /* t8: out of range */
  CHECK_STATUS(dlpm_check(&b, &req), DLPM_E_INVALID_ARGUMENT);
}

/* dlpm_to_legacy reads nothing but the version of a tensor of another major version. */
static void test_to_legacy_checks_the_version(void) {
  DLManagedTensorVersioned* future = hand_made(2, 0);
  DLManagedTensor* legacy = NULL;
  DLManagedTensorVersioned* copy = NULL;
  dlpm_requirements anything;
  deleter_calls = 0;
  CHECK_STATUS(dlpm_requirements_init(&anything, DLPM_REQUIREMENTS_VERSION), DLPM_OK);
  CHECK_STATUS(dlpm_to_legacy(future, &legacy), DLPM_E_VERSION_MISMATCH);
  CHECK(legacy == NULL);
  /* Only a tensor's version may be read in another major version: the check and the copy
   * read its dl_tensor as this version's before */
  CHECK_STATUS(dlpm_check_managed(future, &anything), DLPM_E_VERSION_MISMATCH);
  CHECK(strstr(dlpm_last_error(), "dlpm_check_managed: DLPack version 2.0 has major 2") != NULL);
  CHECK_STATUS(dlpm_managed_copy_to_host(future, &copy), DLPM_E_VERSION_MISMATCH);
  CHECK(copy == NULL);
  CHECK(deleter_calls == 0); /* still the caller's */
  future->version.major = DLPACK_MAJOR_VERSION;
  dlpm_managed_delete(future);
  CHECK(deleter_calls == 1);
}

/* One vocabulary: every status has its own name, the same as the C++ errc's. */
/* The queries bindings ask instead of re-deriving: itemsize, host access, byte span, rank. */
static void test_binding_queries(void) {
  static float data[12];
  int64_t shape[2] = {3, 4}, strides[2] = {1, -3}, begin = -1, end = -1;
  DLTensor t = make_tensor(data, 2, shape, strides, dtype(kDLFloat, 32, 1));
  CHECK(DLPM_MAX_NDIM == 64);
  CHECK(dlpm_storage_itemsize(dtype(kDLFloat, 32, 1), 0) == 4);
  CHECK(dlpm_storage_itemsize(dtype(kDLUInt, 8, 3), 0) == 3);
  CHECK(dlpm_storage_itemsize(dtype(kDLFloat4_e2m1fn, 4, 1), 0) == 0); /* half a byte */
  CHECK(dlpm_storage_itemsize(dtype(kDLFloat4_e2m1fn, 4, 1), 1) == 1); /* padded */
  CHECK(dlpm_storage_itemsize(dtype(kDLFloat4_e2m1fn, 4, 2), 0) == 1);
  CHECK(dlpm_storage_itemsize(dtype(kDLFloat, 0, 1), 0) == 0);
  CHECK(dlpm_storage_itemsize(dtype(kDLFloat, 0, 2), 1) == 0); /* no bits: nothing stored, padded or not */
  CHECK(dlpm_is_host_accessible(kDLCPU) == 1);
  CHECK(dlpm_is_host_accessible(kDLCUDAHost) == 1);
  CHECK(dlpm_is_host_accessible(kDLCUDAManaged) == 1);
  CHECK(dlpm_is_host_accessible(kDLROCMHost) == 1);
  CHECK(dlpm_is_host_accessible(kDLCUDA) == 0);
  CHECK(dlpm_is_host_accessible(kDLOneAPI) == 0);
  CHECK(dlpm_is_host_accessible(-1) == 0);
  CHECK(dlpm_is_host_accessible(1000) == 0);
  CHECK(strcmp(dlpm_device_type_name(kDLCPU), "kDLCPU") == 0);
  CHECK(strcmp(dlpm_device_type_name(kDLOneAPI), "kDLOneAPI") == 0);
  CHECK(strcmp(dlpm_device_type_name(1000), "unknown") == 0);
  { /* the array API's stream= values for CUDA (the Python component's decoding) */
    uintptr_t handle = 77;
    CHECK_STATUS(dlpm_cuda_array_api_stream(-1, &handle), DLPM_OK);
    CHECK(handle == 0); /* no synchronisation */
    CHECK_STATUS(dlpm_cuda_array_api_stream(1, &handle), DLPM_OK);
    CHECK(handle == 1);
    CHECK_STATUS(dlpm_cuda_array_api_stream(2, &handle), DLPM_OK);
    CHECK(handle == 2);
    CHECK_STATUS(dlpm_cuda_array_api_stream(0x7f00dead0000, &handle), DLPM_OK);
    CHECK(handle == (uintptr_t)0x7f00dead0000);
    handle = 77;
    CHECK_STATUS(dlpm_cuda_array_api_stream(0, &handle), DLPM_E_INVALID_ARGUMENT);
    CHECK(handle == 77 && strstr(dlpm_last_error(), "unsupported stream on CUDA: 0 (") != NULL);
    CHECK_STATUS(dlpm_cuda_array_api_stream(-2, &handle), DLPM_E_INVALID_ARGUMENT);
    CHECK(strstr(dlpm_last_error(), "unsupported stream on CUDA: -2") != NULL);
    CHECK_STATUS(dlpm_cuda_array_api_stream(INT64_MIN, &handle), DLPM_E_INVALID_ARGUMENT);
    CHECK_STATUS(dlpm_cuda_array_api_stream(1, NULL), DLPM_E_NULL_POINTER);
  }
  { /* the array API's stream= values for ROCm */
    uintptr_t handle = 77;
    int32_t synchronise = 77;
    CHECK_STATUS(dlpm_rocm_array_api_stream(-1, &synchronise, &handle), DLPM_OK);
    CHECK(synchronise == 0 && handle == 0); /* no synchronisation */
    CHECK_STATUS(dlpm_rocm_array_api_stream(0, &synchronise, &handle), DLPM_OK);
    CHECK(synchronise == 1 && handle == 0); /* the default stream */
    CHECK_STATUS(dlpm_rocm_array_api_stream(0x7f00dead0000, &synchronise, &handle), DLPM_OK);
    CHECK(synchronise == 1 && handle == (uintptr_t)0x7f00dead0000);
    handle = 77;
    synchronise = 77;
    CHECK_STATUS(dlpm_rocm_array_api_stream(1, &synchronise, &handle), DLPM_E_INVALID_ARGUMENT);
    CHECK(handle == 77 && synchronise == 77 && strstr(dlpm_last_error(), "unsupported stream on ROCm: 1 (") != NULL);
    CHECK_STATUS(dlpm_rocm_array_api_stream(2, &synchronise, &handle), DLPM_E_INVALID_ARGUMENT);
    CHECK_STATUS(dlpm_rocm_array_api_stream(-2, &synchronise, &handle), DLPM_E_INVALID_ARGUMENT);
    CHECK(strstr(dlpm_last_error(), "unsupported stream on ROCm: -2") != NULL);
    CHECK_STATUS(dlpm_rocm_array_api_stream(0, NULL, &handle), DLPM_E_NULL_POINTER);
    CHECK_STATUS(dlpm_rocm_array_api_stream(0, &synchronise, NULL), DLPM_E_NULL_POINTER);
  }

  t.byte_offset = 9 * 4; /* column j at data[9 - 3j]: elements 0..11 */
  CHECK_STATUS(dlpm_byte_span(&t, 0, &begin, &end), DLPM_OK);
  CHECK(begin == 0 && end == 48);
  t.byte_offset = 0; /* now the negative stride reaches below data */
  CHECK_STATUS(dlpm_byte_span(&t, 0, &begin, &end), DLPM_OK);
  CHECK(begin == -36 && end == 12);
  shape[0] = 0;
  CHECK_STATUS(dlpm_byte_span(&t, 0, &begin, &end), DLPM_OK);
  CHECK(begin == 0 && end == 0);
  shape[0] = -1;
  begin = end = 7;
  CHECK_STATUS(dlpm_byte_span(&t, 0, &begin, &end), DLPM_E_NEGATIVE_EXTENT);
  CHECK(begin == 7 && end == 7); /* out-parameters untouched on failure */
  CHECK_STATUS(dlpm_byte_span(NULL, 0, &begin, &end), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_byte_span(&t, 0, NULL, &end), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_byte_span(&t, 0, &begin, NULL), DLPM_E_NULL_POINTER);
}

/* dlpm_check_layout: dlpm_check (or dlpm_check_managed with the flags) and dlpm_layout in
 * one call. It refuses what they refuse, with the same status and message, and writes what
 * dlpm_layout writes. */
static dlpm_status check_both(const DLTensor* t, uint64_t flags, const dlpm_requirements* req) {
  DLManagedTensorVersioned m;
  int64_t resolved[4] = {-7, -7, -7, -7}, count = -7;
  char message[128];
  dlpm_status separate, joint;
  memset(&m, 0, sizeof m);
  m.version.major = DLPACK_MAJOR_VERSION;
  m.dl_tensor = *t;
  m.flags = flags;
  separate = flags == 0 ? dlpm_check(t, req) : dlpm_check_managed(&m, req);
  snprintf(message, sizeof message, "%s", dlpm_last_error());
  joint = dlpm_check_layout(t, flags, req, resolved, 4, &count);
  CHECK(joint == separate);
  if (joint != DLPM_OK) {
    CHECK(strcmp(dlpm_last_error(), message) == 0);
    CHECK(count == -7 && resolved[0] == -7); /* out-parameters untouched on failure */
  } else {
    int64_t expected[4] = {-7, -7, -7, -7}, expected_count = -7;
    CHECK_STATUS(dlpm_layout(t, expected, 4, &expected_count), DLPM_OK);
    CHECK(count == expected_count);
    CHECK(memcmp(resolved, expected, sizeof resolved) == 0);
  }
  return joint;
}

static void test_check_layout(void) {
  static float data[12];
  int64_t shape[2] = {3, 4}, strides[2] = {4, 1}, fstrides[2] = {1, 3}, want_shape[2] = {-1, 4};
  int64_t resolved[2] = {-7, -7}, count = -7, index[2] = {2, 3}, a = -7, b = -7;
  int32_t host_only[1] = {kDLCPU}, order[2] = {1, 0};
  DLTensor t = make_tensor(data, 2, shape, strides, dtype(kDLFloat, 32, 1));
  dlpm_requirements req;

  CHECK_STATUS(dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION), DLPM_OK);
  CHECK_STATUS(dlpm_check_layout(&t, 0, &req, resolved, 2, &count), DLPM_OK);
  CHECK(resolved[0] == 4 && resolved[1] == 1 && count == 12);
  t.strides = NULL; /* row-major, resolved by the library */
  resolved[0] = resolved[1] = -7;
  CHECK_STATUS(dlpm_check_layout(&t, 0, &req, resolved, 2, &count), DLPM_OK);
  CHECK(resolved[0] == 4 && resolved[1] == 1 && count == 12);
  t.strides = strides;

  /* The arguments: NULL pointers, the requirements' version, the capacity. */
  count = -7;
  CHECK_STATUS(dlpm_check_layout(NULL, 0, &req, resolved, 2, &count), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_check_layout(&t, 0, NULL, resolved, 2, &count), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_check_layout(&t, 0, &req, resolved, 2, NULL), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_check_layout(&t, 0, &req, NULL, 0, &count), DLPM_OK); /* the count alone */
  CHECK(count == 12);
  count = -7;
  CHECK_STATUS(dlpm_check_layout(&t, 0, &req, resolved, 1, &count), DLPM_E_INVALID_ARGUMENT); /* capacity < ndim */
  CHECK(strcmp(dlpm_last_error(), "dlpm_check_layout: capacity = 1 is less than ndim = 2") == 0);
  CHECK_STATUS(dlpm_check_layout(&t, 0, &req, resolved, -1, &count), DLPM_E_INVALID_ARGUMENT);
  CHECK(count == -7);
  req.version = 0;
  CHECK_STATUS(dlpm_check_layout(&t, 0, &req, resolved, 2, &count), DLPM_E_UNSUPPORTED_VERSION);
  req.version = DLPM_REQUIREMENTS_VERSION;
  {
    int64_t scalar_count = -7;
    DLTensor scalar = make_tensor(data, 0, NULL, NULL, dtype(kDLFloat, 32, 1));
    CHECK_STATUS(dlpm_check_layout(&scalar, 0, &req, NULL, 0, &scalar_count), DLPM_OK); /* rank 0: no strides */
    CHECK(scalar_count == 1);
  }
  /* An invalid tensor is refused by the check, before the capacity is compared with ndim. */
  shape[0] = -1;
  CHECK_STATUS(dlpm_check_layout(&t, 0, &req, resolved, 1, &count), DLPM_E_NEGATIVE_EXTENT);
  shape[0] = 3;

  /* Every refusal of test_requirements, and the flags of a managed tensor. */
  CHECK(check_both(&t, 0, &req) == DLPM_OK);
  req.check_dtype = 1;
  req.dtype = dtype(kDLFloat, 32, 1);
  req.ndim = 2;
  req.shape = want_shape;
  req.order = 'C';
  req.device_types = host_only;
  req.num_device_types = 1;
  req.device_id = 0;
  req.min_alignment = 4;
  CHECK(check_both(&t, 0, &req) == DLPM_OK);
  req.dtype = dtype(kDLFloat, 64, 1);
  CHECK(check_both(&t, 0, &req) == DLPM_E_DTYPE_MISMATCH);
  req.dtype = dtype(kDLFloat, 32, 1);
  req.ndim = 3;
  req.shape = NULL; /* a shape has ndim entries: want_shape has 2 */
  CHECK(check_both(&t, 0, &req) == DLPM_E_NDIM_MISMATCH);
  req.ndim = 2;
  req.shape = want_shape;
  want_shape[1] = 5;
  CHECK(check_both(&t, 0, &req) == DLPM_E_SHAPE_MISMATCH);
  want_shape[1] = 4;
  req.order = 'F';
  CHECK(check_both(&t, 0, &req) == DLPM_E_NON_COMPACT_STRIDES);
  t.strides = fstrides;
  CHECK(check_both(&t, 0, &req) == DLPM_OK);
  t.strides = strides;
  req.order = 'Q';
  CHECK(check_both(&t, 0, &req) == DLPM_E_INVALID_ARGUMENT);
  req.order = 'A';
  t.device.device_type = kDLCUDA;
  CHECK(check_both(&t, 0, &req) == DLPM_E_DEVICE_MISMATCH);
  req.num_device_types = 0; /* an empty list accepts nothing */
  t.device.device_type = kDLCPU;
  CHECK(check_both(&t, 0, &req) == DLPM_E_DEVICE_MISMATCH);
  req.num_device_types = 1;
  t.device.device_id = 1;
  CHECK(check_both(&t, 0, &req) == DLPM_E_DEVICE_ID_MISMATCH);
  t.device.device_id = 0;
  t.data = (char*)data + 2;
  CHECK(check_both(&t, 0, &req) == DLPM_E_MISALIGNED_DATA);
  t.data = data;
  req.layout.leading_dim = 0; /* the layout vocabulary: stride 1 on mode 0 */
  CHECK(check_both(&t, 0, &req) == DLPM_E_NON_COMPACT_STRIDES);
  req.layout.leading_dim = DLPM_ANY_LEADING_DIM;
  req.layout.stride_order = order;
  CHECK(check_both(&t, 0, &req) == DLPM_E_NON_COMPACT_STRIDES);
  order[0] = 0;
  order[1] = 1;
  CHECK(check_both(&t, 0, &req) == DLPM_OK);
  req.layout.stride_order = NULL;
  req.writable = 1; /* a bare tensor has no flags: writable cannot refuse it */
  CHECK(check_both(&t, 0, &req) == DLPM_OK);
  CHECK(check_both(&t, DLPACK_FLAG_BITMASK_READ_ONLY, &req) == DLPM_E_READ_ONLY);
  req.writable = 0;
  CHECK(check_both(&t, DLPACK_FLAG_BITMASK_READ_ONLY, &req) == DLPM_OK);
  req.null_strides = DLPM_NULL_STRIDES_REJECT;
  t.strides = NULL;
  CHECK(check_both(&t, 0, &req) == DLPM_E_NULL_STRIDES);
  t.strides = strides;
  req.null_strides = DLPM_NULL_STRIDES_ROW_MAJOR;
  shape[1] = -4;
  CHECK(check_both(&t, 0, &req) == DLPM_E_NEGATIVE_EXTENT);
  shape[1] = 4;
  {
    /* The sub-byte padding flag: a 4-bit dtype padded to a byte per element is 12 bytes at
     * byte_offset 11, packed it is 6 bytes and the offset cannot name a whole element. */
    static uint8_t bytes[64];
    DLTensor fp4 = make_tensor(bytes, 2, shape, strides, dtype(kDLFloat4_e2m1fn, 4, 1));
    dlpm_requirements any;
    CHECK_STATUS(dlpm_requirements_init(&any, DLPM_REQUIREMENTS_VERSION), DLPM_OK);
    fp4.byte_offset = 11;
    CHECK(check_both(&fp4, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, &any) == DLPM_OK);
    fp4.data = NULL;
    CHECK(check_both(&fp4, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, &any) == DLPM_E_NULL_DATA);
  }

  /* dlpm_element_offset_prechecked, flags 0: dlpm_element_offset's answer and refusals, without the
   * validation, on a tensor dlpm_check_layout accepted. */
  t.byte_offset = 4;
  t.strides = fstrides;
  shape[0] = 3;
  shape[1] = 3;
  CHECK_STATUS(dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION), DLPM_OK);
  CHECK_STATUS(dlpm_check_layout(&t, 0, &req, resolved, 2, &count), DLPM_OK);
  for (index[0] = -1; index[0] <= shape[0]; ++index[0]) {
    for (index[1] = -1; index[1] <= shape[1]; ++index[1]) {
      char message[128];
      const dlpm_status checked = dlpm_element_offset(&t, index, &a);
      snprintf(message, sizeof message, "%s", dlpm_last_error());
      CHECK_STATUS(dlpm_element_offset_prechecked(&t, 0, index, &b), checked);
      if (checked == DLPM_OK) {
        CHECK(a == b && a == 4 + (index[0] + 3 * index[1]) * 4);
      } else {
        CHECK(checked == DLPM_E_INVALID_ARGUMENT);
        CHECK(strcmp(dlpm_last_error(), message) == 0);
      }
      a = b = -7;
    }
  }
  b = -7;
  CHECK_STATUS(dlpm_element_offset_prechecked(NULL, 0, index, &b), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_element_offset_prechecked(&t, 0, NULL, &b), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_element_offset_prechecked(&t, 0, index, NULL), DLPM_E_NULL_POINTER);
  CHECK(b == -7);
  t.dtype = dtype(kDLFloat4_e2m1fn, 4, 1); /* packed sub-byte: no byte address */
  t.byte_offset = 0;
  index[0] = index[1] = 0;
  CHECK_STATUS(dlpm_element_offset_prechecked(&t, 0, index, &b), DLPM_E_SUBBYTE_NOT_VIEWABLE);
}

/* dlpm_managed_new_inline: the owner's bytes inside the tensor's allocation, and the
 * buffer's size checked against the bytes the layout reaches. */
struct inline_owner {
  void* buffer;
  int64_t length;
  int* released; /* where the release counts itself */
};
static uintptr_t released_at = 0;
static void release_inline_owner(void* state) {
  struct inline_owner o;
  memcpy(&o, state, sizeof o);
  released_at = (uintptr_t)state;
  ++*o.released;
  free(o.buffer);
}

static void test_managed_new_inline(void) {
  int64_t shape[2] = {2, 3}, strides[2] = {3, 1}, reversed[1] = {-1}, count = 0;
  int released = 0;
  struct inline_owner owner;
  DLManagedTensorVersioned* out = NULL;
  DLManagedTensorVersioned* untouched = (DLManagedTensorVersioned*)(uintptr_t)0x1;
  DLTensor d;
  owner.buffer = malloc(6 * sizeof(float));
  owner.length = 6;
  owner.released = &released;
  d = make_tensor(owner.buffer, 2, shape, NULL, dtype(kDLFloat, 32, 1));

  CHECK(sizeof owner <= DLPM_INLINE_OWNER_CAPACITY);
  CHECK_STATUS(dlpm_managed_new_inline(&d, 'C', DLPACK_FLAG_BITMASK_READ_ONLY, 6 * sizeof(float), release_inline_owner, &owner,
                                       sizeof owner, &out),
               DLPM_OK);
  CHECK(out != NULL);
  if (out == NULL) return;
  memset(&owner, 0, sizeof owner); /* the tensor holds its own copy of the owner */
  shape[0] = 99;                   /* and of the shape; NULL strides became explicit */
  CHECK(out->dl_tensor.shape[0] == 2 && out->dl_tensor.strides[0] == 3 && out->dl_tensor.strides[1] == 1);
  CHECK(out->flags == DLPACK_FLAG_BITMASK_READ_ONLY && out->version.major == DLPACK_MAJOR_VERSION);
  CHECK_STATUS(dlpm_numel(&out->dl_tensor, &count), DLPM_OK);
  CHECK(count == 6 && released == 0);
  {
    /* The copy lives inside the allocation, after the struct, aligned as promised. */
    const uintptr_t block = (uintptr_t)out->manager_ctx;
    dlpm_managed_delete(out);
    CHECK(released == 1);
    CHECK(released_at > block && released_at < block + 256);
    CHECK(released_at % DLPM_INLINE_OWNER_ALIGNMENT == 0);
  }
  shape[0] = 2;

  /* Owner state the tensor cannot hold, or that is not there: refused first. */
  out = untouched;
  CHECK_STATUS(dlpm_managed_new_inline(&d, 'C', 0, 24, release_inline_owner, &owner, DLPM_INLINE_OWNER_CAPACITY + 1, &out),
               DLPM_E_INVALID_ARGUMENT);
  CHECK(strcmp(dlpm_last_error(), "dlpm_managed_new_inline: owner_state_size = 33 is more than DLPM_INLINE_OWNER_CAPACITY (32)") == 0);
  CHECK_STATUS(dlpm_managed_new_inline(&d, 'C', 0, 24, release_inline_owner, NULL, sizeof owner, &out), DLPM_E_NULL_POINTER);
  CHECK(strstr(dlpm_last_error(), "owner_state") != NULL);
  CHECK(out == untouched && released == 1);

  /* A layout outside the buffer: refused after validation, release not called, out
   * untouched. A 2x3 float tensor is 24 bytes. */
  owner.buffer = malloc(6 * sizeof(float));
  owner.released = &released;
  d.data = owner.buffer;
  out = untouched;
  CHECK_STATUS(dlpm_managed_new_inline(&d, 'C', 0, 23, release_inline_owner, &owner, sizeof owner, &out),
               DLPM_E_INVALID_ARGUMENT);
  CHECK(strcmp(dlpm_last_error(),
               "dlpm_managed_new_inline: the elements occupy bytes [0, 24) from data, outside the 23-byte buffer") == 0);
  CHECK(out == untouched && released == 1);
  d.byte_offset = 4; /* one element in: [4, 28) */
  CHECK_STATUS(dlpm_managed_new_inline(&d, 'C', 0, 24, release_inline_owner, &owner, sizeof owner, &out),
               DLPM_E_INVALID_ARGUMENT);
  CHECK_STATUS(dlpm_managed_new_inline(&d, 'C', 0, 28, release_inline_owner, &owner, sizeof owner, &out), DLPM_OK);
  if (out != untouched) dlpm_managed_delete(out);
  CHECK(released == 2);
  d.byte_offset = 0;

  /* Negative strides reach below data: outside any buffer that starts there, fine when
   * the size is unknown. */
  owner.buffer = malloc(4 * sizeof(float));
  d.data = owner.buffer;
  d.ndim = 1;
  d.shape = shape;
  d.strides = reversed;
  out = untouched;
  CHECK_STATUS(dlpm_managed_new_inline(&d, 0, 0, 1000, release_inline_owner, &owner, sizeof owner, &out),
               DLPM_E_INVALID_ARGUMENT);
  CHECK(out == untouched && released == 2);
  d.byte_offset = 4; /* elements [1, 0]: bytes [0, 8) */
  CHECK_STATUS(dlpm_managed_new_inline(&d, 0, 0, 8, release_inline_owner, &owner, sizeof owner, &out), DLPM_OK);
  if (out != untouched) dlpm_managed_delete(out);
  CHECK(released == 3);
  owner.buffer = NULL; /* free(NULL) from here on */
  d.byte_offset = 0;
  out = NULL;
  CHECK_STATUS(dlpm_managed_new_inline(&d, 0, 0, DLPM_BUFFER_SIZE_UNKNOWN, release_inline_owner, &owner, sizeof owner, &out),
               DLPM_OK);
  dlpm_managed_delete(out);
  CHECK(released == 4);
  /* An empty tensor reaches nothing: any buffer holds it. */
  shape[0] = 0;
  out = NULL;
  CHECK_STATUS(dlpm_managed_new_inline(&d, 0, 0, 0, release_inline_owner, &owner, sizeof owner, &out), DLPM_OK);
  dlpm_managed_delete(out);
  CHECK(released == 5);
  shape[0] = 2;

  /* dlpm_managed_new_ordered's rules, and its order of checks: the order before the
   * description, the description before the buffer. */
  d = make_tensor(NULL, 2, shape, NULL, dtype(kDLFloat, 32, 1));
  out = untouched;
  CHECK_STATUS(dlpm_managed_new_inline(&d, 0, 0, 0, release_inline_owner, &owner, sizeof owner, &out),
               DLPM_E_INVALID_ARGUMENT); /* order 0 with NULL strides */
  CHECK_STATUS(dlpm_managed_new_inline(&d, 'X', 0, 0, release_inline_owner, &owner, sizeof owner, &out),
               DLPM_E_INVALID_ARGUMENT);
  CHECK_STATUS(dlpm_managed_new_inline(&d, 'C', 0, 0, release_inline_owner, &owner, sizeof owner, &out),
               DLPM_E_NULL_DATA); /* validated before the (too small) buffer is looked at */
  d.strides = strides;
  strides[0] = 1;
  d.data = &count;
  CHECK_STATUS(dlpm_managed_new_inline(&d, 'C', 0, 0, release_inline_owner, &owner, sizeof owner, &out),
               DLPM_E_NON_COMPACT_STRIDES);
  strides[0] = 3;
  CHECK(out == untouched && released == 5);

  /* The arguments. */
  CHECK_STATUS(dlpm_managed_new_inline(NULL, 'C', 0, 0, release_inline_owner, &owner, sizeof owner, &out),
               DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_managed_new_inline(&d, 'C', 0, 0, release_inline_owner, &owner, sizeof owner, NULL),
               DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_managed_new_inline(&d, 'C', 0, 0, release_inline_owner, NULL, sizeof owner, &out), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_managed_new_inline(&d, 'C', 0, DLPM_BUFFER_SIZE_UNKNOWN, release_inline_owner, &owner,
                                       DLPM_INLINE_OWNER_CAPACITY + 1, &out),
               DLPM_E_INVALID_ARGUMENT);
  CHECK(out == untouched && released == 5);
  /* No owner state and no release: a plain wrap. */
  CHECK_STATUS(dlpm_managed_new_inline(&d, 'C', 0, DLPM_BUFFER_SIZE_UNKNOWN, NULL, NULL, 0, &out), DLPM_OK);
  if (out != untouched) dlpm_managed_delete(out);
  CHECK(released == 5);
}

static void test_legacy_delete(void) {
  DLManagedTensor* legacy = (DLManagedTensor*)calloc(1, sizeof *legacy);
  DLManagedTensor no_deleter;
  deleter_calls = 0;
  legacy->deleter = counting_legacy_deleter;
  dlpm_legacy_delete(legacy);
  CHECK(deleter_calls == 1);
  memset(&no_deleter, 0, sizeof no_deleter);
  dlpm_legacy_delete(&no_deleter); /* a NULL deleter: nothing to call */
  dlpm_legacy_delete(NULL);
  CHECK(deleter_calls == 1);
}

static void test_alloc_and_copy_to_host(void) {
  static float data[12];
  int64_t shape[2] = {3, 4}, strides[2] = {1, 3}, bad[2] = {3, -4};
  DLManagedTensorVersioned *source = NULL, *copy = NULL, *fresh = NULL;
  const float* out;
  int i, j, ok = 1;
  for (i = 0; i < 12; ++i) data[i] = (float)i;
  /* A column-major, READ_ONLY source. */
  CHECK_STATUS(dlpm_managed_new(data, 2, shape, strides, dtype(kDLFloat, 32, 1), host_device(), 0, DLPACK_FLAG_BITMASK_READ_ONLY,
                                NULL, NULL, &source),
               DLPM_OK);
  CHECK_STATUS(dlpm_managed_copy_to_host(source, &copy), DLPM_OK);
  CHECK(copy != NULL && copy->dl_tensor.data != data);
  CHECK(copy->flags == DLPACK_FLAG_BITMASK_IS_COPIED);
  CHECK(copy->dl_tensor.strides[0] == 4 && copy->dl_tensor.strides[1] == 1);
  CHECK(((uintptr_t)copy->dl_tensor.data) % 64 == 0);
  out = (const float*)copy->dl_tensor.data;
  for (i = 0; i < 3; ++i)
    for (j = 0; j < 4; ++j) ok &= out[i * 4 + j] == data[i + 3 * j];
  CHECK(ok);
  dlpm_managed_delete(copy);
  source->dl_tensor.device.device_type = kDLCUDA;
  copy = NULL;
  CHECK_STATUS(dlpm_managed_copy_to_host(source, &copy), DLPM_E_DEVICE_MISMATCH);
  CHECK(copy == NULL);
  dlpm_managed_delete(source);
  CHECK_STATUS(dlpm_managed_copy_to_host(NULL, &copy), DLPM_E_NULL_POINTER);

  CHECK_STATUS(dlpm_managed_alloc_host(2, shape, dtype(kDLInt, 16, 1), 0, &fresh), DLPM_OK);
  CHECK(fresh != NULL && fresh->dl_tensor.device.device_type == kDLCPU && fresh->flags == 0);
  CHECK(fresh->dl_tensor.strides[0] == 4 && fresh->dl_tensor.strides[1] == 1);
  memset(fresh->dl_tensor.data, 0xff, 3 * 4 * 2); /* all of it is ours to write */
  dlpm_managed_delete(fresh);
  fresh = NULL;
  CHECK_STATUS(dlpm_managed_alloc_host(2, bad, dtype(kDLInt, 16, 1), 0, &fresh), DLPM_E_NEGATIVE_EXTENT);
  CHECK(fresh == NULL);
  CHECK_STATUS(dlpm_managed_alloc_host(2, shape, dtype(kDLInt, 16, 1), 0, NULL), DLPM_E_NULL_POINTER);
}

/* The int32_t flags of dlpm_requirements (check_dtype, writable) are true when nonzero, any
 * nonzero value, in every check that reads them: with and without a layout field set (the
 * facade reads the struct in place, with the layout's spans or without), the silent and
 * the worded answer, and dlpm_check_announced. */
static void test_requirement_flags_nonzero(void) {
  float data[6] = {0};
  int64_t shape[2] = {2, 3};
  int32_t order[2] = {0, 1};
  DLTensor t = make_tensor(data, 2, shape, NULL, dtype(kDLFloat, 32, 1));
  DLManagedTensorVersioned* m = NULL;
  const DLDevice cpu = {kDLCPU, 0};
  dlpm_requirements req;
  int with_layout;
  CHECK_STATUS(dlpm_managed_new(data, 2, shape, NULL, dtype(kDLFloat, 32, 1), cpu, 0, DLPACK_FLAG_BITMASK_READ_ONLY,
                                NULL, NULL, &m),
               DLPM_OK);
  if (m == NULL) return;
  for (with_layout = 0; with_layout < 2; ++with_layout) {
    CHECK_STATUS(dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION), DLPM_OK);
    if (with_layout) req.layout.stride_order = order; /* row-major: dimension 1 steps least */
    req.dtype = dtype(kDLInt, 32, 1);
    CHECK_STATUS(dlpm_check(&t, &req), DLPM_OK); /* check_dtype 0: the dtype is not asked */
    req.check_dtype = -7;
    CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_DTYPE_MISMATCH);
    CHECK(strstr(dlpm_last_error(), "dtype") != NULL);
    CHECK_STATUS(dlpm_check_announced(t.dtype, cpu, &req), DLPM_E_DTYPE_MISMATCH);
    req.check_dtype = 256; /* no low byte set */
    CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_DTYPE_MISMATCH);
    req.dtype = dtype(kDLFloat, 32, 1);
    CHECK_STATUS(dlpm_check(&t, &req), DLPM_OK);
    CHECK_STATUS(dlpm_check_managed(m, &req), DLPM_OK); /* writable 0: READ_ONLY is not asked */
    req.writable = INT32_MIN;
    CHECK_STATUS(dlpm_check_managed(m, &req), DLPM_E_READ_ONLY);
    CHECK(strstr(dlpm_last_error(), "READ_ONLY") != NULL);
    req.writable = 512;
    CHECK_STATUS(dlpm_check_managed(m, &req), DLPM_E_READ_ONLY);
    CHECK_STATUS(dlpm_check(&t, &req), DLPM_OK); /* a bare tensor has no flags */
  }
  dlpm_managed_delete(m);
}

/* dlpm_check_announced: only the dtype and device rules, worded as dlpm_check words them. */
static void test_check_announced(void) {
  static const int32_t cuda_only[1] = {kDLCUDA};
  const DLDataType f32 = dtype(kDLFloat, 32, 1), i32 = dtype(kDLInt, 32, 1);
  const DLDevice cpu = {kDLCPU, 0}, cuda1 = {kDLCUDA, 1};
  dlpm_requirements req;
  dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
  req.ndim = 3; /* not an announced fact: never judged here */
  CHECK_STATUS(dlpm_check_announced(f32, cpu, &req), DLPM_OK);
  /* an ill-formed announcement cannot be judged, required dtype or not */
  CHECK_STATUS(dlpm_check_announced(dtype(kDLInt, 7, 1), cpu, &req), DLPM_E_INVALID_DTYPE);
  CHECK_STATUS(dlpm_check_announced(dtype(200, 8, 1), cpu, &req), DLPM_E_INVALID_DTYPE);
  CHECK_STATUS(dlpm_check_announced(dtype(kDLFloat, 32, 0), cpu, &req), DLPM_E_INVALID_DTYPE);
  req.check_dtype = 1;
  req.dtype = i32;
  CHECK_STATUS(dlpm_check_announced(f32, cpu, &req), DLPM_E_DTYPE_MISMATCH);
  CHECK_STATUS(dlpm_check_announced(i32, cpu, &req), DLPM_OK);
  CHECK_STATUS(dlpm_check_announced(dtype(kDLFloat, 32, 0), cpu, &req), DLPM_E_INVALID_DTYPE);
  req.device_types = cuda_only;
  req.num_device_types = 1;
  CHECK_STATUS(dlpm_check_announced(i32, cpu, &req), DLPM_E_DEVICE_MISMATCH);
  CHECK_STATUS(dlpm_check_announced(i32, cuda1, &req), DLPM_OK);
  req.device_id = 0;
  CHECK_STATUS(dlpm_check_announced(i32, cuda1, &req), DLPM_E_DEVICE_ID_MISMATCH);
  CHECK_STATUS(dlpm_check_announced(i32, cuda1, NULL), DLPM_E_NULL_POINTER);
  req.version = 0;
  CHECK_STATUS(dlpm_check_announced(i32, cuda1, &req), DLPM_E_UNSUPPORTED_VERSION);
}

/* An order outside ASCII names the same byte on every platform: plain char is signed on
 * x86-64 and unsigned on AArch64, and a message that printed it as a char promoted to int
 * read -61 on one and 195 on the other. */
static void test_order_byte_is_platform_independent(void) {
  float data[6];
  int64_t shape[2] = {2, 3}, strides[2] = {3, 1};
  DLTensor t = make_tensor(data, 2, shape, strides, dtype(kDLFloat, 32, 1));
  const char high = (char)0xC3;
  int32_t yes = -7;
  dlpm_requirements req;
  DLManagedTensorVersioned* out = NULL;
  DLDevice cpu;
  cpu.device_type = kDLCPU;
  cpu.device_id = 0;

  CHECK_STATUS(dlpm_is_contiguous(&t, high, &yes), DLPM_E_INVALID_ARGUMENT);
  CHECK(strcmp(dlpm_last_error(), "dlpm_is_contiguous: order must be 'C', 'F' or 'A', not 195") == 0);
  CHECK(yes == -7);
  CHECK_STATUS(dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION), DLPM_OK);
  req.order = high;
  CHECK_STATUS(dlpm_check(&t, &req), DLPM_E_INVALID_ARGUMENT);
  CHECK(strstr(dlpm_last_error(), "order 195 is not one of") != NULL);
  CHECK_STATUS(dlpm_managed_new_ordered(data, 2, shape, NULL, high, dtype(kDLFloat, 32, 1), cpu, 0, 0, NULL, NULL, &out),
               DLPM_E_INVALID_ARGUMENT);
  CHECK(strstr(dlpm_last_error(), "order 195 is not one of") != NULL);
  CHECK(out == NULL);
}

static void test_every_status_is_named(void) {
  dlpm_status s;
  for (s = 0; s <= DLPM_E_PRODUCER_FAILED; ++s) CHECK(strcmp(dlpm_status_string(s), "unknown status") != 0);
  CHECK(strcmp(dlpm_status_string(DLPM_E_PRODUCER_FAILED + 1), "unknown status") == 0);
  CHECK(strcmp(dlpm_status_string(DLPM_E_SHAPE_MISMATCH), "shape mismatch") == 0);
  CHECK(strcmp(dlpm_status_string(DLPM_E_MISALIGNED_METADATA), "shape or strides misaligned") == 0);
}

/* dlpm_element_offset_prechecked: flags without the padding bit answer as flags 0; padded
 * sub-byte elements are addressed by their padded size, which the packed dtype cannot be. */
static void test_element_offset_prechecked(void) {
  int64_t shape[2] = {3, 2}, strides[2] = {1, 3}, index[2] = {0, 0}, a = -7, b = -7, count = 0, resolved[2];
  uint8_t bytes[16] = {0};
  DLTensor t;
  dlpm_requirements req;
  memset(&t, 0, sizeof t);
  t.data = bytes;
  t.device.device_type = kDLCPU;
  t.ndim = 2;
  t.dtype = dtype(kDLInt, 16, 1);
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = 2;
  CHECK_STATUS(dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION), DLPM_OK);
  CHECK_STATUS(dlpm_check_layout(&t, DLPACK_FLAG_BITMASK_READ_ONLY, &req, resolved, 2, &count), DLPM_OK);
  for (index[0] = -1; index[0] <= shape[0]; ++index[0]) {
    for (index[1] = -1; index[1] <= shape[1]; ++index[1]) {
      const dlpm_status validated = dlpm_element_offset_prechecked(&t, 0, index, &a);
      CHECK_STATUS(dlpm_element_offset_prechecked(&t, DLPACK_FLAG_BITMASK_READ_ONLY, index, &b), validated);
      if (validated == DLPM_OK) CHECK(a == b && b == 2 + (index[0] + 3 * index[1]) * 2);
      a = b = -7;
    }
  }
  /* int4 stored one per byte: element (2, 1) is byte 1 + 2 + 3 = 6. */
  t.dtype = dtype(kDLInt, 4, 1);
  t.byte_offset = 1;
  CHECK_STATUS(dlpm_check_layout(&t, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, &req, resolved, 2, &count), DLPM_OK);
  index[0] = 2;
  index[1] = 1;
  CHECK_STATUS(dlpm_element_offset_prechecked(&t, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, index, &b), DLPM_OK);
  CHECK(b == 6);
  CHECK_STATUS(dlpm_element_offset_prechecked(&t, 0, index, &b), DLPM_E_SUBBYTE_NOT_VIEWABLE);
  index[0] = 3;
  CHECK_STATUS(dlpm_element_offset_prechecked(&t, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, index, &b), DLPM_E_INVALID_ARGUMENT);
  CHECK_STATUS(dlpm_element_offset_prechecked(NULL, 0, index, &b), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_element_offset_prechecked(&t, 0, NULL, &b), DLPM_E_NULL_POINTER);
  CHECK_STATUS(dlpm_element_offset_prechecked(&t, 0, index, NULL), DLPM_E_NULL_POINTER);
}

/* A 2-d kDLBool tensor on the CPU over `bytes`. */
static DLTensor bool_tensor(unsigned char* bytes, int64_t* shape, int64_t* strides) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = bytes;
  t.device.device_type = kDLCPU;
  t.ndim = 2;
  t.dtype.code = kDLBool;
  t.dtype.bits = 8;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = strides;
  return t;
}

/* dlpm_check_bool_values: the core's check_bool_values, a status and its message. */
static void test_check_bool_values(void) {
  unsigned char bytes[6] = {1, 0, 1, 1, 0, 2};
  int64_t shape[2] = {2, 3}, strides[2] = {3, 1};
  DLTensor t = bool_tensor(bytes, shape, strides);
  CHECK_STATUS(dlpm_check_bool_values(&t, 0), DLPM_E_INVALID_ARGUMENT);
  CHECK(strstr(dlpm_last_error(), "holds the byte 2 at byte offset 5 from data") != NULL);
  shape[1] = 2; /* a[:, :2] does not reach byte 5 */
  CHECK_STATUS(dlpm_check_bool_values(&t, 0), DLPM_OK);
  strides[0] = 0; /* a broadcast row */
  shape[0] = 1000000;
  CHECK_STATUS(dlpm_check_bool_values(&t, 0), DLPM_OK);
  t.device.device_type = kDLCUDA; /* refused before a byte is read (a read crashed) */
  t.data = (void*)(uintptr_t)0x7f0000000000ULL;
  CHECK_STATUS(dlpm_check_bool_values(&t, 0), DLPM_E_DEVICE_MISMATCH);
  t.device.device_type = kDLCPU;
  t.data = bytes;
  t.dtype.code = kDLUInt;
  CHECK_STATUS(dlpm_check_bool_values(&t, 0), DLPM_E_DTYPE_MISMATCH);
  CHECK_STATUS(dlpm_check_bool_values(NULL, 0), DLPM_E_NULL_POINTER);
}

/* dlpm_check_bool_values_prechecked: dlpm_check_bool_values' answers, read from the checked
 * form when the tensor is what it was made of, else from a full check. */
static void test_check_bool_values_prechecked(void) {
  unsigned char bytes[6] = {1, 0, 1, 1, 0, 2};
  int64_t shape[2] = {2, 3}, strides[2] = {3, 1}, narrow[2] = {2, 2};
  dlpm_checked_tensor checked;
  DLTensor t = bool_tensor(bytes, shape, strides), copy;
  memset(&checked, 0, sizeof checked);
  checked.version = DLPM_CHECKED_TENSOR_VERSION;
  CHECK_STATUS(dlpm_check_tensor(&t, 0, NULL, 1, &checked), DLPM_OK);
  /* the struct checked, and a copy of it (a borrow's): the byte 2 is reached */
  CHECK_STATUS(dlpm_check_bool_values_prechecked(&t, 0, &checked), DLPM_E_INVALID_ARGUMENT);
  CHECK(strstr(dlpm_last_error(), "holds the byte 2 at byte offset 5 from data") != NULL);
  copy = t;
  CHECK_STATUS(dlpm_check_bool_values_prechecked(&copy, 0, &checked), DLPM_E_INVALID_ARGUMENT);
  /* another description (a[:, :2], which does not reach byte 5) is checked in full, not read
   * through the form of the whole */
  copy.shape = narrow;
  CHECK_STATUS(dlpm_check_bool_values_prechecked(&copy, 0, &checked), DLPM_OK);
  /* a form of a[:, :2] read for a[:, :2]: valid */
  checked.version = DLPM_CHECKED_TENSOR_VERSION;
  CHECK_STATUS(dlpm_check_tensor(&copy, 0, NULL, 1, &checked), DLPM_OK);
  CHECK_STATUS(dlpm_check_bool_values_prechecked(&copy, 0, &checked), DLPM_OK);
  /* no form: the full check */
  CHECK_STATUS(dlpm_check_bool_values_prechecked(&t, 0, NULL), DLPM_E_INVALID_ARGUMENT);
  CHECK_STATUS(dlpm_check_bool_values_prechecked(&copy, 0, NULL), DLPM_OK);
  CHECK_STATUS(dlpm_check_bool_values_prechecked(NULL, 0, &checked), DLPM_E_NULL_POINTER);
  checked.version = DLPM_CHECKED_TENSOR_VERSION + 1;
  CHECK_STATUS(dlpm_check_bool_values_prechecked(&copy, 0, &checked), DLPM_E_UNSUPPORTED_VERSION);
  /* a form of another dtype's tensor is no form of this one: refused as the full check refuses it */
  t.dtype.code = kDLUInt;
  checked.version = DLPM_CHECKED_TENSOR_VERSION;
  CHECK_STATUS(dlpm_check_tensor(&t, 0, NULL, 1, &checked), DLPM_OK);
  CHECK_STATUS(dlpm_check_bool_values_prechecked(&t, 0, &checked), DLPM_E_DTYPE_MISMATCH);
}

int main(void) {
  test_cute_layout_vocabulary();
  test_status_and_version();
  test_dtype_name();
  test_dtype_from_name();
  test_validate_and_inspect();
  test_malformed();
  test_requirements();
  test_managed_new_and_delete();
  test_managed_new_ordered();
  test_managed_new_from();
  test_version_and_legacy();
  test_check_announced();
  test_requirement_flags_nonzero();
  test_extremes();
  test_requirements_are_checked();
  test_to_legacy_checks_the_version();
  test_every_status_is_named();
  test_binding_queries();
  test_check_layout();
  test_managed_new_inline();
  test_legacy_delete();
  test_alloc_and_copy_to_host();
  test_order_byte_is_platform_independent();
  test_element_offset_prechecked();
  test_check_bool_values();
  test_check_bool_values_prechecked();
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && passed > 0 ? 0 : 1;
}
