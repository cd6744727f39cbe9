// The C facade: each function converts its arguments, calls the C++ core, and turns the
// outcome into a dlpm_status plus a thread-local message. No logic of its own.
#include <dlpack_mdspan.h>

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <cstdint>
#include <new>

namespace dm = dlpack_mdspan;

namespace {

thread_local dm::error last_error;

dlpm_status fail(const dm::error& e) noexcept {
  last_error = e;
  return static_cast<dlpm_status>(e.code());
}

dlpm_status null_argument(const char* function, const char* argument) noexcept {
  return fail(dm::error::format(dm::errc::null_pointer, "%s: %s is NULL", function, argument));
}

// Runs `body` (returning dlpm_status) so that no exception escapes into C.
template <class Body>
dlpm_status guarded(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(dm::error::format(dm::errc::out_of_memory, "%s: out of memory", function));
  } catch (...) {
    last_error = dm::error::format(dm::errc::invalid_argument, "%s: unexpected C++ exception", function);
    return DLPM_E_INTERNAL;
  }
}

dm::tensor_requirements to_core(const dlpm_requirements& r) noexcept {
  dm::tensor_requirements c;
  c.any_dtype = r.check_dtype == 0;
  c.dtype = r.dtype;
  c.ndim = r.ndim;
  c.shape = r.shape;
  c.order = r.order;
  c.device_types = r.device_types;
  c.num_device_types = r.num_device_types;
  c.device_id = r.device_id;
  c.min_alignment = r.min_alignment;
  c.writable = r.writable != 0;
  c.null_strides = r.strict_strides != 0 ? dm::null_strides_policy::reject : dm::null_strides_policy::row_major;
  return c;
}

// Owner of a dlpm_managed_new buffer: calls the caller's release exactly once.
class c_release_owner {
 public:
  c_release_owner(dlpm_release_fn release, void* ctx) noexcept : release_(release), ctx_(ctx) {}
  c_release_owner(c_release_owner&& other) noexcept : release_(other.release_), ctx_(other.ctx_) { other.release_ = nullptr; }
  c_release_owner& operator=(c_release_owner&&) = delete;
  ~c_release_owner() {
    if (release_ != nullptr) release_(ctx_);
  }
  void disarm() noexcept { release_ = nullptr; }

 private:
  dlpm_release_fn release_;
  void* ctx_;
};

dlpm_status from_legacy(DLManagedTensor* legacy, dm::legacy_access access, DLManagedTensorVersioned** out) {
  if (legacy == nullptr) return null_argument("dlpm_from_legacy", "legacy");
  if (out == nullptr) {
    // Ownership was passed in, so even this failure releases the tensor.
    if (legacy->deleter != nullptr) legacy->deleter(legacy);
    return null_argument("dlpm_from_legacy", "out");
  }
  auto wrapped = dm::legacy_to_versioned(legacy, access);
  if (!wrapped) return fail(wrapped.error());
  *out = *wrapped;
  return DLPM_OK;
}

}  // namespace

// The status values are the core's errc values; keep them in lock step.
static_assert(DLPM_E_NULL_POINTER == static_cast<int>(dm::errc::null_pointer));
static_assert(DLPM_E_SHAPE_MISMATCH == static_cast<int>(dm::errc::static_extent_mismatch));
static_assert(DLPM_E_SUBBYTE_NOT_VIEWABLE == static_cast<int>(dm::errc::subbyte_not_viewable));
static_assert(DLPM_E_READ_ONLY == static_cast<int>(dm::errc::read_only));
static_assert(DLPM_E_VERSION_MISMATCH == static_cast<int>(dm::errc::version_mismatch));
static_assert(DLPM_E_OUT_OF_MEMORY == static_cast<int>(dm::errc::out_of_memory));

extern "C" {

const char* dlpm_status_string(dlpm_status status) {
  if (status == DLPM_E_INTERNAL) return "internal error";
  if (status < 0 || status > DLPM_E_OUT_OF_MEMORY) return "unknown status";
  return dm::errc_name(static_cast<dm::errc>(status));
}

const char* dlpm_last_error(void) { return last_error.what(); }

dlpm_status dlpm_version(dlpm_version_info* out) {
  if (out == nullptr) return null_argument("dlpm_version", "out");
  *out = dlpm_version_info{dm::version_major, dm::version_minor, dm::version_patch, dm::dlpack_major_version,
                           dm::dlpack_minor_version};
  return DLPM_OK;
}

dlpm_status dlpm_validate(const DLTensor* tensor) {
  if (tensor == nullptr) return null_argument("dlpm_validate", "tensor");
  dm::error e;
  return dm::validate(*tensor, &e) ? DLPM_OK : fail(e);
}

dlpm_status dlpm_numel(const DLTensor* tensor, int64_t* out) {
  if (tensor == nullptr) return null_argument("dlpm_numel", "tensor");
  if (out == nullptr) return null_argument("dlpm_numel", "out");
  auto n = dm::numel(*tensor);
  if (!n) return fail(n.error());
  *out = *n;
  return DLPM_OK;
}

dlpm_status dlpm_nbytes(const DLTensor* tensor, int64_t* out) {
  if (tensor == nullptr) return null_argument("dlpm_nbytes", "tensor");
  if (out == nullptr) return null_argument("dlpm_nbytes", "out");
  auto n = dm::nbytes(*tensor);
  if (!n) return fail(n.error());
  *out = *n;
  return DLPM_OK;
}

dlpm_status dlpm_is_contiguous(const DLTensor* tensor, char order, int32_t* out) {
  if (tensor == nullptr) return null_argument("dlpm_is_contiguous", "tensor");
  if (out == nullptr) return null_argument("dlpm_is_contiguous", "out");
  dm::error e;
  if (!dm::validate(*tensor, &e)) return fail(e);
  switch (order) {
    case 'C': *out = dm::is_c_contiguous(*tensor); return DLPM_OK;
    case 'F': *out = dm::is_f_contiguous(*tensor); return DLPM_OK;
    case 'A': *out = dm::is_contiguous(*tensor); return DLPM_OK;
    default:
      return fail(dm::error::format(dm::errc::invalid_argument, "dlpm_is_contiguous: order must be 'C', 'F' or 'A', not %d",
                                    static_cast<int>(order)));
  }
}

dlpm_status dlpm_element_offset(const DLTensor* tensor, const int64_t* index, int64_t* out) {
  if (tensor == nullptr) return null_argument("dlpm_element_offset", "tensor");
  if (out == nullptr) return null_argument("dlpm_element_offset", "out");
  if (index == nullptr && tensor->ndim > 0) return null_argument("dlpm_element_offset", "index");
  dm::error e;
  std::int64_t offset = 0;
  if (!dm::validate(*tensor, &e) || !dm::element_byte_offset(*tensor, index, &offset, &e)) return fail(e);
  *out = offset;
  return DLPM_OK;
}

dlpm_status dlpm_requirements_init(dlpm_requirements* req) {
  if (req == nullptr) return null_argument("dlpm_requirements_init", "req");
  *req = dlpm_requirements{};
  req->ndim = -1;
  req->device_id = -1;
  return DLPM_OK;
}

dlpm_status dlpm_check(const DLTensor* tensor, const dlpm_requirements* req) {
  if (tensor == nullptr) return null_argument("dlpm_check", "tensor");
  if (req == nullptr) return null_argument("dlpm_check", "req");
  dm::error e;
  return dm::check_requirements(*tensor, 0, to_core(*req), &e) ? DLPM_OK : fail(e);
}

dlpm_status dlpm_check_managed(const DLManagedTensorVersioned* tensor, const dlpm_requirements* req) {
  if (tensor == nullptr) return null_argument("dlpm_check_managed", "tensor");
  if (req == nullptr) return null_argument("dlpm_check_managed", "req");
  dm::error e;
  return dm::check_requirements(tensor->dl_tensor, tensor->flags, to_core(*req), &e) ? DLPM_OK : fail(e);
}

dlpm_status dlpm_managed_new(void* data, int32_t ndim, const int64_t* shape, const int64_t* strides, DLDataType dtype,
                             DLDevice device, uint64_t byte_offset, uint64_t flags, dlpm_release_fn release, void* ctx,
                             DLManagedTensorVersioned** out) {
  if (out == nullptr) return null_argument("dlpm_managed_new", "out");
  return guarded("dlpm_managed_new", [&]() -> dlpm_status {
    DLTensor description{};
    description.data = data;
    description.device = device;
    description.ndim = ndim;
    description.dtype = dtype;
    description.shape = const_cast<int64_t*>(shape);
    description.strides = const_cast<int64_t*>(strides);
    description.byte_offset = byte_offset;
    c_release_owner owner(release, ctx);
    auto made = dm::try_make_managed_tensor(description, std::move(owner), flags);
    if (!made) {
      owner.disarm();  // not moved from on failure: the buffer stays the caller's
      return fail(made.error());
    }
    *out = made->release();
    return DLPM_OK;
  });
}

void dlpm_managed_delete(DLManagedTensorVersioned* tensor) {
  if (tensor != nullptr && tensor->deleter != nullptr) tensor->deleter(tensor);
}

dlpm_status dlpm_managed_check_version(DLManagedTensorVersioned* tensor) {
  if (tensor == nullptr) return null_argument("dlpm_managed_check_version", "tensor");
  auto adopted = dm::managed_tensor::try_adopt(tensor);
  if (!adopted) return fail(adopted.error());
  (void)adopted->release();  // valid: ownership stays with the caller
  return DLPM_OK;
}

dlpm_status dlpm_from_legacy(DLManagedTensor* legacy, DLManagedTensorVersioned** out) {
  return from_legacy(legacy, dm::legacy_access::read_only, out);
}

dlpm_status dlpm_from_legacy_writable(DLManagedTensor* legacy, DLManagedTensorVersioned** out) {
  return from_legacy(legacy, dm::legacy_access::writable, out);
}

dlpm_status dlpm_to_legacy(DLManagedTensorVersioned* tensor, DLManagedTensor** out) {
  if (tensor == nullptr) return null_argument("dlpm_to_legacy", "tensor");
  if (out == nullptr) return null_argument("dlpm_to_legacy", "out");
  auto wrapped = dm::versioned_to_legacy(tensor);
  if (!wrapped) return fail(wrapped.error());
  *out = *wrapped;
  return DLPM_OK;
}

}  // extern "C"
