// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runtime dtype dispatch: call a visitor with the correctly typed mdspan, chosen from a
// list of candidate element types by the tensor's dtype. The C++ answer to nanobind's
// runtime-specialised view<T, ndim>().
#ifndef DLPACK_MDSPAN_DISPATCH_HPP
#define DLPACK_MDSPAN_DISPATCH_HPP

#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/dtype.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/import.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>
#include <variant>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

template <class R>
using visit_value_t = std::conditional_t<std::is_void_v<R>, std::monostate, R>;

template <template <class> class View, class R, class Visitor, class T, class... Rest>
result<visit_value_t<R>> visit_first_match(const DLTensor& t, Visitor& visitor, const tensor_requirements& req,
                                           std::uint64_t flags, int tried) {
  if (same_dtype(t.dtype, dtype_v<T>)) {
    auto view = try_view<View<T>>(t, flags, req);
    if (!view) return unexpected_error(view.error());
    if constexpr (std::is_void_v<R>) {
      visitor(*view);
      return std::monostate{};
    } else {
      return visitor(*view);
    }
  }
  if constexpr (sizeof...(Rest) == 0) {
    return unexpected_error(error::format(errc::no_matching_type,
                                          "dtype %#x matches none of the %d candidate element types",
                                          packed_dtype(t.dtype), tried + 1));
  } else {
    return visit_first_match<View, R, Visitor, Rest...>(t, visitor, req, flags, tried + 1);
  }
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// Calls `visitor(View<T>)` for the first T in Ts whose dtype equals the tensor's, after
/// the full import validation (try_view: `flags` are the tensor's DLPack flags, READ_ONLY and
/// padded sub-byte storage; a managed_tensor's flags()). Returns the visitor's result (std::monostate for void), or
/// errc::no_matching_type when no candidate matches, or the import error of the match.
///
///   template <class T> using matrix = std::mdspan<T, std::dextents<std::int64_t, 2>, std::layout_stride>;
///   auto sum = try_visit_mdspan<matrix, float, double, std::int32_t>(tensor, [](auto m) { ... });
template <template <class> class View, class... Ts, class Visitor>
  requires(sizeof...(Ts) > 0)
[[nodiscard]] auto try_visit_mdspan(const DLTensor& tensor, Visitor&& visitor, const tensor_requirements& requirements = {},
                                    std::uint64_t flags = 0) {
  using R = std::common_type_t<std::invoke_result_t<Visitor&, View<Ts>>...>;
  return detail::visit_first_match<View, R, Visitor, Ts...>(tensor, visitor, requirements, flags, 0);
}

/// The throwing form of try_visit_mdspan.
template <template <class> class View, class... Ts, class Visitor>
  requires(sizeof...(Ts) > 0)
decltype(auto) visit_mdspan(const DLTensor& tensor, Visitor&& visitor, const tensor_requirements& requirements = {},
                            std::uint64_t flags = 0) {
  return detail::value_or_throw(try_visit_mdspan<View, Ts...>(tensor, std::forward<Visitor>(visitor), requirements, flags));
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
